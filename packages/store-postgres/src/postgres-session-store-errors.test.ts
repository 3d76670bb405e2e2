import { createServer, type Socket } from "node:net";
import { type PostgresServer, startPostgres } from "@lattice/test-servers";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  POSTGRES_CONNECT_TIMEOUT_MS,
  PostgresSessionStoreError,
  postgresSessionStore,
} from "./index.js";

let server: PostgresServer;
let admin: Pool;
beforeAll(async () => {
  server = await startPostgres();
  admin = new Pool({ connectionString: server.connectionString });
});
afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

let tables = 0;
const newTable = () => `errors_${tables++}`;

async function errorOf(call: () => unknown): Promise<Error & Record<string, unknown>> {
  try {
    await call();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

/** A loopback port where nothing listens (it was free a moment ago). */
function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe("errors", () => {
  it("D2: a store whose table was never migrated fails every call with postgres_schema_missing, naming store.migrate()", async () => {
    const store = postgresSessionStore({
      connectionString: server.connectionString,
      table: "never_migrated",
    });
    try {
      const error = await errorOf(() => store.load("s"));
      expect(error).toBeInstanceOf(PostgresSessionStoreError);
      expect(error).toMatchObject({
        name: "PostgresSessionStoreError",
        code: "postgres_schema_missing",
        table: "never_migrated",
        sqlState: "42P01",
      });
      expect(error.message).toBe(
        `postgresSessionStore: the table never_migrated does not exist in PostgreSQL at 127.0.0.1:${server.port}/lattice (loading session "s"). Create it once with await store.migrate() before using the store: it is idempotent and safe to run from several processes at once.`,
      );
      for (const call of [
        () => store.append("s", 0, [{ v: 1 }]),
        () => store.list(),
        () => store.delete("s"),
      ]) {
        expect(await errorOf(call)).toMatchObject({ code: "postgres_schema_missing" });
      }
      const qualified = postgresSessionStore({
        connectionString: server.connectionString,
        table: "no_such_schema.sessions",
      });
      const missingSchema = await errorOf(() => qualified.load("s"));
      expect(missingSchema).toMatchObject({ code: "postgres_schema_missing", sqlState: "42P01" });
      expect(missingSchema.message).toContain("await store.migrate()");
      await qualified.close();
    } finally {
      await store.close();
    }
  });

  it("D1: an unreachable server fails with postgres_connection_failed naming host, port and database, never the password, and saying what to do", async () => {
    const port = await closedPort();
    const store = postgresSessionStore({
      connectionString: `postgres://lattice:s3cret-pw@127.0.0.1:${port}/sessions_db`,
    });
    try {
      const error = await errorOf(() => store.load("s"));
      expect(error).toBeInstanceOf(PostgresSessionStoreError);
      expect(error).toMatchObject({ code: "postgres_connection_failed" });
      expect(error.message).toBe(
        `postgresSessionStore: could not connect to PostgreSQL at 127.0.0.1:${port}/sessions_db (postgres://lattice:***@127.0.0.1:${port}/sessions_db) while loading session "s": connect ECONNREFUSED 127.0.0.1:${port}. Nothing accepts connections there: start the server, or fix the host and port.`,
      );
      expect(error.message).not.toContain("s3cret");
      expect(store.name).toBe(
        `postgresSessionStore("127.0.0.1:${port}/sessions_db", "lattice_session_entries")`,
      );
    } finally {
      await store.close();
    }
  });

  it(`D1: a server that never answers fails within the connection timeout (${POSTGRES_CONNECT_TIMEOUT_MS} ms by default; connect_timeout from the string)`, async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket));
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const { port } = silent.address() as { port: number };
    const store = postgresSessionStore({
      connectionString: `postgres://lattice@127.0.0.1:${port}/lattice?connect_timeout=1`,
    });
    try {
      const started = Date.now();
      const error = await errorOf(() => store.append("s", 0, [{ v: 1 }]));
      expect(Date.now() - started).toBeLessThan(5000);
      expect(error).toMatchObject({ code: "postgres_connection_failed" });
      expect(error.message).toContain(
        `could not connect to PostgreSQL at 127.0.0.1:${port}/lattice`,
      );
      expect(error.message).toContain("No connection within 1000 ms");
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      silent.close();
    }
  });

  it("D1: a pool of the caller's that cannot connect is described from its options, password left out", async () => {
    const port = await closedPort();
    const pool = new Pool({
      host: "127.0.0.1",
      port,
      database: "app",
      user: "someone",
      password: "hunter2",
      connectionTimeoutMillis: 500,
    });
    const store = postgresSessionStore({ pool });
    try {
      const error = await errorOf(() => store.list());
      expect(error).toMatchObject({ code: "postgres_connection_failed" });
      expect(error.message).toContain(
        `could not connect to PostgreSQL at 127.0.0.1:${port}/app while listing sessions`,
      );
      expect(error.message).not.toContain("hunter2");
    } finally {
      await store.close();
      await pool.end();
    }
  });

  it("D1: a database that does not exist is named, with what to do", async () => {
    const store = postgresSessionStore({
      connectionString: `postgres://lattice@127.0.0.1:${server.port}/missing_db`,
    });
    try {
      const error = await errorOf(() => store.migrate());
      expect(error).toMatchObject({ code: "postgres_connection_failed", sqlState: "3D000" });
      expect(error.message).toContain(`PostgreSQL at 127.0.0.1:${server.port}/missing_db`);
      expect(error.message).toContain('database "missing_db" does not exist');
      expect(error.message).toContain("create it (for example with createdb)");
    } finally {
      await store.close();
    }
  });

  it("D1: a statement the server refuses (no privilege) fails with postgres_query_failed and its SQLSTATE", async () => {
    const table = newTable();
    const owner = postgresSessionStore({ connectionString: server.connectionString, table });
    await owner.migrate();
    await admin.query("CREATE ROLE lattice_reader LOGIN");
    const reader = postgresSessionStore({
      connectionString: `postgres://lattice_reader@127.0.0.1:${server.port}/lattice`,
      table,
    });
    try {
      const error = await errorOf(() => reader.load("s"));
      expect(error).toMatchObject({ code: "postgres_query_failed", sqlState: "42501" });
      expect(error.message).toBe(
        `postgresSessionStore: PostgreSQL at 127.0.0.1:${server.port}/lattice refused loading session "s" on table ${table}: permission denied for table ${table} (SQLSTATE 42501). Check the user's privileges on the table and the server's log.`,
      );
    } finally {
      await reader.close();
      await owner.close();
    }
  });

  it("D1: an owned pool survives the server dropping its idle connections (no unhandled error), and the next call reconnects", async () => {
    const table = newTable();
    const store = postgresSessionStore({ connectionString: server.connectionString, table });
    try {
      await store.migrate();
      await store.append("s", 0, [{ v: 1 }]);
      await admin.query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND datname = 'lattice' AND backend_type = 'client backend'",
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect((await store.load("s")).version).toBe(1);
    } finally {
      await store.close();
    }
  });
});

