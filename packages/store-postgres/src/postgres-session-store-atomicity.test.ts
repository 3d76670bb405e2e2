/**
 * D2 on a real PostgreSQL 15: compare-and-append is atomic across pools (separate connections,
 * as separate processes have), backed by the unique (session_id, seq) key; migrate() is
 * explicit and idempotent, also when run concurrently; entries keep their JSON text.
 */
import { SessionConflictError, type SessionEntry } from "@lattice/core";
import { type PostgresServer, startPostgres } from "@lattice/test-servers";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type PostgresSessionStore, postgresSessionStore } from "./index.js";
import { sessionTable } from "./session-table.js";

let server: PostgresServer;
let admin: Pool;
const stores: PostgresSessionStore[] = [];
beforeAll(async () => {
  server = await startPostgres();
  admin = new Pool({ connectionString: server.connectionString });
});
afterAll(async () => {
  await Promise.all(stores.map((store) => store.close()));
  await admin?.end();
  await server?.stop();
});

let tables = 0;
const newTable = () => `d2_${tables++}`;

/** A store with a pool of its own (its own connections), closed after the file. */
function openStore(table: string): PostgresSessionStore {
  const store = postgresSessionStore({ connectionString: server.connectionString, table });
  stores.push(store);
  return store;
}

/** The session's rows as the database holds them. */
async function rowsOf(table: string, sessionId: string) {
  const { rows } = await admin.query<{ seq: number; entry: string }>(
    `SELECT seq, entry FROM ${table} WHERE session_id = $1 ORDER BY seq`,
    [sessionId],
  );
  return rows;
}

async function errorOf(call: () => unknown): Promise<Error & Record<string, unknown>> {
  try {
    await call();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

describe("compare-and-append across pools", () => {
  it("D2: 8 writers on 8 pools appending at the same expectedVersion: exactly one wins each round, the others get SessionConflictError, and the rows are 1..n without a gap", async () => {
    const table = newTable();
    const writers = Array.from({ length: 8 }, () => openStore(table));
    await writers[0]!.migrate();
    let version = 0;
    for (let round = 0; round < 10; round++) {
      const outcomes = await Promise.allSettled(
        writers.map((store, writer) =>
          store.append("race", version, [
            { v: 1, round, writer, part: 0 },
            { v: 1, round, writer, part: 1 },
          ]),
        ),
      );
      const winners = outcomes.filter((outcome) => outcome.status === "fulfilled");
      expect(winners).toEqual([{ status: "fulfilled", value: version + 2 }]);
      for (const outcome of outcomes) {
        if (outcome.status === "rejected") {
          expect(outcome.reason).toBeInstanceOf(SessionConflictError);
          expect(outcome.reason).toMatchObject({
            code: "session_conflict",
            expectedVersion: version,
          });
        }
      }
      version += 2;
    }
    const rows = await rowsOf(table, "race");
    expect(rows.map((row) => row.seq)).toEqual(Array.from({ length: 20 }, (_, index) => index + 1));
    for (let round = 0; round < 10; round++) {
      const [first, second] = [rows[2 * round]!, rows[2 * round + 1]!].map(
        (row) => JSON.parse(row.entry) as { round: number; writer: number; part: number },
      );
      expect(first).toMatchObject({ round, part: 0 });
      expect(second).toMatchObject({ round, writer: first!.writer, part: 1 });
    }
  });

  it("D2: every expectedVersion but the current one is refused with the actual version, below it or above it, and leaves no gap", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
    await store.append("s", 0, [
      { v: 1, n: 1 },
      { v: 1, n: 2 },
      { v: 1, n: 3 },
    ]);
    for (const stale of [0, 1, 2, 4, 5, 1000, 2 ** 31, Number.MAX_SAFE_INTEGER]) {
      const conflict = await errorOf(() => store.append("s", stale, [{ v: 1, stale }]));
      expect(conflict).toBeInstanceOf(SessionConflictError);
      expect(conflict).toMatchObject({ expectedVersion: stale, actualVersion: 3 });
    }
    expect((await rowsOf(table, "s")).map((row) => row.seq)).toEqual([1, 2, 3]);
    expect(await store.append("s", 3, [{ v: 1, n: 4 }])).toBe(4);
  });

  it("D2: the unique (session_id, seq) key refuses a row another writer inserted first, even one that skips the store's lock: the append is a conflict with the actual version", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
    const intruder = await admin.connect();
    try {
      await intruder.query("BEGIN");
      await intruder.query(`INSERT INTO ${table} (session_id, seq, entry) VALUES ('s', 1, $1)`, [
        '{"v":1,"by":"intruder"}',
      ]);
      // The store reads version 0 (the row is not committed) and inserts seq 1, which waits
      // on the intruder's uncommitted key; the intruder commits, and the key refuses ours.
      const appending = errorOf(() => store.append("s", 0, [{ v: 1, by: "store" }]));
      for (let tries = 0; ; tries++) {
        const { rows } = await admin.query(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE 'WITH current AS%'",
        );
        if (rows[0].n === 1) break;
        if (tries > 100) throw new Error("the store's insert never waited on the intruder's key");
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await intruder.query("COMMIT");
      const conflict = await appending;
      expect(conflict).toBeInstanceOf(SessionConflictError);
      expect(conflict).toMatchObject({ expectedVersion: 0, actualVersion: 1 });
    } finally {
      intruder.release();
    }
    expect((await store.load("s")).entries).toEqual([{ v: 1, by: "intruder" }]);
  });

  it("D2: appends racing deletes of the same session never leave a gap or a half batch", async () => {
    const table = newTable();
    const [writer, deleter] = [openStore(table), openStore(table)];
    await writer.migrate();
    for (let round = 0; round < 30; round++) {
      const { version } = await writer.load("s");
      await Promise.allSettled([
        writer.append("s", version, [
          { v: 1, round, part: 0 },
          { v: 1, round, part: 1 },
        ]),
        deleter.delete("s"),
      ]);
      const seqs = (await rowsOf(table, "s")).map((row) => row.seq);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, index) => index + 1));
      expect(seqs.length % 2).toBe(0);
    }
  });
});

