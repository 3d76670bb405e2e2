import { abortError } from "@lattice/providers/internal";

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
