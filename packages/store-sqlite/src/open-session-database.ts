import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { SqliteSessionStoreError } from "./sqlite-session-store-error.js";

/** The schema this version of the store writes and reads. Newer files are refused. */
export const SCHEMA_VERSION = 1;
/**
 * How long a statement of a SQLite session store waits for another connection's lock before
 * it fails with code `"sqlite_busy"`: 5,000 ms (SQLite's `busy_timeout`). `better-sqlite3` is
 * synchronous, so the wait blocks the calling thread.
 */
export const SQLITE_BUSY_TIMEOUT_MS = 5000;
/** The metadata table: `schema_version` and anything later versions need. */
export const META_TABLE = "lattice_meta";
/** One row per entry: (session_id, seq) → the entry's JSON text; seq counts from 1. */
export const ENTRIES_TABLE = "lattice_session_entries";
/**
 * One row per fenced session: session_id → the highest fence its appends carried (H28). Added
 * after schema version 1 without changing it: a file without it gets it when opened, and an
 * older release opening a file with it ignores it (it never sends fences).
 */
export const FENCES_TABLE = "lattice_session_fences";
const CREATE_FENCES_TABLE = `CREATE TABLE IF NOT EXISTS ${FENCES_TABLE} (
  session_id TEXT PRIMARY KEY NOT NULL,
  fence INTEGER NOT NULL
)`;
/**
 * One row per session with a checkpoint (C8): session_id → the number of entries it covers
 * and its state's JSON text. Added after schema version 1 without changing it, as the fences
 * table was: a file without it gets it when opened, and an older release ignores it.
 */
export const CHECKPOINTS_TABLE = "lattice_session_checkpoints";
const CREATE_CHECKPOINTS_TABLE = `CREATE TABLE IF NOT EXISTS ${CHECKPOINTS_TABLE} (
  session_id TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL,
  state TEXT NOT NULL
)`;

const PREFIX = "sqliteSessionStore:";

/**
 * Opens (creating when new) a Lattice session database: WAL journal, the given `synchronous`
 * level, the busy timeout, and the schema, checked or created in one `BEGIN IMMEDIATE`
 * transaction so two processes opening a new file at once agree. A file made before the fences
 * or the checkpoints table gets the missing table.
 *
 * @param path - Absolute path of the file, or `":memory:"`.
 * @throws {@link SqliteSessionStoreError} with a code for each way the file can be unusable.
 */
export function openSessionDatabase(
  path: string,
  synchronous: "normal" | "full",
): Database.Database {
  if (path !== ":memory:") {
    const folder = dirname(path);
    if (!existsSync(folder)) {
      throw new SqliteSessionStoreError(
        "sqlite_folder_missing",
        path,
        `${PREFIX} cannot create the session database ${JSON.stringify(path)}: its folder ${JSON.stringify(folder)} does not exist. Create the folder first (for example with mkdir -p), or choose a path in an existing folder.`,
      );
    }
    if (existsSync(path) && statSync(path).isDirectory()) {
      throw new SqliteSessionStoreError(
        "sqlite_open_failed",
        path,
        `${PREFIX} ${JSON.stringify(path)} is a folder, not a database file. Give the path of a file (it is created if it does not exist), for example ${JSON.stringify(`${path}/sessions.db`)}.`,
      );
    }
  }
  let database: Database.Database;
  try {
    database = new Database(path, { timeout: SQLITE_BUSY_TIMEOUT_MS });
  } catch (error) {
    throw openFailed(path, error);
  }
  try {
    // Read before writing anything: never turn someone else's database to WAL.
    refuseForeign(path, tableNames(database));
    database.pragma("journal_mode = WAL");
    database.pragma(`synchronous = ${synchronous === "full" ? "FULL" : "NORMAL"}`);
    database
      .transaction(() => {
        const tables = tableNames(database);
        refuseForeign(path, tables);
        if (tables.includes(META_TABLE)) {
          checkSchemaVersion(path, database, tables);
          if (!tables.includes(FENCES_TABLE)) database.exec(CREATE_FENCES_TABLE);
          if (!tables.includes(CHECKPOINTS_TABLE)) database.exec(CREATE_CHECKPOINTS_TABLE);
          return;
        }
        database.exec(`
          CREATE TABLE ${META_TABLE} (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
          CREATE TABLE ${ENTRIES_TABLE} (
            session_id TEXT NOT NULL,
            seq INTEGER NOT NULL,
            entry TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
          );
          ${CREATE_FENCES_TABLE};
          ${CREATE_CHECKPOINTS_TABLE};
        `);
        database
          .prepare(`INSERT INTO ${META_TABLE} (key, value) VALUES ('schema_version', ?)`)
          .run(String(SCHEMA_VERSION));
      })
      .immediate();
    return database;
  } catch (error) {
    database.close();
    if (error instanceof SqliteSessionStoreError) throw error;
    const code = (error as { code?: unknown }).code;
    if (code === "SQLITE_NOTADB" || code === "SQLITE_CORRUPT") {
      throw new SqliteSessionStoreError(
        "sqlite_not_a_database",
        path,
        `${PREFIX} ${JSON.stringify(path)} is not a SQLite database (SQLite says: ${(error as Error).message}). Give the path of a Lattice session database, or of a new file to create one.`,
        { cause: error },
      );
    }
    throw busyOrOpenFailed(path, error, "opening the store");
  }
}