describe("migrate()", () => {
  it("D2: is explicit and idempotent: twice in a row, and from 8 pools at once", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
    await store.append("kept", 0, [{ v: 1, kept: true }]);
    await store.migrate();
    await Promise.all(Array.from({ length: 8 }, () => openStore(table).migrate()));
    expect((await store.load("kept")).entries).toEqual([{ v: 1, kept: true }]);

    const fresh = newTable();
    await Promise.all(Array.from({ length: 8 }, () => openStore(fresh).migrate()));
    expect(await openStore(fresh).append("s", 0, [{ v: 1 }])).toBe(1);
  });

  it("D2: creates the documented schema: text entries kept as appended, a unique (session_id, seq) key, created_at", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
    const { rows: columns } = await admin.query(
      `SELECT column_name, data_type, is_nullable FROM information_schema.columns
       WHERE table_name = $1 ORDER BY ordinal_position`,
      [table],
    );
    expect(columns).toEqual([
      { column_name: "session_id", data_type: "text", is_nullable: "NO" },
      { column_name: "seq", data_type: "integer", is_nullable: "NO" },
      { column_name: "entry", data_type: "text", is_nullable: "NO" },
      { column_name: "created_at", data_type: "timestamp with time zone", is_nullable: "NO" },
    ]);
    const { rows: keys } = await admin.query(
      `SELECT pg_get_constraintdef(oid) AS definition FROM pg_constraint
       WHERE conrelid = $1::regclass AND contype = 'p'`,
      [table],
    );
    expect(keys).toEqual([{ definition: "PRIMARY KEY (session_id, seq)" }]);

    const entry: SessionEntry = { v: 1, z: 1, a: [1, { y: 2, b: 3 }], text: "ünï 😀 \u0000" };
    await store.append("s", 0, [entry]);
    const rows = await rowsOf(table, "s");
    expect(rows).toEqual([{ seq: 1, entry: JSON.stringify(entry) }]);
    expect(rows[0]!.entry).toBe('{"v":1,"z":1,"a":[1,{"y":2,"b":3}],"text":"ünï 😀 \\u0000"}');
  });

  it("D2: a schema-qualified table gets its schema created when missing", async () => {
    const store = openStore("lattice_app.sessions");
    await store.migrate();
    await store.migrate();
    expect(await store.append("s", 0, [{ v: 1 }])).toBe(1);
    const { rows } = await admin.query("SELECT count(*)::int AS n FROM lattice_app.sessions");
    expect(rows).toEqual([{ n: 1 }]);
  });

  it("D2: refuses a table of that name that is not a session table, and leaves it alone", async () => {
    await admin.query("CREATE TABLE someone_elses (id serial PRIMARY KEY, name text)");
    await admin.query("INSERT INTO someone_elses (name) VALUES ('keep me')");
    const store = openStore("someone_elses");
    const error = await errorOf(() => store.migrate());
    expect(error).toMatchObject({
      name: "PostgresSessionStoreError",
      code: "postgres_not_a_session_table",
      table: "someone_elses",
    });
    expect(error.message).toBe(
      `postgresSessionStore: the table someone_elses in PostgreSQL at 127.0.0.1:${server.port}/lattice is not a Lattice session table: it lacks the columns session_id text, seq integer, entry text (it has id integer, name text). The store never writes into another table: choose another name with the table option.`,
    );
    const { rows } = await admin.query("SELECT name FROM someone_elses");
    expect(rows).toEqual([{ name: "keep me" }]);
  });
});

