import { LatticeError } from "@lattice/tools";

/** The stable codes of {@link SqliteSessionStoreError}. */
export type SqliteSessionStoreErrorCode =
  | "sqlite_folder_missing"
  | "sqlite_not_a_database"
  | "sqlite_not_a_session_database"
  | "sqlite_schema_too_new"
  | "sqlite_open_failed"
  | "sqlite_busy"
  | "sqlite_store_closed";

/**
 * A SQLite session store could not open or use its database file. The message names the file
 * and says what to do; `code` tells the cases apart:
 *
 * - `"sqlite_folder_missing"`: the file's folder does not exist (create it first).
 * - `"sqlite_not_a_database"`: the file is not a SQLite database.
 * - `"sqlite_not_a_session_database"`: a SQLite database with other tables and no Lattice
 *   metadata; the store never writes into it.
 * - `"sqlite_schema_too_new"`: written by a newer `@lattice/store-sqlite` (upgrade it).
 * - `"sqlite_open_failed"`: SQLite refused to open the file (permissions, a folder, ...).
 * - `"sqlite_busy"`: another connection held the database locked longer than the busy
 *   timeout.
 * - `"sqlite_store_closed"`: the store was used after `close()`.
 */
export class SqliteSessionStoreError extends LatticeError {
  /** The database file, as an absolute path (or `":memory:"`). */
  readonly path: string;

  /**
   * @param code - Which failure, see {@link SqliteSessionStoreErrorCode}.
   * @param path - The database file.
   * @param message - What happened, to which file, and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }` (SQLite's own error).
   */
  constructor(
    code: SqliteSessionStoreErrorCode,
    path: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options);
    this.path = path;
    this.name = "SqliteSessionStoreError";
  }
}
