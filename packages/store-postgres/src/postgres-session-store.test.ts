import { runSessionStoreConformance } from "@lattice/core/testing";
import { type PostgresServer, startPostgres } from "@lattice/test-servers";
import { Pool } from "pg";
import { afterAll, beforeAll, describe, it } from "vitest";
import { type PostgresSessionStore, postgresSessionStore } from "./index.js";

let server: PostgresServer;
const pools: Pool[] = [];
beforeAll(async () => {
  server = await startPostgres();
});
afterAll(async () => {
  await Promise.all(pools.map((pool) => pool.end()));
  await server?.stop();
});

let tables = 0;
const newTable = () => `conformance_${tables++}`;

/** A store on its own fresh table, migrated. */
async function migrated(store: PostgresSessionStore): Promise<PostgresSessionStore> {
  await store.migrate();
  return store;
}

describe("D1: postgresSessionStore({ connectionString }) passes the conformance suite (R12) on PostgreSQL 15", () => {
  runSessionStoreConformance(
    () =>
      migrated(
        postgresSessionStore({ connectionString: server.connectionString, table: newTable() }),
      ),
    it,
    {
      // A new store with a new pool over the same table, as another process would open it.
      reopen: async (store) => {
        await store.close();
        return postgresSessionStore({
          connectionString: server.connectionString,
          table: store.table,
        });
      },
    },
  );
});

describe("D1: postgresSessionStore({ pool }) passes the conformance suite (R12) on a pool of the caller's, in a schema of its own", () => {
  const poolOf = () => {
    const pool = new Pool({ connectionString: server.connectionString, max: 4 });
    pools.push(pool);
    return pool;
  };
  runSessionStoreConformance(
    () => migrated(postgresSessionStore({ pool: poolOf(), table: `conformance.${newTable()}` })),
    it,
    {
      reopen: async (store) => {
        await store.close();
        return postgresSessionStore({ pool: poolOf(), table: store.table });
      },
    },
  );
});
