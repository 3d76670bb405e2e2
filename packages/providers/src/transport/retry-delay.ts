/** The first backoff delay, doubled on each retry. */
const INITIAL_DELAY_MS = 500;
/** The longest backoff delay. */
const MAX_DELAY_MS = 8_000;
/** The longest server-requested delay the client honours; longer ones fall back to backoff. */
const MAX_HONOURED_DELAY_MS = 60_000;

/** Read access to response headers, as `Headers` offers it. */
export interface HeaderReader {
  get(name: string): string | null;
}

/**
 * How long to wait before retry number `retry` (1-based).
 *
 * Honours `retry-after-ms` (milliseconds) and `retry-after` (seconds or an HTTP date) when
 * they ask for at most 60 s; otherwise exponential backoff from 500 ms, doubled per retry, at
 * most 8 s, minus up to 25 % jitter.
 *
 * @param retry - 1 for the first retry.
 * @param headers - The failed response's headers, if any.
 * @param random - A source of randomness in [0, 1), for tests.
 */
export function retryDelay(
  retry: number,
  headers: HeaderReader | undefined,
  random: () => number = Math.random,
): number {
  const requested = headers === undefined ? undefined : requestedDelay(headers);
  if (requested !== undefined && requested >= 0 && requested <= MAX_HONOURED_DELAY_MS) {
    return requested;
  }
  const base = Math.min(INITIAL_DELAY_MS * 2 ** (retry - 1), MAX_DELAY_MS);
  return Math.round(base * (1 - random() * 0.25));
}

function requestedDelay(headers: HeaderReader): number | undefined {
  const milliseconds = headers.get("retry-after-ms");
  if (milliseconds !== null) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value)) return value;
  }
  const after = headers.get("retry-after");
  if (after === null) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : date - Date.now();
}

/**
 * Whether an HTTP status may succeed on retry: 408, 409, 429 and every 5xx (529 included).
 * Never 400, 401, 403, 404, 413 or other 4xx.
 *
 * @param status - The HTTP status.
 */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}
