/**
 * The error a provider throws when its request's signal is aborted: the signal's reason when it
 * is already an error named `AbortError`, else a `DOMException` named `AbortError` carrying the
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
