/** The first backoff delay, doubled on each retry. */
const INITIAL_DELAY_MS = 500;
/** The longest backoff delay. */
const MAX_DELAY_MS = 8_000;
/** The longest server-requested delay honoured; longer ones fall back to backoff. */
const MAX_HONOURED_DELAY_MS = 60_000;

/**
 * How long to wait before retry number `retry` (1-based), as Lattice's own adapters wait:
 * `retry-after-ms` or `retry-after` (seconds or an HTTP date) when the failed response asked
 * for at most 60 s, else exponential backoff from 500 ms, doubled per retry, at most 8 s, minus
 * up to 25 % jitter.
 *
 * @param retry - 1 for the first retry.
 * @param headers - The failed response's headers (lower-case names), if the error had them.
 * @param random - A source of randomness in [0, 1), for tests.
 */
export function retryDelay(
  retry: number,
  headers: Readonly<Record<string, string | undefined>> | undefined,
  random: () => number = Math.random,
): number {
  const requested = headers === undefined ? undefined : requestedDelay(headers);
  if (requested !== undefined && requested >= 0 && requested <= MAX_HONOURED_DELAY_MS) {
    return requested;
  }
  const base = Math.min(INITIAL_DELAY_MS * 2 ** (retry - 1), MAX_DELAY_MS);
  return Math.round(base * (1 - random() * 0.25));
}

function requestedDelay(headers: Readonly<Record<string, string | undefined>>): number | undefined {
  const milliseconds = headers["retry-after-ms"];
  if (milliseconds !== undefined) {
    const value = Number.parseFloat(milliseconds);
    if (Number.isFinite(value)) return value;
  }
  const after = headers["retry-after"];
  if (after === undefined) return undefined;
  const seconds = Number.parseFloat(after);
  if (Number.isFinite(seconds)) return seconds * 1000;
  const date = Date.parse(after);
  return Number.isNaN(date) ? undefined : date - Date.now();
}
