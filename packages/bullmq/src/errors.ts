import { LatticeError } from "@lattice/tools";

/** The stable codes of {@link RunQueueError}. */
export type RunQueueErrorCode =
  | "redis_unreachable"
  | "unknown_agent"
  | "session_busy"
  | "run_not_found"
  | "run_exists"
  | "run_failed"
  | "run_aborted"
  | "result_timeout"
  | "resume_refused"
  | "fence_behind"
  | "closed";

/**
 * A queue or worker operation failed: Redis could not be reached, a run is unknown, failed or
 * was aborted, or a resume was refused. `code` says which; the message says what to do.
 */
export class RunQueueError extends LatticeError {
  /** The run concerned, when there is one. */
  readonly runId: string | undefined;

  /**
   * @param code - What failed.
   * @param message - What happened, to what, and what to do next.
   * @param runId - The run concerned, if any.
   * @param options - `cause`, the underlying error.
   */
  constructor(
    code: RunQueueErrorCode,
    message: string,
    runId?: string,
    options?: { readonly cause?: unknown },
  ) {
    super(code, message, options);
    this.runId = runId;
    // An aborted run rejects like an aborted in-process query: with an error named AbortError.
    this.name = code === "run_aborted" ? "AbortError" : "RunQueueError";
  }
}
