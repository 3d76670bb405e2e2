import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { postgresSessionStore } from "@lattice/store-postgres";
import { redisSessionStore } from "@lattice/store-redis";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import type { SessionStore } from "agent-lattice";

/** Where the run logs are kept, as `--store` names it. */
export type StoreSpec =
  | { readonly kind: "redis"; readonly url: string | undefined }
  | { readonly kind: "postgres"; readonly connectionString: string }
  | { readonly kind: "sqlite"; readonly path: string };

/**
 * Reads `--store`: `redis` (the queue's Redis), a `redis://` or `rediss://` URL (another
 * Redis), a `postgres://` or `postgresql://` connection string, or `sqlite:<file>` (a path
 * ending in `.sqlite` or `.db` works too; relative to the current folder).
 *
 * @param text - The option's value.
 * @returns The store, or a message saying what is wrong.
 */
export function parseStoreSpec(text: string): StoreSpec | string {
  if (text === "redis") return { kind: "redis", url: undefined };
  if (/^rediss?:\/\//.test(text)) return { kind: "redis", url: text };
  if (/^postgres(ql)?:\/\//.test(text)) return { kind: "postgres", connectionString: text };
  const path = text.startsWith("sqlite:") ? text.slice("sqlite:".length) : text;
  if (text.startsWith("sqlite:") || /\.(sqlite3?|db)$/i.test(text)) {
    if (path === "") return "--store sqlite: needs a file, for example sqlite:.data/runs.sqlite";
    return { kind: "sqlite", path: resolve(path) };
  }
  return `--store must be redis, a redis:// URL, a postgres:// URL or sqlite:<file>, got "${text}".`;
}

/** The `--store` value that names a store again, for a worker started by `start`. */
export function formatStoreSpec(spec: StoreSpec): string {
  if (spec.kind === "redis") return spec.url ?? "redis";
  if (spec.kind === "postgres") return spec.connectionString;
  return `sqlite:${spec.path}`;
}

/** An open session store and what to call it. */
export interface OpenStore {
  readonly store: SessionStore;
  /** The store as the app prints it (passwords left out). */
  readonly label: string;
  close(): Promise<void>;
}

/**
 * Opens the session store every worker shares; in Postgres, creates its table if missing
 * (`migrate()` is idempotent and safe from several processes at once).
 *
 * @param spec - The store.
 * @param redisUrl - The queue's Redis, for `--store redis`.
 * @returns The store.
 */
export async function openSessionStore(spec: StoreSpec, redisUrl: string): Promise<OpenStore> {
  if (spec.kind === "redis") {
    const store = redisSessionStore({ url: spec.url ?? redisUrl });
    return { store, label: store.name, close: () => store.close() };
  }
  if (spec.kind === "postgres") {
    const store = postgresSessionStore({ connectionString: spec.connectionString });
    await store.migrate();
    return { store, label: store.name, close: () => store.close() };
  }
  mkdirSync(dirname(spec.path), { recursive: true });
  const store = sqliteSessionStore({ path: spec.path });
  return { store, label: `sqliteSessionStore(${spec.path})`, close: () => store.close() };
}
