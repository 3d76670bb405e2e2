import { LatticeError } from "@lattice/tools";
import { sqlStateOf } from "./postgres-errors.js";

/** The stable codes of {@link PostgresSessionStoreError}. */
export type PostgresSessionStoreErrorCode =
  | "postgres_schema_missing"
  | "postgres_not_a_session_table"
  | "postgres_connection_failed"
  | "postgres_query_failed"
  | "postgres_store_closed";

/**
 * A Postgres session store could not use its server or its table. The message names the server
 * (host, port and database; never a password) or the table, and says what to do; `code` tells
 * the cases apart:
 *
 * - `"postgres_schema_missing"`: the table (or its schema) does not exist: run
 *   `await store.migrate()` once before using the store.
 * - `"postgres_not_a_session_table"`: `migrate()` found a table of that name without the
 *   session columns (another application's table); the store never writes into it.
 * - `"postgres_connection_failed"`: the store could not connect or log in (server down or
 *   unreachable, connection timeout, wrong password, unknown database), or the connection broke.
 * - `"postgres_query_failed"`: the server refused a statement for another reason (permissions,
 *   disk full, ...); `sqlState` holds its SQLSTATE.
 * - `"postgres_store_closed"`: the store was used after `close()`.
 */
export class PostgresSessionStoreError extends LatticeError {
  /** The session table, as the store names it in SQL (`"lattice_session_entries"`). */
  readonly table: string;
  /** The server's SQLSTATE when it answered with an error (`"42P01"`, `"28P01"`, ...). */
  readonly sqlState: string | undefined;

  /**
   * @param code - Which failure, see {@link PostgresSessionStoreErrorCode}.
   * @param table - The session table.
   * @param message - What happened, to which server or table, and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }` (pg's own error).
   */
  constructor(
    code: PostgresSessionStoreErrorCode,
    table: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(code, message, options);
    this.table = table;
    this.sqlState = sqlStateOf(options?.cause);
    this.name = "PostgresSessionStoreError";
  }
}
