import { Redis, type RedisOptions } from "ioredis";
import { RunQueueError } from "./errors.js";

/**
 * Where Redis is: a URL (`"redis://127.0.0.1:6379"`), ioredis options, or an ioredis client
 * you own (Lattice works on duplicates of it, with the settings BullMQ needs, and never
 * closes it).
 */
export type RedisConnection = string | RedisOptions | Redis;

/**
 * A Redis client for Lattice's own keys. Lattice created it (a caller's client is duplicated,
 * never used itself), so Lattice closes it. Internal.
 */
export interface OpenedClient {
  readonly client: Redis;
  /** The connection as messages name it, password redacted. */
  readonly label: string;
  /** The last connection error seen, for messages. */
  lastError(): string | undefined;
}

/**
 * Opens a client on a connection. Clients Lattice creates retry forever (BullMQ's blocking
 * commands need `maxRetriesPerRequest: null`), so a Redis restart is survived; readiness is
 * checked with a deadline by {@link waitUntilReady}. Internal.
 */
export function openClient(connection: RedisConnection): OpenedClient {
  let client: Redis;
  if (typeof connection === "string") {
    client = new Redis(connection, { maxRetriesPerRequest: null });
  } else if (isRedisClient(connection)) {
    // Your client stays yours: Lattice works on a copy with the settings BullMQ needs.
    client = connection.duplicate({ maxRetriesPerRequest: null });
  } else {
    client = new Redis({ ...connection, maxRetriesPerRequest: null });
  }
  return track(client, describeConnection(connection));
}

/** A second connection on the same server, owned by Lattice (for blocking reads). Internal. */
export function duplicateClient(opened: OpenedClient): OpenedClient {
  return track(opened.client.duplicate({ maxRetriesPerRequest: null }), opened.label);
}

function track(client: Redis, label: string): OpenedClient {
  let last: string | undefined;
  // Connection errors are reported by the operation that needs the connection; without a
  // listener ioredis would print each one.
  client.on("error", (error: Error) => {
    last = error.message;
  });
  return { client, label, lastError: () => last };
}

/**
 * Waits until the client is connected, or fails after `timeoutMs` with an error naming the
 * server. Internal.
 *
 * @throws `RunQueueError` `redis_unreachable`.
 */
export async function waitUntilReady(opened: OpenedClient, timeoutMs: number): Promise<void> {
  const client = opened.client;
  if (client.status === "ready") return;
  if (client.status === "wait") client.connect().catch(() => {});
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      client.off("ready", onReady);
      const cause = opened.lastError();
      reject(
        new RunQueueError(
          "redis_unreachable",
          `Could not connect to Redis at ${opened.label} within ${timeoutMs} ms${cause !== undefined ? ` (${cause})` : ""}. Start Redis there (for example: redis-server --port ${client.options.port ?? 6379}), or pass the right connection; the client keeps retrying in the background.`,
        ),
      );
    }, timeoutMs);
    const onReady = (): void => {
      clearTimeout(timer);
      resolve();
    };
    client.once("ready", onReady);
  });
}

/** Closes a client Lattice opened (never the caller's own, which was only duplicated). Internal. */
export async function closeClient(opened: OpenedClient): Promise<void> {
  // QUIT on a client that is not connected would wait in the offline queue for ever.
  if (opened.client.status !== "ready") {
    opened.client.disconnect();
    return;
  }
  try {
    await opened.client.quit();
  } catch {
    opened.client.disconnect();
  }
}

/** Whether a connection is an ioredis client (by shape: another copy of ioredis counts). */
function isRedisClient(connection: RedisConnection): connection is Redis {
  return (
    typeof (connection as Redis).duplicate === "function" &&
    typeof (connection as Redis).xadd === "function"
  );
}

/**
 * A connection as messages name it: `redis://host:port/db`, without the password (neither in
 * the userinfo nor in a `password` query parameter, which ioredis also reads).
 */
export function describeConnection(connection: RedisConnection): string {
  if (typeof connection === "string") {
    try {
      const url = new URL(connection);
      if (url.password !== "") url.password = "***";
      for (const key of [...url.searchParams.keys()]) {
        if (key.toLowerCase() === "password") url.searchParams.set(key, "***");
      }
      return url.toString();
    } catch {
      return "(an unparsable Redis URL)";
    }
  }
  const options = isRedisClient(connection) ? connection.options : connection;
  if (options.path !== undefined) return `unix:${options.path}`;
  const db = options.db !== undefined && options.db !== 0 ? `/${options.db}` : "";
  return `redis://${options.host ?? "127.0.0.1"}:${options.port ?? 6379}${db}`;
}
