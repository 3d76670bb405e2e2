import { LatticeError } from "@lattice/tools";

/** The stable codes of {@link RedisSessionStoreError}. */
export type RedisSessionStoreErrorCode =
  | "redis_unreachable"
  | "redis_timeout"
  | "redis_command_failed"
  | "redis_not_a_session"
  | "redis_store_closed";

/**
 * A Redis session store could not reach Redis or use what it found there. The message names
 * the server (its URL, password redacted) and says what to do; `code` tells the cases apart:
 *
 * - `"redis_unreachable"`: the connection failed or was lost (Redis not running, a wrong host
 *   or port, a network problem). Start Redis, or check the URL.
 * - `"redis_timeout"`: Redis did not answer within the store's `timeoutMs`. An append that
 *   timed out may still have been applied: load the session to see.
 * - `"redis_command_failed"`: Redis answered with an error (authentication, out of memory, a
 *   read-only replica, ...); Redis's reply is in the message and in `cause`.
 * - `"redis_not_a_session"`: a session's key holds something this store did not write (a
 *   value of another type, or text that is not a JSON object): another application uses the
 *   same keys; choose another `keyPrefix`.
 * - `"redis_store_closed"`: the store was used after `close()`.
 *
 * A compare-and-append that loses a race is not one of these: it rejects with
 * `SessionConflictError` (code `"session_conflict"`) of `@lattice/core`.
 */
export class RedisSessionStoreError extends LatticeError {
  /** The Redis server, as a URL with its password redacted (`redis://:***@host:6379`). */
  readonly url: string;

  /**
   * @param code - Which failure, see {@link RedisSessionStoreErrorCode}.
   * @param url - The server, password redacted.
   * @param message - What happened, to which server, and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }` (ioredis's own error).
   */
  constructor(
    code: RedisSessionStoreErrorCode,
    url: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options);
    this.url = url;
    this.name = "RedisSessionStoreError";
  }
}
