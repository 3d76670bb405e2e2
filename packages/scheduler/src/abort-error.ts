import { LatticeError } from "@lattice/tools";

/**
 * The query was aborted through its AbortSignal (T22). Its `name` is `"AbortError"`, like the
 * platform's, so `error.name === "AbortError"` checks work for both. Code: `"aborted"`.
 */
export class AbortError extends LatticeError {
  /**
   * @param message - What was aborted and what happens next.
   * @param options - Standard `ErrorOptions`; `cause` holds the signal's reason.
   */
  constructor(message: string, options?: ErrorOptions) {
    super("aborted", message, options);
    this.name = "AbortError";
  }
}

/**
 * Creates the error a query rejects with when it was aborted (T22).
 *
 * @param reason - The signal's `reason`. A string or an Error with its own message is quoted
 *   in the message; the platform's default `DOMException` is not. It is kept as `cause`.
 * @returns An {@link AbortError} (`name: "AbortError"`, `code: "aborted"`).
 */
export function createAbortError(reason?: unknown): AbortError {
  let detail = "";
  if (typeof reason === "string" && reason !== "") detail = `: ${reason}`;
  else if (reason instanceof Error && reason.name !== "AbortError" && reason.message !== "") {
    detail = `: ${reason.message}`;
  }
  return new AbortError(
    `The query was aborted${detail}. Every tool handler that had started has settled; calls still waiting never started.`,
    reason !== undefined ? { cause: reason } : undefined,
  );
}
