import { LatticeError } from "@lattice/tools";

/** The codes of {@link SessionError}. */
export type SessionErrorCode =
  | "session_not_found"
  | "not_interrupted"
  | "session_log_version"
  | "session_log_invalid"
  | "session_store_failed"
  | "approval_missing"
  | "approval_unknown";

/**
 * A session cannot be used as asked: `resume()` of an unknown session (`"session_not_found"`)
 * or of one whose last run finished (`"not_interrupted"`), or a stored run log this release
 * cannot read: an entry of a newer schema version (`"session_log_version"`), or one that is not
 * a run log entry or breaks a rule of the log, such as a result for a call no reply made
 * (`"session_log_invalid"`, naming the entry's index and the rule, H24); or the store failed
 * to load the session or to append to it (`"session_store_failed"`, with the store's error as
 * `cause`); or a resume of an
 * interrupted run without a decision for every pending approval (`"approval_missing"`) or with
 * one for an id that is not pending (`"approval_unknown"`, also for an id already decided).
 */
export class SessionError extends LatticeError {
  /** The session concerned. */
  readonly sessionId: string;
  /** Which failure this is. */
  declare readonly code: SessionErrorCode;

  /**
   * @param code - Which failure this is.
   * @param sessionId - The session concerned.
   * @param message - What happened and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(code: SessionErrorCode, sessionId: string, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.sessionId = sessionId;
    this.name = "SessionError";
  }
}
