import { resolve } from "node:path";
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
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import {
  busyOrOpenFailed,
  CHECKPOINTS_TABLE,
  ENTRIES_TABLE,
  FENCES_TABLE,
  openSessionDatabase,
} from "./open-session-database.js";
import { SqliteSessionStoreError } from "./sqlite-session-store-error.js";

/** Parses entries' JSON texts, in order. */
function parseEntries(texts: readonly string[]): SessionEntry[] {
  const entries = new Array<SessionEntry>(texts.length);
  for (let index = 0; index < texts.length; index++) {
    entries[index] = JSON.parse(texts[index]!) as SessionEntry;
  }
  return entries;
}

/** How hard SQLite makes each append durable; see {@link SqliteSessionStoreOptions.synchronous}. */
export type SqliteSynchronous = "normal" | "full";

/** Options of {@link sqliteSessionStore}. */
export interface SqliteSessionStoreOptions {
  /**
   * The database file. It is created, with the session schema, when it does not exist; its
   * folder must exist. `":memory:"` gives a private in-memory database, gone on `close()`.
   */
  readonly path: string;
  /**
   * SQLite's `synchronous` setting (the journal is always WAL):
   *
   * - `"normal"` (default): an append that has returned survives a killed or crashed process.
   *   A power loss or an operating system crash may lose the last appends (never corrupt the
   *   file). Appends cost a write, no fsync.
   * - `"full"`: an append that has returned survives a power loss too. Each append waits for
   *   an fsync of the log, which costs from a fraction of a millisecond to several
   *   milliseconds, depending on the disk.
   */
  readonly synchronous?: SqliteSynchronous;
}

/** A `SessionStore` on a SQLite file, as {@link sqliteSessionStore} returns it. */
export interface SqliteSessionStore extends SessionStore {
  /** The database file as an absolute path (or `":memory:"`). */
  readonly path: string;
  /** Closes the database. Idempotent; the store refuses every call after it. */
  close(): Promise<void>;
}

const OPTION_KEYS = ["path", "synchronous"] as const;
const PREFIX = "sqliteSessionStore:";

/**
 * A durable `SessionStore` (of `@lattice/core`) on a SQLite file, through `better-sqlite3`
 * (R11). Sessions survive restarts, and several processes may share one file: an append is one
 * `BEGIN IMMEDIATE` transaction that reads the session's version, compares it with
 * `expectedVersion` and inserts every entry, so of two writers with the same
 * `expectedVersion`, in this process or another, exactly one wins and the other gets a
 * `SessionConflictError` (R8). A fenced append (H28) reads and raises the session's fence
 * (table `lattice_session_fences`) in the same transaction, refusing a lower fence with
 * `SessionFencedError`.
 *
 * It keeps checkpoints (C8, `checkpoints: true`): the latest one of each session in the table
 * `lattice_session_checkpoints` (session → version, state JSON text), written by
 * `saveCheckpoint` in a `BEGIN IMMEDIATE` transaction that checks it against the session's
 * entry count and its current checkpoint. `load(sessionId, { fromCheckpoint: true })` reads
 * the checkpoint and only the entries after it (`seq > version`, on the `(session_id, seq)`
 * key) in one read transaction, so loading a long session costs what happened since its
 * checkpoint. `delete` removes the checkpoint with the session.
 *
 * The database runs in WAL mode (readers never wait for the writer). A statement that finds
 * the file locked by another connection waits up to {@link SQLITE_BUSY_TIMEOUT_MS} (5 s)
 * before failing with code `"sqlite_busy"`; `better-sqlite3` is synchronous, so that wait
 * blocks this thread. Entries are stored as JSON text, exactly as appended (key order
 * included), one row per entry keyed by (session, sequence number).
 *
 * @param options - `path` (required) and `synchronous` (`"normal"` by default).
 * @throws `InvalidOptionError` (code `"invalid_option"`) when `path` is not a non-empty
 *   string or `synchronous` is not `"normal"` or `"full"`; `UnknownOptionError` (code
 *   `"unknown_option"`) on an unknown option (R22).
 * @throws {@link SqliteSessionStoreError} when the file cannot be used: its folder is missing
 *   (`"sqlite_folder_missing"`), it is not a SQLite database (`"sqlite_not_a_database"`), it
 *   is another application's database (`"sqlite_not_a_session_database"`), it was written by a
 *   newer version of this package (`"sqlite_schema_too_new"`), or SQLite cannot open it
 *   (`"sqlite_open_failed"`).
 */
