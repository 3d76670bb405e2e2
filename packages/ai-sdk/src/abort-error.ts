/**
 * The error the bridge throws when the request's signal aborts: the signal's reason when it is
 * already an error named `AbortError`, else a `DOMException` named `AbortError` carrying the
 * reason as `cause`.
 *
 * @param signal - The aborted signal.
 */
export function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  const error = new DOMException("The model request was aborted.", "AbortError");
  if (reason !== undefined) Object.defineProperty(error, "cause", { value: reason });
  return error;
}

/**
 * Waits `ms` milliseconds, or rejects with {@link abortError} as soon as `signal` aborts.
 *
 * @param ms - How long to wait.
 * @param signal - The request's signal, if any.
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