describe("fences (H28)", () => {
  it("H28: a table migrated before fencing keeps working unfenced (appends, deletes); a fenced append says to migrate again, and after migrate() it is fenced", async () => {
    const table = newTable();
    // The schema as the release before fencing created it: no fences table.
    await admin.query(`CREATE TABLE ${table} (
      session_id text NOT NULL, seq integer NOT NULL, entry text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (session_id, seq))`);
    await admin.query(`INSERT INTO ${table} (session_id, seq, entry) VALUES ('old', 1, '{"v":1}')`);
    const store = openStore(table);
    expect(await store.load("old")).toEqual({ entries: [{ v: 1 }], version: 1 });
    expect(await store.append("old", 1, [{ v: 2 }])).toBe(2);
    expect(await store.append("gone", 0, [{ v: 1 }])).toBe(1);
    expect(await store.delete("gone")).toBe(true);
    const error = await errorOf(() => store.append("old", 2, [{ v: 3 }], { fence: 5 }));
    expect(error).toMatchObject({ code: "postgres_schema_missing", table });
    expect(error.message).toContain(`the fences table "${table}_fences" does not exist`);
    expect(error.message).toContain("Run await store.migrate() once more");
    expect(await rowsOf(table, "old")).toHaveLength(2);

    await store.migrate();
    expect(await store.append("old", 2, [{ v: 3 }], { fence: 5 })).toBe(3);
    expect(await errorOf(() => store.append("old", 3, [{ v: 4 }], { fence: 4 }))).toMatchObject({
      name: "SessionFencedError",
      code: "session_fenced",
      fence: 4,
      currentFence: 5,
    });
    const { rows } = await admin.query(`SELECT session_id, fence FROM ${table}_fences`);
    expect(rows).toEqual([{ session_id: "old", fence: "5" }]);
  });

  it("H28: a fenced writer on one pool is refused once another pool raised the session's fence, and a long table name gets a fences table of its own", async () => {
    const long = `d2_${"x".repeat(56)}_${tables++}`.slice(0, 63);
    const sibling = `${long.slice(0, 62)}y`;
    const [first, second, third] = [openStore(long), openStore(long), openStore(sibling)];
    await first.migrate();
    await third.migrate();
    expect(await first.append("s", 0, [{ v: 1 }], { fence: 1 })).toBe(1);
    expect(await second.append("s", 1, [], { fence: 2 })).toBe(1);
    expect(await errorOf(() => first.append("s", 1, [{ v: 2 }], { fence: 1 }))).toMatchObject({
      code: "session_fenced",
      currentFence: 2,
    });
    // Another table's sessions have fences of their own, though the names share 62 characters.
    expect(await third.append("s", 0, [{ v: 1 }], { fence: 1 })).toBe(1);
    const { rows } = await admin.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE tablename LIKE '%_fences' AND tablename LIKE 'd2_xxx%' ORDER BY 1",
    );
    expect(rows).toHaveLength(2);
    for (const { name } of rows) expect(name.length).toBeLessThanOrEqual(63);
  });
});

