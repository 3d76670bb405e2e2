import {
  checkAppendOptions,
  checkExpectedVersion,
  checkLoadOptions,
  checkSessionId,
  type SessionAppendOptions,
  type SessionCheckpoint,
  SessionConflictError,
  type SessionEntry,
  SessionFencedError,
  type SessionLoadOptions,
  type SessionSnapshot,
  type SessionStore,
  serializeCheckpoint,
  serializeSessionEntries,
} from "@lattice/core";
import { InvalidOptionError, LatticeError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { Pool, type PoolClient, type QueryResultRow } from "pg";
import {
  connectionAdvice,
  describeServer,
  isConnectionError,
  type ServerConfig,
  sqlStateOf,
} from "./postgres-errors.js";
import { PostgresSessionStoreError } from "./postgres-session-store-error.js";
import { DEFAULT_SESSION_TABLE, type SessionTable, sessionTable } from "./session-table.js";

/**
 * How long a pool that the store creates waits for a connection before the call fails with
 * code `"postgres_connection_failed"`: 10,000 ms (pg's `connectionTimeoutMillis`). A
 * `connect_timeout` (seconds, as in libpq) in the connection string overrides it.
 */
export const POSTGRES_CONNECT_TIMEOUT_MS = 10_000;

/** Options of {@link postgresSessionStore}: a `pool` or a `connectionString`, not both. */
export interface PostgresSessionStoreOptions {
  /**
   * A `pg.Pool` of yours. The store borrows connections from it and never ends it: `close()`
   * leaves it open. Give it a finite `connectionTimeoutMillis`, or a call waits as long as the
   * server takes to answer.
   */
  readonly pool?: Pool;
  /**
   * A connection string (`postgres://user:password@host:5432/database`). The store creates its
   * own pool (pg's defaults: 10 connections, idle ones closed after 10 s and never holding the
   * process open; a connection timeout of {@link POSTGRES_CONNECT_TIMEOUT_MS}, or
   * `connect_timeout` seconds from the string) and `close()` ends it.
   */
  readonly connectionString?: string;
  /**
   * The table of entries: `"sessions"` or schema-qualified `"app.sessions"`, of lower-case
   * letters, digits and underscores. Default: `"lattice_session_entries"` (in the connection's
   * `search_path`, normally `public`). Create it with `store.migrate()`.
   */
  readonly table?: string;
  /** A label for messages (`SessionStore.name`). Default: `postgresSessionStore("host:port/database", "table")`. */
  readonly name?: string;
}

/** A `SessionStore` on PostgreSQL, as {@link postgresSessionStore} returns it. */
export interface PostgresSessionStore extends SessionStore {
  /** The store's label for messages. */
  readonly name: string;
  /** The table of entries, as given (`"lattice_session_entries"`). */
  readonly table: string;
  /**
   * Creates the table (and its schema, when the name is qualified and the schema is missing)
   * if it does not exist, and the fences table beside it (`<table>_fences`, H28) and the
   * checkpoints table (`<table>_checkpoints`, C8). Idempotent, and safe when several processes
   * migrate at once (a transaction-scoped advisory lock orders them). Run it once before using
   * the store, for example at deploy time, and once more after upgrading from a release without
   * fencing or checkpoints; the store never creates its tables on its own.
   *
   * @throws {@link PostgresSessionStoreError} `"postgres_not_a_session_table"` when a table of
   *   that name exists without the session columns and the unique (session_id, seq) key;
   *   `"postgres_connection_failed"` or `"postgres_query_failed"` (for example without the
   *   privilege to create it).
   */
  migrate(): Promise<void>;
  /**
   * Ends the store's own pool (one created from `connectionString`; a `pool` you gave stays
   * open). Idempotent; the store refuses every call after it.
   */
  close(): Promise<void>;
}

const OPTION_KEYS = ["pool", "connectionString", "table", "name"] as const;
const PREFIX = "postgresSessionStore:";

/**
 * A durable `SessionStore` (of `@lattice/core`) on PostgreSQL, through `pg` (D1). Several
 * processes and machines may share one database. Each entry is one row of the session table,
 * keyed by `(session_id, seq)`, its JSON text kept exactly as appended (key order included).
 *
 * An append is one transaction: it takes a transaction-scoped advisory lock on the session
 * (so appends and deletes of one session never overlap), compares the session's version with
 * `expectedVersion`, and inserts the entries at `expectedVersion + 1, ...`. Of two writers with
 * the same `expectedVersion`, in this process or another, exactly one wins; the other gets a
 * `SessionConflictError` with the actual version (R8, D2). The unique `(session_id, seq)` key
 * refuses a second row at one position even from a writer that skips the lock. A fenced append
 * (H28) also reads the session's fence from the fences table in the same statement, refuses a
 * lower fence with `SessionFencedError`, and raises it when the entries go in.
 *
 * It keeps checkpoints (C8, `checkpoints: true`): the latest one of each session in the table
 * `<table>_checkpoints` (session → version, state JSON text). `saveCheckpoint` runs under the
 * session's advisory lock and keeps a checkpoint only when the session holds its entries and it
 * is newer; `load(sessionId, { fromCheckpoint: true })` reads the checkpoint and only the
 * entries after it (`seq > version`, on the `(session_id, seq)` key) in one statement, one
 * snapshot, so loading a long session costs what happened since its checkpoint. `delete`
 * removes the checkpoint with the session. On a database migrated before checkpoints, loads
 * read whole sessions and `saveCheckpoint` fails with `"postgres_schema_missing"` until
 * `migrate()` runs again.
 *
 * The store does not create its table: call `await store.migrate()` once (D2). Until then
 * every call fails with code `"postgres_schema_missing"`.
 *
 * @param options - `pool` or `connectionString` (one is required), `table`, `name`.
 * @throws `InvalidOptionError` (code `"invalid_option"`) when neither or both of `pool` and
 *   `connectionString` are given, or one of them, `table` or `name` is malformed;
 *   `UnknownOptionError` (code `"unknown_option"`) on an unknown option (R22).
 */
export function postgresSessionStore(options: PostgresSessionStoreOptions): PostgresSessionStore {
  const required =
    'is required: pass { connectionString: "postgres://user:password@host:5432/database" }, or { pool } with a pg.Pool of yours.';
  if (options === undefined) throw new InvalidOptionError(PREFIX, "connectionString", required);
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  const { pool: given, connectionString, table: tableOption, name: nameOption } = options;
  if (given !== undefined && connectionString !== undefined) {
    throw new InvalidOptionError(
      PREFIX,
      "pool",
      'cannot be combined with "connectionString": pass one of them, { pool } to use a pg.Pool of yours (close() leaves it open) or { connectionString } to let the store create and own one.',
    );
  }
  if (given === undefined && connectionString === undefined) {
    throw new InvalidOptionError(PREFIX, "connectionString", required);
  }
  if (given !== undefined && !isPool(given)) {
    throw new InvalidOptionError(
      PREFIX,
      "pool",
      `must be a pg.Pool (new Pool({ connectionString }) from "pg"), received ${describeValue(given)}.`,
    );
  }
  if (
    connectionString !== undefined &&
    (typeof connectionString !== "string" || connectionString === "")
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "connectionString",
      `must be a non-empty string ("postgres://user:password@host:5432/database"), received ${describeValue(connectionString)}.`,
    );
  }
  const table = sessionTable(PREFIX, tableOption ?? DEFAULT_SESSION_TABLE);
  if (nameOption !== undefined && (typeof nameOption !== "string" || nameOption === "")) {
    throw new InvalidOptionError(
      PREFIX,
      "name",
      `must be a non-empty string, received ${describeValue(nameOption)}.`,
    );
  }

  const timeoutMs =
    given === undefined
      ? connectTimeoutOf(connectionString as string)
      : (given.options as { connectionTimeoutMillis?: number }).connectionTimeoutMillis;
  const server = describeServer((given?.options ?? { connectionString }) as ServerConfig);
  const pool = given ?? ownPool(connectionString as string, timeoutMs as number);
  const name =
    nameOption ??
    `postgresSessionStore(${JSON.stringify(server.address)}, ${JSON.stringify(table.name)})`;
  const sql = table.statements;
  const errors = storeErrors(table, server, timeoutMs);
  let closing: Promise<void> | undefined;
  /**
   * Whether the fences table exists, looked up by the first delete() (or known from migrate()
   * or a fenced append) and remembered: a database not migrated since fencing came has no
   * fences to forget, and its deletes send no statement to a table it does not have.
   */
  let fencesTable: boolean | undefined;
  /**
   * Whether the checkpoints table exists (C8), once known to: until then each call that needs
   * it looks (a database migrated by a release without checkpoints may be migrated again by
   * another process at any time).
   */
  let checkpointsTable = false;

  /** Looks up which of the fences and checkpoints tables exist, and remembers it. */
  async function lookUpTables(db: Connection): Promise<void> {
    const { rows } = await db.query<{ fences: boolean; checkpoints: boolean }>(sql.tablesPresent, [
      table.fencesSql,
      table.checkpointsSql,
    ]);
    fencesTable = rows[0]?.fences === true;
    checkpointsTable = rows[0]?.checkpoints === true;
  }

  /** A session's entries from their rows, in order. */
  function parseEntries(rows: readonly { entry: string }[], from = 0): SessionEntry[] {
    const entries = new Array<SessionEntry>(rows.length - from);
    for (let index = from; index < rows.length; index++) {
      entries[index - from] = JSON.parse(rows[index]!.entry) as SessionEntry;
    }
    return entries;
  }

  /** Runs `body` on a connection of the pool, turning pg's errors into the store's. */
  async function use<T>(doing: string, body: (db: Connection) => Promise<T>): Promise<T> {
    if (closing !== undefined) throw errors.closed(doing);
    let client: PoolClient;
    try {
      client = await pool.connect();
    } catch (error) {
      throw errors.connectionFailed(error, doing);
    }
    const db = new Connection(client);
    try {
      const result = await body(db);
      client.release();
      return result;
    } catch (error) {
      // Drop the client when its connection may be unusable; a conflict or a refused
      // statement leaves it fine.
      client.release(db.broken || (!(error instanceof LatticeError) && isConnectionError(error)));
      if (error instanceof LatticeError) throw error;
      throw errors.translate(error, doing);
    }
  }

  return {
    name,
    table: table.name,
    // Appends honour SessionAppendOptions.fence (H28).
    fencedAppends: true,
    // saveCheckpoint and load(sessionId, { fromCheckpoint: true }) (C8).
    checkpoints: true,

    async migrate() {
      await use(`migrating (creating the table ${table.name})`, (db) =>
        db.transaction(async () => {
          await db.query(sql.lockMigrate);
          if (table.schema !== undefined) {
            const { rows } = await db.query<{ found: boolean }>(
              "SELECT to_regnamespace($1) IS NOT NULL AS found",
              [`"${table.schema}"`],
            );
            if (rows[0]?.found !== true) await db.query(`CREATE SCHEMA "${table.schema}"`);
          }
          await db.query(sql.createTable);
          const { rows } = await db.query<{ columns: string[] | null; keyed: boolean }>(
            sql.describeTable,
            [table.sql],
          );
          const columns = rows[0]?.columns ?? [];
          const missing = ["session_id text", "seq integer", "entry text"].filter(
            (column) => !columns.includes(column),
          );
          if (missing.length > 0 || rows[0]?.keyed !== true) {
            throw errors.notASessionTable(columns, missing);
          }
          await db.query(sql.createFencesTable);
          const fences = await db.query<{ columns: string[] | null; keyed: boolean }>(
            sql.describeFencesTable,
            [table.fencesSql],
          );
          const fenceColumns = fences.rows[0]?.columns ?? [];
          const keyed = fences.rows[0]?.keyed === true;
          if (
            !["session_id text", "fence bigint"].every((c) => fenceColumns.includes(c)) ||
            !keyed
          ) {
            throw errors.notAFencesTable(fenceColumns, keyed);
          }
          await db.query(sql.createCheckpointsTable);
          const checkpoints = await db.query<{ columns: string[] | null; keyed: boolean }>(
            sql.describeFencesTable,
            [table.checkpointsSql],
          );
          const checkpointColumns = checkpoints.rows[0]?.columns ?? [];
          const checkpointsKeyed = checkpoints.rows[0]?.keyed === true;
          if (
            !["session_id text", "version bigint", "state text"].every((c) =>
              checkpointColumns.includes(c),
            ) ||
            !checkpointsKeyed
          ) {
            throw errors.notACheckpointsTable(checkpointColumns, checkpointsKeyed);
          }
        }),
      );
      fencesTable = true;
      checkpointsTable = true;
    },

    async load(sessionId: string, options?: SessionLoadOptions): Promise<SessionSnapshot> {
      const prefix = `${PREFIX} load():`;
      checkSessionId(prefix, sessionId);
      const fromCheckpoint = checkLoadOptions(prefix, options);
      return use(`loading session ${JSON.stringify(sessionId)}`, async (db) => {
        if (fromCheckpoint) {
          if (!checkpointsTable) await lookUpTables(db);
          // A database migrated before checkpoints has none: the whole session is read.
          if (checkpointsTable) {
            const { rows } = await db.query<{
              seq: number;
              checkpoint: string | null;
              entry: string;
              last: number | null;
            }>(sql.loadFromCheckpoint, [sessionId]);
            const head = rows[0];
            if (head === undefined || head.checkpoint === null) {
              return { entries: parseEntries(rows), version: rows.length };
            }
            const version = Number(head.checkpoint);
            // A checkpoint beyond the entries (left by an older release's delete) is passed over.
            if (version <= (head.last ?? 0)) {
              const entries = parseEntries(rows, 1);
              const checkpoint: SessionCheckpoint = {
                version,
                state: JSON.parse(head.entry) as SessionCheckpoint["state"],
              };
              return { entries, version: version + entries.length, checkpoint };
            }
          }
        }
        const { rows } = await db.query<{ entry: string }>(sql.load, [sessionId]);
        return { entries: parseEntries(rows), version: rows.length };
      });
    },

    async saveCheckpoint(sessionId: string, checkpoint: SessionCheckpoint) {
      const prefix = `${PREFIX} saveCheckpoint():`;
      checkSessionId(prefix, sessionId);
      const { version, text } = serializeCheckpoint(prefix, checkpoint);
      return use(`saving a checkpoint of session ${JSON.stringify(sessionId)}`, async (db) => {
        if (!checkpointsTable) await lookUpTables(db);
        if (!checkpointsTable) throw errors.checkpointsMissing();
        return db.transaction(async () => {
          // Under the session's lock, as appends and deletes: the entry count holds still.
          await db.query(sql.lockSession, [table.sql, sessionId]);
          const { rows } = await db.query<{ saved: number }>(sql.saveCheckpoint, [
            sessionId,
            version,
            text,
          ]);
          return rows[0]?.saved === 1;
        });
      });
    },

    async append(
      sessionId: string,
      expectedVersion: number,
      entries: readonly SessionEntry[],
      options?: SessionAppendOptions,
    ) {
      const prefix = `${PREFIX} append():`;
      checkSessionId(prefix, sessionId);
      checkExpectedVersion(prefix, expectedVersion);
      const fence = checkAppendOptions(prefix, options);
      const texts = serializeSessionEntries(prefix, entries, fence);
      return use(`appending to session ${JSON.stringify(sessionId)}`, async (db) => {
        try {
          return await db.transaction(async () => {
            await db.query(sql.lockSession, [table.sql, sessionId]);
            if (fence !== undefined) {
              const { rows } = await db.query<{
                version: number;
                inserted: number;
                fence: string | null;
              }>(sql.appendFenced, [sessionId, expectedVersion, texts, fence]);
              const current = rows[0]?.fence == null ? undefined : Number(rows[0].fence);
              if (current !== undefined && fence < current) {
                throw new SessionFencedError(sessionId, fence, current);
              }
              if (rows[0]?.version !== expectedVersion || rows[0].inserted !== texts.length) {
                throw new SessionConflictError(sessionId, expectedVersion, rows[0]?.version);
              }
              fencesTable = true;
              return expectedVersion + texts.length;
            }
            const { rows } = await db.query<{ version: number; inserted: number }>(sql.append, [
              sessionId,
              expectedVersion,
              texts,
            ]);
            if (rows[0]?.inserted !== texts.length) {
              throw new SessionConflictError(sessionId, expectedVersion, rows[0]?.version);
            }
            return expectedVersion + texts.length;
          });
        } catch (error) {
          // A database migrated by a release without fencing has no fences table yet.
          if (fence !== undefined && sqlStateOf(error) === "42P01") {
            throw errors.fencesMissing(error);
          }
          // A writer that skipped the lock inserted at one of our positions first (unique
          // key), or a stricter isolation level caught the race (serialization failure).
          const sqlState = sqlStateOf(error);
          if (sqlState !== "23505" && sqlState !== "40001") throw error;
          const { rows } = await db.query<{ version: number }>(sql.version, [sessionId]);
          throw new SessionConflictError(sessionId, expectedVersion, rows[0]?.version);
        }
      });
    },

    async list() {
      const { rows } = await use("listing sessions", (db) =>
        db.query<{ session_id: string }>(sql.list),
      );
      // Sorted here, not by SQL: ORDER BY sorts by collation or, with COLLATE "C", by UTF-8
      // bytes (code points); the contract is UTF-16 code units, as JavaScript's sort does.
      return rows.map((row) => row.session_id).sort();
    },

    async delete(sessionId: string) {
      checkSessionId(`${PREFIX} delete():`, sessionId);
      return use(`deleting session ${JSON.stringify(sessionId)}`, (db) =>
        db.transaction(async () => {
          await db.query(sql.lockSession, [table.sql, sessionId]);
          const { rowCount } = await db.query(sql.delete, [sessionId]);
          // Without the fences table (not migrated since fencing came) there is no fence, and
          // without the checkpoints table no checkpoint.
          if (fencesTable === undefined || !checkpointsTable) await lookUpTables(db);
          if (fencesTable) await db.query(sql.deleteFence, [sessionId]);
          if (checkpointsTable) await db.query(sql.deleteCheckpoint, [sessionId]);
          return (rowCount ?? 0) > 0;
        }),
      );
    },

    close() {
      closing ??= given === undefined ? pool.end() : Promise.resolve();
      return closing;
    },
  };
}