export function sqliteSessionStore(options: SqliteSessionStoreOptions): SqliteSessionStore {
  if (options === undefined) {
    throw new InvalidOptionError(
      PREFIX,
      "path",
      'is required: pass { path: "sessions.db" }, the SQLite file to keep sessions in.',
    );
  }
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  const { path: given, synchronous = "normal" } = options;
  if (typeof given !== "string" || given.length === 0) {
    throw new InvalidOptionError(
      PREFIX,
      "path",
      `must be a non-empty string (the SQLite file to keep sessions in, or ":memory:"), received ${describeValue(given)}.`,
    );
  }
  if (synchronous !== "normal" && synchronous !== "full") {
    throw new InvalidOptionError(
      PREFIX,
      "synchronous",
      `must be "normal" or "full", received ${describeValue(synchronous)}.`,
    );
  }
  const path = given === ":memory:" ? given : resolve(given);
  const database = openSessionDatabase(path, synchronous);

  const selectEntriesAfter = database
    .prepare<[string, number], string>(
      `SELECT entry FROM ${ENTRIES_TABLE} WHERE session_id = ? AND seq > ? ORDER BY seq`,
    )
    .pluck();
  const selectCheckpoint = database.prepare<[string], { version: number; state: string }>(
    `SELECT version, state FROM ${CHECKPOINTS_TABLE} WHERE session_id = ?`,
  );
  const selectCheckpointVersion = database
    .prepare<[string], number>(`SELECT version FROM ${CHECKPOINTS_TABLE} WHERE session_id = ?`)
    .pluck();
  const upsertCheckpoint = database.prepare<[string, number, string]>(
    `INSERT INTO ${CHECKPOINTS_TABLE} (session_id, version, state) VALUES (?, ?, ?)
     ON CONFLICT (session_id) DO UPDATE SET version = excluded.version, state = excluded.state`,
  );
  const deleteCheckpoint = database.prepare<[string]>(
    `DELETE FROM ${CHECKPOINTS_TABLE} WHERE session_id = ?`,
  );
  const selectEntries = database
    .prepare<[string], string>(
      `SELECT entry FROM ${ENTRIES_TABLE} WHERE session_id = ? ORDER BY seq`,
    )
    .pluck();
  const selectVersion = database
    .prepare<[string], number>(
      `SELECT seq FROM ${ENTRIES_TABLE} WHERE session_id = ? ORDER BY seq DESC LIMIT 1`,
    )
    .pluck();
  const insertEntry = database.prepare<[string, number, string]>(
    `INSERT INTO ${ENTRIES_TABLE} (session_id, seq, entry) VALUES (?, ?, ?)`,
  );
  const selectSessions = database
    .prepare<[], string>(`SELECT DISTINCT session_id FROM ${ENTRIES_TABLE}`)
    .pluck();
  const deleteEntries = database.prepare<[string]>(
    `DELETE FROM ${ENTRIES_TABLE} WHERE session_id = ?`,
  );
  const selectFence = database
    .prepare<[string], number>(`SELECT fence FROM ${FENCES_TABLE} WHERE session_id = ?`)
    .pluck();
  const upsertFence = database.prepare<[string, number]>(
    `INSERT INTO ${FENCES_TABLE} (session_id, fence) VALUES (?, ?)
     ON CONFLICT (session_id) DO UPDATE SET fence = max(fence, excluded.fence)`,
  );
  const deleteFence = database.prepare<[string]>(
    `DELETE FROM ${FENCES_TABLE} WHERE session_id = ?`,
  );
  const appendEntries = database.transaction(
    (
      sessionId: string,
      expectedVersion: number,
      texts: readonly string[],
      fence: number | undefined,
    ) => {
      // The fence first: a writer whose lease was taken over must stop, not reload (H28).
      const highest = fence === undefined ? undefined : selectFence.get(sessionId);
      if (fence !== undefined && highest !== undefined && fence < highest) {
        throw new SessionFencedError(sessionId, fence, highest);
      }
      const version = selectVersion.get(sessionId) ?? 0;
      if (version !== expectedVersion) {
        throw new SessionConflictError(sessionId, expectedVersion, version);
      }
      if (fence !== undefined && (highest === undefined || fence > highest)) {
        upsertFence.run(sessionId, fence);
      }
      for (let index = 0; index < texts.length; index++) {
        insertEntry.run(sessionId, expectedVersion + index + 1, texts[index]!);
      }
      return expectedVersion + texts.length;
    },
  );
  /** Deletes a session's entries, fence and checkpoint; whether it had entries. */
  const deleteSession = database.transaction((sessionId: string) => {
    deleteFence.run(sessionId);
    deleteCheckpoint.run(sessionId);
    return deleteEntries.run(sessionId).changes > 0;
  });
  /**
   * Reads a session's checkpoint and the entries after it, in one read transaction (one WAL
   * snapshot): the texts, the version and the checkpoint, if any (C8).
   */
  const loadFromCheckpoint = database.transaction((sessionId: string) => {
    const checkpoint = selectCheckpoint.get(sessionId);
    if (checkpoint !== undefined) {
      const texts = selectEntriesAfter.all(sessionId, checkpoint.version);
      // A checkpoint beyond the entries (left by an older release's delete) is passed over.
      if (texts.length > 0 || (selectVersion.get(sessionId) ?? 0) === checkpoint.version) {
        return { texts, version: checkpoint.version + texts.length, checkpoint };
      }
    }
    const texts = selectEntries.all(sessionId);
    return { texts, version: texts.length, checkpoint: undefined };
  });
  /** Keeps a checkpoint when the session holds its entries and it is newer (C8). */
  const keepCheckpoint = database.transaction(
    (sessionId: string, version: number, text: string) => {
      const entries = selectVersion.get(sessionId) ?? 0;
      if (version > entries) return false;
      const current = selectCheckpointVersion.get(sessionId);
      // A checkpoint beyond the entries (left by an older release's delete) is replaced.
      if (current !== undefined && current >= version && current <= entries) return false;
      upsertCheckpoint.run(sessionId, version, text);
      return true;
    },
  );

  /** Runs one database call, with the store's errors for a closed store and a lock timeout. */
  function use<T>(doing: string, call: () => T): T {
    if (!database.open) {
      throw new SqliteSessionStoreError(
        "sqlite_store_closed",
        path,
        `${PREFIX} the store of ${JSON.stringify(path)} is closed (${doing}). Open a new one with sqliteSessionStore({ path }).`,
      );
    }
    try {
      return call();
    } catch (error) {
      if (error instanceof SessionConflictError || error instanceof SessionFencedError) throw error;
      throw busyOrOpenFailed(path, error, doing);
    }
  }

  return {
    name: `sqliteSessionStore(${JSON.stringify(path)})`,
    // Appends honour SessionAppendOptions.fence (H28).
    fencedAppends: true,
    // saveCheckpoint and load(sessionId, { fromCheckpoint: true }) (C8).
    checkpoints: true,
    path,

    async load(sessionId: string, options?: SessionLoadOptions): Promise<SessionSnapshot> {
      const prefix = `${PREFIX} load():`;
      checkSessionId(prefix, sessionId);
      const fromCheckpoint = checkLoadOptions(prefix, options);
      const doing = `loading session ${JSON.stringify(sessionId)}`;
      if (fromCheckpoint) {
        const read = use(doing, () => loadFromCheckpoint.deferred(sessionId));
        const entries = parseEntries(read.texts);
        if (read.checkpoint === undefined) return { entries, version: read.version };
        const checkpoint: SessionCheckpoint = {
          version: read.checkpoint.version,
          state: JSON.parse(read.checkpoint.state) as SessionCheckpoint["state"],
        };
        return { entries, version: read.version, checkpoint };
      }
      const entries = parseEntries(use(doing, () => selectEntries.all(sessionId)));
      return { entries, version: entries.length };
    },

    async saveCheckpoint(sessionId: string, checkpoint: SessionCheckpoint) {
      const prefix = `${PREFIX} saveCheckpoint():`;
      checkSessionId(prefix, sessionId);
      const { version, text } = serializeCheckpoint(prefix, checkpoint);
      return use(`saving a checkpoint of session ${JSON.stringify(sessionId)}`, () =>
        keepCheckpoint.immediate(sessionId, version, text),
      );
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
      return use(`appending to session ${JSON.stringify(sessionId)}`, () =>
        appendEntries.immediate(sessionId, expectedVersion, texts, fence),
      );
    },

    async list() {
      // Sorted here, not by SQL: SQLite orders text by UTF-8 bytes (code points), the
      // contract by UTF-16 code units, as JavaScript's sort does.
      return use("listing sessions", () => selectSessions.all()).sort();
    },

    async delete(sessionId: string) {
      checkSessionId(`${PREFIX} delete():`, sessionId);
      return use(`deleting session ${JSON.stringify(sessionId)}`, () =>
        deleteSession.immediate(sessionId),
      );
    },

    async close() {
      if (database.open) database.close();
    },
  };
}