describe("close()", () => {
  it("D1: is idempotent; the store refuses calls after it; a pool of the caller's stays open", async () => {
    const pool = new Pool({ connectionString: server.connectionString });
    const table = newTable();
    const store = postgresSessionStore({ pool, table });
    await store.migrate();
    await store.close();
    await store.close();
    const error = await errorOf(() => store.load("s"));
    expect(error).toMatchObject({ code: "postgres_store_closed", table });
    expect(error.message).toBe(
      `postgresSessionStore: the store of table ${table} at 127.0.0.1:${server.port}/lattice is closed (loading session "s"). Create a new one with postgresSessionStore({ connectionString }) or ({ pool }).`,
    );
    expect((await pool.query("SELECT 1 AS one")).rows).toEqual([{ one: 1 }]);
    await pool.end();

    const owned = postgresSessionStore({ connectionString: server.connectionString, table });
    await owned.load("s");
    await owned.close();
    await owned.close();
    expect(await errorOf(() => owned.migrate())).toMatchObject({ code: "postgres_store_closed" });
  });
});

describe("options", () => {
  const connectionString = "postgres://lattice@127.0.0.1:1/lattice";

  it("R22: postgresSessionStore() checks its options strictly", () => {
    expect(() => postgresSessionStore({ connectionString, tabel: "x" } as never)).toThrow(
      'postgresSessionStore: unknown option "tabel". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    const pool = new Pool({ connectionString });
    expect(() => postgresSessionStore({ pool, connectionString })).toThrow(
      'postgresSessionStore: option "pool" cannot be combined with "connectionString": pass one of them, { pool } to use a pg.Pool of yours (close() leaves it open) or { connectionString } to let the store create and own one.',
    );
    void pool.end();
    const required =
      'postgresSessionStore: option "connectionString" is required: pass { connectionString: "postgres://user:password@host:5432/database" }, or { pool } with a pg.Pool of yours.';
    expect(() => postgresSessionStore({})).toThrow(required);
    expect(() => postgresSessionStore(undefined as never)).toThrow(required);
    expect(() => postgresSessionStore({ connectionString: "" })).toThrow(
      'postgresSessionStore: option "connectionString" must be a non-empty string ("postgres://user:password@host:5432/database"), received "".',
    );
    expect(() => postgresSessionStore({ pool: { query() {} } as never })).toThrow(
      'postgresSessionStore: option "pool" must be a pg.Pool (new Pool({ connectionString }) from "pg"), received {}.',
    );
    expect(() => postgresSessionStore({ connectionString, name: "" })).toThrow(
      'postgresSessionStore: option "name" must be a non-empty string, received "".',
    );
    for (const table of [
      "",
      "1st",
      "Sessions",
      "a.b.c",
      "a;drop table x",
      '"quoted"',
      "x".repeat(64),
      7,
    ]) {
      expect(() => postgresSessionStore({ connectionString, table: table as string })).toThrow(
        `postgresSessionStore: option "table" must be a table name, optionally schema-qualified ("sessions" or "app.sessions"), of lower-case letters, digits and underscores, not starting with a digit, each part at most 63 characters; received `,
      );
    }
    for (const table of ["sessions", "_s2", "app.sessions", "x".repeat(63)]) {
      expect(postgresSessionStore({ connectionString, table }).table).toBe(table);
    }
    expect(postgresSessionStore({ connectionString, name: "chat" }).name).toBe("chat");
  });

  it("R22: calls check their arguments as every Lattice store does", async () => {
    const store = postgresSessionStore({ connectionString });
    await expect(store.append("s", -1, [{ v: 1 }])).rejects.toThrow(
      'postgresSessionStore: append(): option "expectedVersion" must be a non-negative integer',
    );
    await expect(store.append("s", 0, [])).rejects.toThrow(
      'postgresSessionStore: append(): option "entries" must be a non-empty array of JSON objects (empty only with a fence), received [].',
    );
    await expect(store.load("")).rejects.toThrow(
      'postgresSessionStore: load(): option "sessionId" must be a non-empty string, received "".',
    );
    await expect(store.delete(7 as never)).rejects.toThrow(
      'postgresSessionStore: delete(): option "sessionId" must be a non-empty string, received 7.',
    );
    await store.close();
  });
});