/** A borrowed client, with transactions that always run at READ COMMITTED. */
class Connection {
  /** Set when a ROLLBACK failed: the client must not go back to the pool. */
  broken = false;

  constructor(private readonly client: PoolClient) {}

  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]) {
    return this.client.query<R>(text, values);
  }

  async transaction<T>(body: () => Promise<T>): Promise<T> {
    // READ COMMITTED whatever the server's default: each statement sees what committed before
    // it, so the version read after the session's lock is the current one.
    await this.client.query("BEGIN ISOLATION LEVEL READ COMMITTED");
    let result: T;
    try {
      result = await body();
    } catch (error) {
      try {
        await this.client.query("ROLLBACK");
      } catch {
        this.broken = true;
      }
      throw error;
    }
    await this.client.query("COMMIT");
    return result;
  }
}

function isPool(value: unknown): value is Pool {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { connect?: unknown }).connect === "function" &&
    typeof (value as { options?: unknown }).options === "object"
  );
}

/** `connect_timeout` (libpq's, in seconds) from a connection string, else the default. */
function connectTimeoutOf(connectionString: string): number {
  try {
    const seconds = Number(new URL(connectionString).searchParams.get("connect_timeout") ?? "");
    if (Number.isFinite(seconds) && seconds > 0) return seconds * 1000;
  } catch {
    // Not a URL: the default.
  }
  return POSTGRES_CONNECT_TIMEOUT_MS;
}

