import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
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
 * Checks a `connection` option at once: ioredis options or a client (an object), or a string
 * that ioredis reads as meant. Strings are judged on ioredis's own parse (the options a lazily
 * created client of the ioredis this package depends on reads from them), so everything ioredis takes as a host, a port or a socket
 * path is accepted (`"redis://:pw@host:6379/0"`, `"rediss://host"`, `"localhost:6379"`,
 * `"6379"`, `"/tmp/redis.sock"`, `"unix:///tmp/redis.sock"`), and refused is only what it
 * would misread or what cannot connect: a scheme other than `redis://`, `rediss://` and
 * `unix://`; a string it would take for a socket path that does not look like one
 * (`"redis//host"`, read as the path `//host` on host `redis`); a port outside 1–65535; a
 * database that is not a number. Internal.
 *
 * @throws `InvalidOptionError` otherwise, showing the string with its password redacted:
 *   without this check the connection would fail only after the connect timeout.
 */
export function checkConnection(prefix: string, connection: unknown): void {
  if (
    typeof connection === "string"
      ? connection === ""
      : connection === null || typeof connection !== "object"
  ) {
    throw new InvalidOptionError(
      prefix,
      "connection",
      `is required: a Redis URL ("redis://127.0.0.1:6379"), ioredis options, or an ioredis client; received ${describeValue(connection)}.`,
    );
  }
  if (typeof connection !== "string") return;
  const problem = connectionStringProblem(connection);
  if (problem !== undefined) {
    throw new InvalidOptionError(
      prefix,
      "connection",
      `${problem}; received ${JSON.stringify(describeConnection(connection))}. Pass a Redis URL ("redis://127.0.0.1:6379", "rediss://:password@host:6380/0"), a socket path ("/tmp/redis.sock"), ioredis options, or an ioredis client.`,
    );
  }
}

/** What ioredis would misread in a connection string, or what cannot connect; else undefined. */
function connectionStringProblem(text: string): string | undefined {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(text)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "redis" && scheme !== "rediss" && scheme !== "unix") {
    return `has the scheme "${scheme}://", which is not Redis's (redis://, rediss://, unix://)`;
  }
  const parsed = readConnectionString(text);
  if (parsed.path !== undefined && !/^(\/|unix:)/i.test(text)) {
    const host = parsed.host !== undefined && parsed.host !== "" ? ` on host "${parsed.host}"` : "";
    return `would be read by ioredis as a Unix socket path${host}, not as a URL (is "://" mistyped?)`;
  }
  if (parsed.path === undefined && parsed.port !== undefined) {
    const port = parsed.port;
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      return `has the port "${String(port)}", not one from 1 to 65535`;
    }
  }
  if (parsed.db !== undefined && !(Number.isInteger(parsed.db) && parsed.db >= 0)) {
    const named = /\/([^/?#]*)(?:[?#]|$)/.exec(text.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, ""));
    return `names the database "${named?.[1] ?? String(parsed.db)}", which is not a number`;
  }
  return undefined;
}

/**
 * How the ioredis this package depends on reads a connection string: its own parse, through
 * the public constructor with `lazyConnect` (nothing connects; the client is dropped at once),
 * so the check never disagrees with what ioredis would do.
 */
function readConnectionString(text: string): Pick<RedisOptions, "host" | "port" | "path" | "db"> {
  const client = new Redis(text, { lazyConnect: true });
  const { host, port, path, db } = client.options;
  client.disconnect();
  return { host, port, path, db };
}

/**
 * A connection as messages name it: `redis://host:port/db`, without the password (neither in
 * the userinfo nor in a `password` query parameter, which ioredis also reads). A string that
 * does not parse as a URL is shown with everything up to its last `@` (after the scheme)
 * and every `password=` value redacted.
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
      return (
        connection
          // Up to the last "@": a password may hold "@" itself.
          .replace(/^([a-z][a-z0-9+.-]*:?\/*)?.*@/i, "$1***@")
          .replace(/(password=)[^&#]*/gi, "$1***")
      );
    }
  }
  const options = isRedisClient(connection) ? connection.options : connection;
  if (options.path !== undefined) return `unix:${options.path}`;
  const db = options.db !== undefined && options.db !== 0 ? `/${options.db}` : "";
  return `redis://${options.host ?? "127.0.0.1"}:${options.port ?? 6379}${db}`;
}