describe("fences, cheaply (H28)", () => {
  it("H28: a fence row is written only when the fence grows (no dead row per append of a step), and never lowered", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
    const fenceRow = async () =>
      (
        await admin.query<{ fence: string; version: string }>(
          `SELECT fence, xmin::text AS version FROM ${table}_fences WHERE session_id = 's'`,
        )
      ).rows[0];
    expect(await store.append("s", 0, [], { fence: 5 })).toBe(0);
    const raised = await fenceRow();
    // The step's appends carry the fence it raised: the row stays as it is.
    expect(await store.append("s", 0, [{ v: 1 }], { fence: 5 })).toBe(1);
    expect(await store.append("s", 1, [{ v: 2 }], { fence: 5 })).toBe(2);
    expect(await fenceRow()).toEqual(raised);
    expect(await store.append("s", 2, [], { fence: 9 })).toBe(2);
    expect(await fenceRow()).toMatchObject({ fence: "9" });
    expect((await fenceRow())?.version).not.toBe(raised?.version);
  });

  it("H28: migrate() refuses a fences table without a unique session_id, which fenced appends need", async () => {
    const table = newTable();
    await admin.query(
      `CREATE TABLE ${table}_fences (session_id text NOT NULL, fence bigint NOT NULL)`,
    );
    const error = await errorOf(() => openStore(table).migrate());
    expect(error).toMatchObject({ code: "postgres_not_a_session_table" });
    expect(error.message).toContain(`"${table}_fences"`);
    expect(error.message).toContain("primary key");
  });

  it("H28: delete() looks for the fences table once per store, not on every call", async () => {
    const table = newTable();
    const writer = openStore(table);
    await writer.migrate();
    for (const id of ["a", "b", "c"]) await writer.append(id, 0, [{ v: 1 }], { fence: 3 });
    const pool = new Pool({ connectionString: server.connectionString });
    const statements: string[] = [];
    const connect = pool.connect.bind(pool);
    const watched = new WeakSet<object>();
    // Every statement the store sends, through the pool it was given.
    pool.connect = (async () => {
      const client = await connect();
      if (watched.has(client)) return client;
      watched.add(client);
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      client.query = ((...args: unknown[]) => {
        if (typeof args[0] === "string") statements.push(args[0]);
        return query(...args);
      }) as typeof client.query;
      return client;
    }) as typeof pool.connect;
    const store = postgresSessionStore({ pool, table });
    try {
      for (const id of ["a", "b", "c"]) expect(await store.delete(id)).toBe(true);
      expect(statements.filter((text) => text.includes("to_regclass"))).toHaveLength(1);
      // And the fences went with the sessions.
      const { rows } = await admin.query(`SELECT session_id FROM ${table}_fences`);
      expect(rows).toEqual([]);
    } finally {
      await pool.end();
    }
  });
});

