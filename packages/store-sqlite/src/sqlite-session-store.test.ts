import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SessionConflictError } from "@lattice/core";
import { runSessionStoreConformance } from "@lattice/core/testing";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { SQLITE_BUSY_TIMEOUT_MS, SqliteSessionStoreError, sqliteSessionStore } from "./index.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-store-sqlite-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
let files = 0;
const newPath = () => join(folder, `sessions-${files++}.db`);

describe("sqliteSessionStore() passes the conformance suite", () => {
  runSessionStoreConformance(() => sqliteSessionStore({ path: newPath() }), it, {
    reopen: async (store) => {
      await store.close();
      return sqliteSessionStore({ path: store.path });
    },
  });
});

describe('sqliteSessionStore({ path: ":memory:" }) passes the conformance suite', () => {
  runSessionStoreConformance(() => sqliteSessionStore({ path: ":memory:" }), it);
});

async function errorOf(call: () => unknown): Promise<Error & Record<string, unknown>> {
  try {
    await call();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

describe("sqliteSessionStore()", () => {
  it("H25: a session id that is not well-formed UTF-16 is refused, so list() returns only ids that load", async () => {
    const store = sqliteSessionStore({ path: newPath() });
    for (const id of ["\uD800", "user-\uD83D", "a\uDC00b"]) {
      for (const call of [
        () => store.append(id, 0, [{ v: 1 }]),
        () => store.load(id),
        () => store.delete(id),
      ]) {
        const error = await errorOf(call);
        expect(error).toMatchObject({ code: "invalid_option", option: "sessionId" });
        expect(error.message).toContain("lone surrogate");
      }
    }
    await store.append("ok-😀", 0, [{ v: 1 }]);
    const ids = await store.list();
    expect(ids).toEqual(["ok-😀"]);
    for (const id of ids) expect(await store.load(id)).toEqual({ entries: [{ v: 1 }], version: 1 });
    await store.close();
  });

  it("R11: creates the file with WAL journal and the session schema, and keeps JSON text as appended", async () => {
    const path = newPath();
    const store = sqliteSessionStore({ path });
    expect(store.path).toBe(path);
    await store.append("s", 0, [{ v: 1, z: 1, a: [1, 2] }]);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma("journal_mode", { simple: true })).toBe("wal");
    expect(raw.prepare("SELECT key, value FROM lattice_meta").all()).toEqual([
      { key: "schema_version", value: "1" },
    ]);
    expect(raw.prepare("SELECT session_id, seq, entry FROM lattice_session_entries").all()).toEqual(
      [{ session_id: "s", seq: 1, entry: '{"v":1,"z":1,"a":[1,2]}' }],
    );
    raw.close();
    await store.close();
  });

  it("H28: a database made before fencing (no fences table) opens, keeps its sessions and takes fenced appends, across connections", async () => {
    const path = newPath();
    // The schema as the release before fencing wrote it.
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    old.exec(`
      CREATE TABLE lattice_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
      CREATE TABLE lattice_session_entries (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      INSERT INTO lattice_meta (key, value) VALUES ('schema_version', '1');
      INSERT INTO lattice_session_entries (session_id, seq, entry) VALUES ('s', 1, '{"v":1}');
    `);
    old.close();
    const first = sqliteSessionStore({ path });
    const second = sqliteSessionStore({ path });
    expect(await first.load("s")).toEqual({ entries: [{ v: 1 }], version: 1 });
    expect(await first.append("s", 1, [{ v: 2 }], { fence: 7 })).toBe(2);
    const error = await errorOf(() => second.append("s", 2, [{ v: 3 }], { fence: 6 }));
    expect(error).toMatchObject({
      name: "SessionFencedError",
      code: "session_fenced",
      fence: 6,
      currentFence: 7,
    });
    expect(await second.append("s", 2, [{ v: 3 }])).toBe(3);
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT value FROM lattice_meta").pluck().all()).toEqual(["1"]);
    expect(raw.prepare("SELECT session_id, fence FROM lattice_session_fences").all()).toEqual([
      { session_id: "s", fence: 7 },
    ]);
    raw.close();
    await first.close();
    await second.close();
  });

  it("R8: two stores on one file (two connections) compare-and-append against each other", async () => {
    const path = newPath();
    const first = sqliteSessionStore({ path });
    const second = sqliteSessionStore({ path, synchronous: "full" });
    await first.append("s", 0, [{ v: 1, by: "first" }]);
    const conflict = await errorOf(() => second.append("s", 0, [{ v: 1, by: "second" }]));
    expect(conflict).toBeInstanceOf(SessionConflictError);
    expect(conflict).toMatchObject({
      code: "session_conflict",
      expectedVersion: 0,
      actualVersion: 1,
    });
    expect(await second.append("s", 1, [{ v: 1, by: "second" }])).toBe(2);
    expect((await first.load("s")).entries).toEqual([
      { v: 1, by: "first" },
      { v: 1, by: "second" },
    ]);
    await first.close();
    await second.close();
  });

  it("R11: close() is idempotent and the store refuses calls after it", async () => {
    const path = newPath();
    const store = sqliteSessionStore({ path });
    await store.close();
    await store.close();
    const error = await errorOf(() => store.load("s"));
    expect(error).toBeInstanceOf(SqliteSessionStoreError);
    expect(error).toMatchObject({ code: "sqlite_store_closed", path });
    expect(error.message).toBe(
      `sqliteSessionStore: the store of ${JSON.stringify(path)} is closed (loading session "s"). Open a new one with sqliteSessionStore({ path }).`,
    );
  });

  it("R11: a folder that does not exist is refused, naming it and saying to create it", async () => {
    const path = join(folder, "missing", "sessions.db");
    const error = await errorOf(() => sqliteSessionStore({ path }));
    expect(error).toMatchObject({ code: "sqlite_folder_missing", name: "SqliteSessionStoreError" });
    expect(error.message).toBe(
      `sqliteSessionStore: cannot create the session database ${JSON.stringify(path)}: its folder ${JSON.stringify(join(folder, "missing"))} does not exist. Create the folder first (for example with mkdir -p), or choose a path in an existing folder.`,
    );
  });

  it("R11: a path that is a folder is refused", async () => {
    const path = join(folder, "a-folder");
    mkdirSync(path);
    const error = await errorOf(() => sqliteSessionStore({ path }));
    expect(error).toMatchObject({ code: "sqlite_open_failed" });
    expect(error.message).toContain("is a folder, not a database file");
  });

  it("R11: a file that is not a SQLite database is refused and left unchanged", async () => {
    const path = join(folder, "notes.txt");
    const text = "These are my notes, not a database.\n".repeat(200);
    writeFileSync(path, text);
    const error = await errorOf(() => sqliteSessionStore({ path }));
    expect(error).toMatchObject({ code: "sqlite_not_a_database", path });
    expect(error.message).toMatch(
      new RegExp(
        `^sqliteSessionStore: ${JSON.stringify(path).replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")} is not a SQLite database \\(SQLite says: file is not a database\\)\\. Give the path of a Lattice session database, or of a new file to create one\\.$`,
      ),
    );
    expect(readFileSync(path, "utf8")).toBe(text);
  });

  it("R11: another application's SQLite database is refused and left untouched (not turned to WAL)", async () => {
    const path = join(folder, "app.db");
    const other = new Database(path);
    other.exec(
      "CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT); CREATE TABLE orders (id INTEGER)",
    );
    other.close();
    const error = await errorOf(() => sqliteSessionStore({ path }));
    expect(error).toMatchObject({ code: "sqlite_not_a_session_database", path });
    expect(error.message).toBe(
      `sqliteSessionStore: ${JSON.stringify(path)} is a SQLite database but not a Lattice session database: it has other tables (orders, users) and no lattice_meta table. Keep sessions in a file of their own: give a new file name, and Lattice creates it.`,
    );
    const reopened = new Database(path, { readonly: true });
    expect(reopened.pragma("journal_mode", { simple: true })).toBe("delete");
    expect(reopened.prepare("SELECT name FROM sqlite_master ORDER BY name").pluck().all()).toEqual([
      "orders",
      "users",
    ]);
    reopened.close();
  });

  it("R11: a database written by a newer schema version is refused, saying to upgrade", async () => {
    const path = newPath();
    const store = sqliteSessionStore({ path });
    await store.append("s", 0, [{ v: 1 }]);
    await store.close();
    const raw = new Database(path);
    raw.prepare("UPDATE lattice_meta SET value = '2' WHERE key = 'schema_version'").run();
    raw.close();
    const error = await errorOf(() => sqliteSessionStore({ path }));
    expect(error).toMatchObject({ code: "sqlite_schema_too_new", path });
    expect(error.message).toBe(
      `sqliteSessionStore: ${JSON.stringify(path)} was written by a newer @lattice/store-sqlite (session schema version 2; this version reads up to 1). Upgrade @lattice/store-sqlite to open it.`,
    );
  });

  it("R22: checks its options strictly", async () => {
    expect(() => sqliteSessionStore({ path: newPath(), synchronus: "full" } as never)).toThrow(
      'sqliteSessionStore: unknown option "synchronus". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(() => sqliteSessionStore({ path: "" })).toThrow(
      'sqliteSessionStore: option "path" must be a non-empty string (the SQLite file to keep sessions in, or ":memory:"), received "".',
    );
    expect(() => sqliteSessionStore(undefined as never)).toThrow(
      'sqliteSessionStore: option "path" is required: pass { path: "sessions.db" }, the SQLite file to keep sessions in.',
    );
    expect(() => sqliteSessionStore({ path: newPath(), synchronous: "off" as never })).toThrow(
      'sqliteSessionStore: option "synchronous" must be "normal" or "full", received "off".',
    );
    const store = sqliteSessionStore({ path: ":memory:" });
    await expect(store.append("s", -1, [{ v: 1 }])).rejects.toThrow(
      'sqliteSessionStore: append(): option "expectedVersion" must be a non-negative integer',
    );
    await expect(store.append("s", 0, [])).rejects.toThrow(
      'sqliteSessionStore: append(): option "entries" must be a non-empty array of JSON objects (empty only with a fence), received [].',
    );
    await expect(store.append("s", 0, [[1] as never])).rejects.toThrow(
      "entries[0] is an array, not a plain object.",
    );
    await expect(store.load("")).rejects.toThrow(
      'sqliteSessionStore: load(): option "sessionId" must be a non-empty string, received "".',
    );
    await store.close();
  });

  it(`R8: an append that finds the file locked for more than ${SQLITE_BUSY_TIMEOUT_MS} ms fails with sqlite_busy`, async () => {
    const path = newPath();
    const store = sqliteSessionStore({ path });
    const holder = new Database(path);
    holder.exec("BEGIN IMMEDIATE");
    const started = Date.now();
    const error = await errorOf(() => store.append("s", 0, [{ v: 1 }]));
    expect(Date.now() - started).toBeGreaterThanOrEqual(SQLITE_BUSY_TIMEOUT_MS - 100);
    expect(error).toMatchObject({ code: "sqlite_busy", path });
    expect(error.message).toContain('while appending to session "s"');
    holder.exec("ROLLBACK");
    holder.close();
    expect(await store.append("s", 0, [{ v: 1 }])).toBe(1);
    await store.close();
  });
});

describe("sqliteSessionStore() checkpoints (C8)", () => {
  it("C8: a database made before checkpoints (no checkpoints table) opens, gets the table, loads whole until a checkpoint is saved, and keeps schema version 1", async () => {
    const path = newPath();
    // The schema as the release before checkpoints wrote it.
    const old = new Database(path);
    old.pragma("journal_mode = WAL");
    old.exec(`
      CREATE TABLE lattice_meta (key TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL);
      CREATE TABLE lattice_session_entries (
        session_id TEXT NOT NULL, seq INTEGER NOT NULL, entry TEXT NOT NULL,
        PRIMARY KEY (session_id, seq)
      );
      CREATE TABLE lattice_session_fences (session_id TEXT PRIMARY KEY NOT NULL, fence INTEGER NOT NULL);
      INSERT INTO lattice_meta (key, value) VALUES ('schema_version', '1');
      INSERT INTO lattice_session_entries (session_id, seq, entry)
        VALUES ('s', 1, '{"v":1}'), ('s', 2, '{"v":2}'), ('s', 3, '{"v":3}');
    `);
    old.close();
    const store = sqliteSessionStore({ path });
    expect(store.checkpoints).toBe(true);
    expect(await store.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 1 }, { v: 2 }, { v: 3 }],
      version: 3,
    });
    expect(await store.saveCheckpoint!("s", { version: 2, state: { z: 1, a: [1] } })).toBe(true);
    expect(await store.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 3 }],
      version: 3,
      checkpoint: { version: 2, state: { z: 1, a: [1] } },
    });
    const raw = new Database(path, { readonly: true });
    expect(raw.prepare("SELECT value FROM lattice_meta").pluck().all()).toEqual(["1"]);
    expect(raw.prepare("SELECT * FROM lattice_session_checkpoints").all()).toEqual([
      { session_id: "s", version: 2, state: '{"z":1,"a":[1]}' },
    ]);
    raw.close();
    expect(await store.delete("s")).toBe(true);
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT count(*) FROM lattice_session_checkpoints").pluck().get()).toBe(0);
    after.close();
    await store.close();
  });

  it("C8: a checkpoint saved through one connection is read, with its tail, through another; a checkpoint left beyond the entries (an older release's delete) is passed over and replaced", async () => {
    const path = newPath();
    const first = sqliteSessionStore({ path });
    const second = sqliteSessionStore({ path });
    await first.append("s", 0, [{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(await first.saveCheckpoint!("s", { version: 3, state: "three" })).toBe(true);
    expect(await second.saveCheckpoint!("s", { version: 2, state: "two" })).toBe(false);
    await second.append("s", 3, [{ v: 4 }]);
    expect(await second.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 4 }],
      version: 4,
      checkpoint: { version: 3, state: "three" },
    });
    // An older release deletes the session's entries only, and the session is written again.
    const raw = new Database(path);
    raw.prepare("DELETE FROM lattice_session_entries WHERE session_id = 's'").run();
    raw.close();
    await first.append("s", 0, [{ v: "again" }]);
    expect(await second.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: "again" }],
      version: 1,
    });
    expect(await second.saveCheckpoint!("s", { version: 1, state: "fresh" })).toBe(true);
    expect(await first.load("s", { fromCheckpoint: true })).toEqual({
      entries: [],
      version: 1,
      checkpoint: { version: 1, state: "fresh" },
    });
    await first.close();
    await second.close();
  });

  it("C8: a 100,000-entry session loads from a checkpoint near its end by the (session_id, seq) key, reading only the tail", async () => {
    const path = newPath();
    const store = sqliteSessionStore({ path });
    const total = 100_000;
    for (let start = 0; start < total; start += 5000) {
      const batch = Array.from({ length: 5000 }, (_, n) => ({
        v: 1,
        type: "reply",
        n: start + n,
        text: "x".repeat(200),
      }));
      await store.append("long", start, batch);
    }
    expect(
      await store.saveCheckpoint!("long", { version: total - 10, state: { summary: "s" } }),
    ).toBe(true);
    let best = Number.POSITIVE_INFINITY;
    for (let attempt = 0; attempt < 5; attempt++) {
      const started = performance.now();
      const snapshot = await store.load("long", { fromCheckpoint: true });
      best = Math.min(best, performance.now() - started);
      expect(snapshot.version).toBe(total);
      expect(snapshot.checkpoint).toEqual({ version: total - 10, state: { summary: "s" } });
      expect(snapshot.entries.map((entry) => entry.n)).toEqual(
        Array.from({ length: 10 }, (_, n) => total - 10 + n),
      );
    }
    expect(best).toBeLessThan(50);
    const raw = new Database(path, { readonly: true });
    const plan = raw
      .prepare(
        "EXPLAIN QUERY PLAN SELECT entry FROM lattice_session_entries WHERE session_id = ? AND seq > ? ORDER BY seq",
      )
      .all("long", total - 10) as { detail: string }[];
    expect(plan.map((row) => row.detail).join("\n")).toMatch(
      /SEARCH lattice_session_entries USING INDEX \S+ \(session_id=\? AND seq>\?\)/,
    );
    raw.close();
    await store.close();
  });

  it("R22: checks the arguments of saveCheckpoint and the options of load strictly", async () => {
    const store = sqliteSessionStore({ path: ":memory:" });
    await store.append("s", 0, [{ v: 1 }]);
    await expect(store.saveCheckpoint!("", { version: 1, state: {} })).rejects.toThrow(
      'sqliteSessionStore: saveCheckpoint(): option "sessionId" must be a non-empty string, received "".',
    );
    await expect(store.saveCheckpoint!("s", { version: 0, state: {} })).rejects.toThrow(
      'sqliteSessionStore: saveCheckpoint(): option "checkpoint.version" must be an integer >= 1 (how many of the session\'s entries the state covers), received 0.',
    );
    await expect(
      store.saveCheckpoint!("s", { version: 1, state: { at: new Date(0) } as never }),
    ).rejects.toThrow(
      'sqliteSessionStore: saveCheckpoint(): option "checkpoint.state" must be JSON: checkpoint.state.at is a Date, not a plain object. A state may contain strings, finite numbers, booleans, null, arrays and plain objects only.',
    );
    await expect(store.saveCheckpoint!("s", { version: 1 } as never)).rejects.toThrow(
      'option "checkpoint.state" must be JSON: checkpoint.state is undefined.',
    );
    await expect(store.saveCheckpoint!("s", null as never)).rejects.toThrow(
      'sqliteSessionStore: saveCheckpoint(): option "checkpoint" must be an object { version, state }, received null.',
    );
    await expect(
      store.saveCheckpoint!("s", { version: 1, state: {}, at: 1 } as never),
    ).rejects.toThrow(
      'option "checkpoint" must hold only version and state, received the key "at".',
    );
    await expect(store.load("s", { fromCheckpoint: "yes" } as never)).rejects.toThrow(
      'sqliteSessionStore: load(): option "fromCheckpoint" must be a boolean (true to read from the session\'s latest checkpoint, C8), received "yes".',
    );
    await expect(store.load("s", { fromCheckpont: true } as never)).rejects.toThrow(
      'sqliteSessionStore: load(): unknown option "fromCheckpont".',
    );
    expect(await store.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 1 }],
      version: 1,
    });
    await store.close();
  });
});
