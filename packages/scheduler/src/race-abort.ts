import { createAbortError } from "./abort-error.js";

/**
 * Waits for `value` unless `signal` aborts first (T22): a hook, a policy or a mailbox the SDK
 * awaits must never keep an aborted query from ending. The abort listener is removed as soon
 * as `value` settles, so racing many promises against one long-lived signal leaks nothing.
 * A rejection of `value` that comes after the abort is swallowed (never unhandled).
 *
 * @param value - A promise (or a plain value, returned as is once awaited).
 * @param signal - The query's signal; `undefined` means it never aborts.
 * @returns What `value` resolves with, when it settles before the abort.
 * @throws An `AbortError` (`createAbortError(signal.reason)`) when `signal` is aborted
 *   already or aborts before `value` settles; `value`'s own rejection otherwise.
 */
export function raceAbort<T>(
  value: T | PromiseLike<T>,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal === undefined) return Promise.resolve(value);
  if (signal.aborted) {
    if (isThenable(value)) Promise.resolve(value).then(undefined, ignore);
    return Promise.reject(createAbortError(signal.reason));
  }
  if (!isThenable(value)) return Promise.resolve(value);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(createAbortError(signal.reason));
    signal.addEventListener("abort", onAbort, { once: true });
    Promise.resolve(value).then(
      (result) => {
        signal.removeEventListener("abort", onAbort);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}

/**
 * When a callback returned a promise or another thenable (an `async` listener), handles its
 * rejection with `onRejected`, so that it never becomes an unhandled rejection (H1); any other
 * returned value is ignored. Internal: the Lattice packages' one way of calling listeners.
 */
export function catchRejection(returned: unknown, onRejected: () => void): void {
  if (isThenable(returned)) Promise.resolve(returned).then(undefined, onRejected);
}

/** Whether `value` is a promise or another thenable. Internal. */
export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    value !== null &&
    (typeof value === "object" || typeof value === "function") &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

function ignore(): void {
  // The caller stopped waiting when the signal aborted; a late rejection means nothing.
}