function ownPool(connectionString: string, connectionTimeoutMillis: number): Pool {
  const pool = new Pool({ connectionString, connectionTimeoutMillis, allowExitOnIdle: true });
  // An idle connection that breaks (the server restarted) is dropped by the pool; without a
  // listener its error would crash the process. The next call connects again.
  pool.on("error", () => undefined);
  return pool;
}

/** The store's errors, each naming the server or the table and saying what to do. */
function storeErrors(
  table: SessionTable,
  server: { address: string; redacted: string | undefined },
  timeoutMs: number | undefined,
) {
  const at = `PostgreSQL at ${server.address}`;
  const shown = server.redacted === undefined ? "" : ` (${server.redacted})`;
  const connectionFailed = (error: unknown, doing: string) =>
    new PostgresSessionStoreError(
      "postgres_connection_failed",
      table.name,
      `${PREFIX} could not connect to ${at}${shown} while ${doing}: ${errorText(error)}. ${connectionAdvice(error, timeoutMs)}`,
      { cause: error },
    );
  return {
    connectionFailed,
    closed: (doing: string) =>
      new PostgresSessionStoreError(
        "postgres_store_closed",
        table.name,
        `${PREFIX} the store of table ${table.name} at ${server.address} is closed (${doing}). Create a new one with postgresSessionStore({ connectionString }) or ({ pool }).`,
      ),
    notAFencesTable: (columns: readonly string[], keyed: boolean) =>
      new PostgresSessionStoreError(
        "postgres_not_a_session_table",
        table.name,
        `${PREFIX} the table ${table.fencesSql} in ${at}, where the store keeps the fences of ${table.name} (H28), is not a Lattice fences table: it needs the columns session_id text and fence bigint (it has ${columns.length > 0 ? columns.join(", ") : "no columns"}) and a primary key (or unique index) on session_id alone${keyed ? "" : ", which it lacks"}. The store never writes into another table: choose another name with the table option.`,
      ),
    notACheckpointsTable: (columns: readonly string[], keyed: boolean) =>
      new PostgresSessionStoreError(
        "postgres_not_a_session_table",
        table.name,
        `${PREFIX} the table ${table.checkpointsSql} in ${at}, where the store keeps the checkpoints of ${table.name} (C8), is not a Lattice checkpoints table: it needs the columns session_id text, version bigint and state text (it has ${columns.length > 0 ? columns.join(", ") : "no columns"}) and a primary key (or unique index) on session_id alone${keyed ? "" : ", which it lacks"}. The store never writes into another table: choose another name with the table option.`,
      ),
    checkpointsMissing: () =>
      new PostgresSessionStoreError(
        "postgres_schema_missing",
        table.name,
        `${PREFIX} the checkpoints table ${table.checkpointsSql} does not exist in ${at}: the database was migrated by a release without checkpoints. Run await store.migrate() once more; it adds the table and leaves the sessions as they are. Until then sessions load whole.`,
      ),
    fencesMissing: (cause: unknown) =>
      new PostgresSessionStoreError(
        "postgres_schema_missing",
        table.name,
        `${PREFIX} the fences table ${table.fencesSql} does not exist in ${at}: the database was migrated by a release without fenced appends. Run await store.migrate() once more; it adds the table and leaves the sessions as they are.`,
        { cause },
      ),
    notASessionTable: (columns: readonly string[], missing: readonly string[]) =>
      new PostgresSessionStoreError(
        "postgres_not_a_session_table",
        table.name,
        `${PREFIX} the table ${table.name} in ${at} is not a Lattice session table: ${missing.length > 0 ? `it lacks the column${missing.length > 1 ? "s" : ""} ${missing.join(", ")}` : "it has no unique key on (session_id, seq)"} (it has ${columns.length > 0 ? columns.join(", ") : "no columns"}). The store never writes into another table: choose another name with the table option.`,
      ),
    translate(error: unknown, doing: string): Error {
      const sqlState = sqlStateOf(error);
      if (sqlState === "42P01" || sqlState === "3F000") {
        return new PostgresSessionStoreError(
          "postgres_schema_missing",
          table.name,
          `${PREFIX} the table ${table.name} does not exist in ${at} (${doing}). Create it once with await store.migrate() before using the store: it is idempotent and safe to run from several processes at once.`,
          { cause: error },
        );
      }
      if (sqlState === undefined || isConnectionError(error)) {
        return new PostgresSessionStoreError(
          "postgres_connection_failed",
          table.name,
          `${PREFIX} lost the connection to ${at}${shown} while ${doing}: ${errorText(error)}. ${connectionAdvice(error, timeoutMs)} If it broke during an append, load the session to see whether the entries were written before retrying.`,
          { cause: error },
        );
      }
      return new PostgresSessionStoreError(
        "postgres_query_failed",
        table.name,
        `${PREFIX} ${at} refused ${doing} on table ${table.name}: ${errorText(error)} (SQLSTATE ${sqlState}). Check the user's privileges on the table and the server's log.`,
        { cause: error },
      );
    },
  };
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  const trimmed = text.replace(/[.\s]+$/, "");
  return trimmed === "" ? ((error as { code?: string } | null)?.code ?? "unknown error") : trimmed;
}