describe("checkpoints (C8)", () => {
  it("C8: a table migrated before checkpoints keeps working: loads read whole sessions, deletes work, a save says to migrate again; after migrate() checkpoints are kept", async () => {
    const table = newTable();
    // The schema as the release before checkpoints created it: entries and fences.
    await admin.query(`CREATE TABLE ${table} (
      session_id text NOT NULL, seq integer NOT NULL, entry text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(), PRIMARY KEY (session_id, seq))`);
    await admin.query(
      `CREATE TABLE ${table}_fences (session_id text PRIMARY KEY, fence bigint NOT NULL)`,
    );
    await admin.query(
      `INSERT INTO ${table} (session_id, seq, entry) VALUES ('old', 1, '{"v":1}'), ('old', 2, '{"v":2}')`,
    );
    const store = openStore(table);
    expect(await store.load("old", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 1 }, { v: 2 }],
      version: 2,
    });
    expect(await store.append("gone", 0, [{ v: 1 }])).toBe(1);
    expect(await store.delete("gone")).toBe(true);
    const error = await errorOf(() => store.saveCheckpoint!("old", { version: 1, state: "one" }));
    expect(error).toMatchObject({ code: "postgres_schema_missing", table });
    expect(error.message).toContain(`the checkpoints table "${table}_checkpoints" does not exist`);
    expect(error.message).toContain("Run await store.migrate() once more");

    // Another process migrates: this store finds the table without being told.
    await openStore(table).migrate();
    expect(await store.saveCheckpoint!("old", { version: 1, state: "one" })).toBe(true);
    expect(await store.load("old", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 2 }],
      version: 2,
      checkpoint: { version: 1, state: "one" },
    });
    const { rows } = await admin.query(
      `SELECT session_id, version, state FROM ${table}_checkpoints`,
    );
    expect(rows).toEqual([{ session_id: "old", version: "1", state: '"one"' }]);
    expect(await store.delete("old")).toBe(true);
    expect((await admin.query(`SELECT 1 FROM ${table}_checkpoints`)).rows).toEqual([]);
  });

  it("C8: a checkpoint saved on one pool is read with its tail on another; one left beyond the entries (an older release's delete) is passed over and replaced", async () => {
    const table = newTable();
    const [first, second] = [openStore(table), openStore(table)];
    await first.migrate();
    await first.append("s", 0, [{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(await first.saveCheckpoint!("s", { version: 3, state: { z: 1, a: "three" } })).toBe(
      true,
    );
    expect(await second.saveCheckpoint!("s", { version: 2, state: "two" })).toBe(false);
    await second.append("s", 3, [{ v: 4 }]);
    expect(await second.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: 4 }],
      version: 4,
      checkpoint: { version: 3, state: { z: 1, a: "three" } },
    });
    // An older release deletes the session's entries only, and the session is written again.
    await admin.query(`DELETE FROM ${table} WHERE session_id = 's'`);
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
  });

  it("C8: migrate() refuses a checkpoints table without a unique session_id, and a long table name gets a checkpoints table of its own", async () => {
    const table = newTable();
    await admin.query(
      `CREATE TABLE ${table}_checkpoints (session_id text NOT NULL, version bigint NOT NULL, state text NOT NULL)`,
    );
    const error = await errorOf(() => openStore(table).migrate());
    expect(error).toMatchObject({ code: "postgres_not_a_session_table" });
    expect(error.message).toContain(`"${table}_checkpoints"`);
    expect(error.message).toContain("primary key");

    const long = `c8_${"x".repeat(56)}_${tables++}`.slice(0, 63);
    const sibling = `${long.slice(0, 62)}y`;
    const [first, second] = [openStore(long), openStore(sibling)];
    await first.migrate();
    await second.migrate();
    await first.append("s", 0, [{ v: 1 }]);
    await second.append("s", 0, [{ v: 1 }]);
    expect(await first.saveCheckpoint!("s", { version: 1, state: "first" })).toBe(true);
    expect(await second.saveCheckpoint!("s", { version: 1, state: "second" })).toBe(true);
    expect((await first.load("s", { fromCheckpoint: true })).checkpoint?.state).toBe("first");
    const { rows } = await admin.query<{ name: string }>(
      "SELECT tablename AS name FROM pg_tables WHERE tablename LIKE '%_checkpoints' AND tablename LIKE 'c8_xxx%' ORDER BY 1",
    );
    expect(rows).toHaveLength(2);
    for (const { name } of rows) expect(name.length).toBeLessThanOrEqual(63);
  });

  it("C8: a 100,000-entry session loads from a checkpoint near its end by the (session_id, seq) key, reading only the tail", async () => {
    const table = newTable();
    const store = openStore(table);
    await store.migrate();
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
    await admin.query(`ANALYZE ${table}`);
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
    const plan = await admin.query<{ "QUERY PLAN": string }>(
      `EXPLAIN (ANALYZE, COSTS OFF) ${sessionTable("test", table).statements.loadFromCheckpoint}`,
      ["long"],
    );
    const text = plan.rows.map((row) => row["QUERY PLAN"]).join("\n");
    // The tail by the key: an index scan bounded by seq, never a scan of the session's rows.
    expect(text).toMatch(
      new RegExp(`(Bitmap Index Scan on|Index (Only )?Scan using) ${table}_pkey .*rows=10 loops=1`),
    );
    expect(text).toMatch(/Index Cond: \(\(session_id = [^)]+\) AND \(seq > /);
    expect(text).not.toMatch(new RegExp(`Seq Scan on ${table}\\b`));
    expect(text).not.toMatch(/rows=(100000|99990)\b/);
  });

  it("R22: checks the arguments of saveCheckpoint and the options of load strictly, before any statement", async () => {
    const store = openStore(newTable());
    await expect(store.saveCheckpoint!("s", { version: 1.5, state: {} })).rejects.toThrow(
      'postgresSessionStore: saveCheckpoint(): option "checkpoint.version" must be an integer >= 1 (how many of the session\'s entries the state covers), received 1.5.',
    );
    await expect(store.saveCheckpoint!("s", { version: 1, state: [1n] as never })).rejects.toThrow(
      'postgresSessionStore: saveCheckpoint(): option "checkpoint.state" must be JSON: checkpoint.state[0] is a bigint.',
    );
    await expect(store.load("s", { fromCheckpoint: 1 } as never)).rejects.toThrow(
      'postgresSessionStore: load(): option "fromCheckpoint" must be a boolean',
    );
    await expect(store.load("s", { from: true } as never)).rejects.toThrow(
      'postgresSessionStore: load(): unknown option "from".',
    );
  });
});