/**
 * Turns a SQLite error into a {@link SqliteSessionStoreError}: `sqlite_busy` when the lock
 * wait ran out, `sqlite_open_failed` otherwise.
 */
export function busyOrOpenFailed(path: string, error: unknown, doing: string): Error {
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string" && code.startsWith("SQLITE_BUSY")) {
    return new SqliteSessionStoreError(
      "sqlite_busy",
      path,
      `${PREFIX} ${JSON.stringify(path)} stayed locked by another connection for more than ${SQLITE_BUSY_TIMEOUT_MS} ms while ${doing}. Another process holds a long write transaction on it; try again later.`,
      { cause: error },
    );
  }
  return openFailed(path, error);
}

function openFailed(path: string, error: unknown): SqliteSessionStoreError {
  return new SqliteSessionStoreError(
    "sqlite_open_failed",
    path,
    `${PREFIX} SQLite could not use ${JSON.stringify(path)}: ${error instanceof Error ? error.message : String(error)}. Check that the file and its folder are readable and writable.`,
    { cause: error },
  );
}

function tableNames(database: Database.Database): string[] {
  return database
    .prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")
    .pluck()
    .all() as string[];
}

function refuseForeign(path: string, tables: readonly string[]): void {
  if (tables.length === 0 || tables.includes(META_TABLE)) return;
  const shown = tables.slice(0, 5).join(", ") + (tables.length > 5 ? ", ..." : "");
  throw new SqliteSessionStoreError(
    "sqlite_not_a_session_database",
    path,
    `${PREFIX} ${JSON.stringify(path)} is a SQLite database but not a Lattice session database: it has other tables (${shown}) and no ${META_TABLE} table. Keep sessions in a file of their own: give a new file name, and Lattice creates it.`,
  );
}

function checkSchemaVersion(
  path: string,
  database: Database.Database,
  tables: readonly string[],
): void {
  const text = database
    .prepare(`SELECT value FROM ${META_TABLE} WHERE key = 'schema_version'`)
    .pluck()
    .get();
  const version = typeof text === "string" && /^\d+$/.test(text) ? Number(text) : undefined;
  if (version === undefined || (version === SCHEMA_VERSION && !tables.includes(ENTRIES_TABLE))) {
    throw new SqliteSessionStoreError(
      "sqlite_not_a_session_database",
      path,
      `${PREFIX} ${JSON.stringify(path)} has a ${META_TABLE} table but no valid schema_version or no ${ENTRIES_TABLE} table, so it is not a Lattice session database (or it was damaged). Give the path of another file.`,
    );
  }
  if (version > SCHEMA_VERSION) {
    throw new SqliteSessionStoreError(
      "sqlite_schema_too_new",
      path,
      `${PREFIX} ${JSON.stringify(path)} was written by a newer @lattice/store-sqlite (session schema version ${version}; this version reads up to ${SCHEMA_VERSION}). Upgrade @lattice/store-sqlite to open it.`,
    );
  }
}
