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
import { Redis } from "ioredis";
import { defineSessionScripts, type SessionKeys } from "./define-session-scripts.js";
import { describeRedisClient, redactRedisUrl } from "./describe-redis-server.js";
import { RedisSessionStoreError } from "./redis-session-store-error.js";

/** Options of {@link redisSessionStore}: give exactly one of `url` and `client`. */
export interface RedisSessionStoreOptions {
  /**
   * The Redis server, as a `redis://` or `rediss://` (TLS) URL such as
   * `"redis://:password@127.0.0.1:6379/0"`. The store creates its own ioredis client, connects
   * on first use, and quits the client on `close()`.
   */
  readonly url?: string;
  /**
   * An ioredis `Redis` client that the caller owns, for settings the URL cannot carry
   * (Sentinel, TLS certificates, a shared connection). The store adds its script commands to
   * it (`latticeSessionAppendV2`, `latticeSessionDeleteV3`, `latticeSessionLoadCheckpointV1`,
   * `latticeSessionSaveCheckpointV1`) and never quits it: `close()` leaves it open. A Redis
   * Cluster client is refused (see the README).
   */
  readonly client?: Redis;
  /**
   * Prepended to every key the store writes. Default `"lattice:"`. It must not contain `{` or
   * `}` (the session keys carry a hash tag).
   */
  readonly keyPrefix?: string;
  /**
   * The store's label in messages (`SessionStore.name`). Default:
   * `redisSessionStore("redis://host:port")`, password redacted.
   */
  readonly name?: string;
  /**
   * How long one store call may wait for Redis, connecting included, before it rejects with
   * code `"redis_timeout"`, in milliseconds. Default 10 000.
   */
  readonly timeoutMs?: number;
}

/** A `SessionStore` on Redis, as {@link redisSessionStore} returns it. */
export interface RedisSessionStore extends SessionStore {
  /** The store's label: the `name` option, or `redisSessionStore("<url>")`. */
  readonly name: string;
  /** The server, as a URL with its password redacted. */
  readonly url: string;
  /** The prefix of every key the store writes. */
  readonly keyPrefix: string;
  /**
   * Connects (when not connected yet) and checks that Redis answers. Optional: every call
   * connects by itself; use it to fail at startup rather than on the first conversation.
   *
   * @throws {@link RedisSessionStoreError} with code `"redis_unreachable"`,
   *   `"redis_timeout"` or `"redis_command_failed"` (for example a wrong password).
   */
  ready(): Promise<void>;
  /**
   * Quits the client the store created from `url` (a client given as `client` stays open).
   * Idempotent; the store refuses every call after it (`"redis_store_closed"`).
   */
  close(): Promise<void>;
}

const OPTION_KEYS = ["url", "client", "keyPrefix", "name", "timeoutMs"] as const;
const PREFIX = "redisSessionStore:";
const DEFAULT_KEY_PREFIX = "lattice:";
const DEFAULT_TIMEOUT_MS = 10_000;
/** setTimeout's longest delay. */
const MAX_TIMEOUT_MS = 2_147_483_647;

/**
 * A durable, shared `SessionStore` (of `@lattice/core`) on Redis through `ioredis` (D1). Every
 * process and worker that opens the same server and `keyPrefix` sees the same sessions.
 *
 * A session's entries are a Redis list `<keyPrefix>session:{<sessionId>}` of JSON texts, exactly
 * as appended; its version is the list's length. The set `<keyPrefix>sessions` indexes the
 * session ids for `list()`. An append is one Lua script (EVALSHA) that compares the list's
 * length with `expectedVersion`, then pushes every entry and indexes the session: Redis runs
 * it alone, so of two writers with the same `expectedVersion`, in any processes, exactly one
 * wins and the other gets a `SessionConflictError` (R8, D2). A fenced append (H28) compares
 * and raises the session's fence, a string `<keyPrefix>fence:{<sessionId>}`, in the same
 * script, refusing a lower fence with `SessionFencedError`. How durable an acknowledged
 * append is depends on the server's persistence: use `appendonly yes` (see the README).
 *
 * It keeps checkpoints (C8, `checkpoints: true`): the latest one of each session in a hash
 * `<keyPrefix>checkpoint:{<sessionId>}` (its version and its state's JSON text). Saving and
 * loading from it are Lua scripts too: `saveCheckpoint` keeps a checkpoint only when the list
 * holds its entries and it is newer, and `load(sessionId, { fromCheckpoint: true })` reads the
 * checkpoint and `LRANGE` from its index in one step, so loading a long session costs what
 * happened since its checkpoint. `delete` removes the checkpoint with the session.
 *
 * Nothing connects until the first call (or `ready()`). A call that cannot reach Redis rejects
 * with a {@link RedisSessionStoreError} naming the URL (password redacted), within `timeoutMs`:
 * the store's own client retries a refused connection once, then fails.
 *
 * @param options - `url` or `client` (exactly one), `keyPrefix` (`"lattice:"`), `name`,
 *   `timeoutMs` (10 000).
 * @throws `InvalidOptionError` (code `"invalid_option"`) when neither or both of `url` and
 *   `client` are given, `url` is not a `redis://` or `rediss://` URL, `client` is not an ioredis
 *   `Redis` (or is a Cluster), `keyPrefix` is not a string without braces, `name` is not a
 *   non-empty string, or `timeoutMs` is not a positive number; `UnknownOptionError` (code
 *   `"unknown_option"`) on an unknown option (R22).
 */
export function redisSessionStore(options: RedisSessionStoreOptions): RedisSessionStore {
  if (options === undefined) {
    throw new InvalidOptionError(
      PREFIX,
      "url",
      'is required: pass { url: "redis://127.0.0.1:6379" }, or { client } with an ioredis client you own.',
    );
  }
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  const {
    url: givenUrl,
    client: givenClient,
    keyPrefix = DEFAULT_KEY_PREFIX,
    timeoutMs = DEFAULT_TIMEOUT_MS,
  } = options;
  checkConnectionOptions(givenUrl, givenClient);
  if (typeof keyPrefix !== "string" || /[{}]/.test(keyPrefix)) {
    throw new InvalidOptionError(
      PREFIX,
      "keyPrefix",
      `must be a string without "{" or "}" (the session keys carry a hash tag), received ${describeValue(keyPrefix)}.`,
    );
  }
  if (typeof timeoutMs !== "number" || !(timeoutMs > 0) || timeoutMs > MAX_TIMEOUT_MS) {
    throw new InvalidOptionError(
      PREFIX,
      "timeoutMs",
      `must be a positive number of milliseconds (at most ${MAX_TIMEOUT_MS}), received ${describeValue(timeoutMs)}.`,
    );
  }
  if (
    options.name !== undefined &&
    (typeof options.name !== "string" || options.name.length === 0)
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "name",
      `must be a non-empty string, received ${describeValue(options.name)}.`,
    );
  }

  const owned = givenClient === undefined;
  const url = owned ? redactRedisUrl(givenUrl!) : describeRedisClient(givenClient);
  const name =
    options.name ??
    (keyPrefix === DEFAULT_KEY_PREFIX
      ? `redisSessionStore(${JSON.stringify(url)})`
      : `redisSessionStore(${JSON.stringify(url)}, keyPrefix ${JSON.stringify(keyPrefix)})`);
  let lastConnectionError: Error | undefined;
  const client = givenClient ?? createClient(givenUrl!, timeoutMs);
  if (owned) {
    // Keep the last connection error for messages (and keep ioredis from printing it).
    client.on("error", (error: Error) => {
      lastConnectionError = error;
    });
    client.on("ready", () => {
      lastConnectionError = undefined;
    });
  }
  const scripts = defineSessionScripts(client);
  const indexKey = `${keyPrefix}sessions`;
  const sessionKey = (sessionId: string) => `${keyPrefix}session:{${sessionId}}`;
  const keysOf = (sessionId: string): SessionKeys => ({
    session: sessionKey(sessionId),
    index: indexKey,
    fence: `${keyPrefix}fence:{${sessionId}}`,
    checkpoint: `${keyPrefix}checkpoint:{${sessionId}}`,
  });
  let closing: Promise<void> | undefined;

  /**
   * Runs one Redis call within `timeoutMs`, turning ioredis's errors into the store's: closed
   * store, unreachable server, timeout, an error reply.
   */
  async function use<T>(doing: string, key: string | undefined, call: () => Promise<T>) {
    if (closing !== undefined) {
      throw new RedisSessionStoreError(
        "redis_store_closed",
        url,
        `${PREFIX} the store of ${url} is closed (${doing}). Open a new one with redisSessionStore({ url }).`,
      );
    }
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new DeadlineError()), timeoutMs);
    });
    try {
      return await Promise.race([call(), deadline]);
    } catch (error) {
      throw storeError(error, doing, key);
    } finally {
      clearTimeout(timer);
    }
  }

  function storeError(error: unknown, doing: string, key: string | undefined): Error {
    if (
      error instanceof SessionConflictError ||
      error instanceof SessionFencedError ||
      error instanceof RedisSessionStoreError
    ) {
      return error;
    }
    const appending = doing.startsWith("appending");
    const maybeApplied = appending
      ? " If the connection was lost after the append was sent, it may have been applied: load the session to see."
      : "";
    if (error instanceof DeadlineError) {
      return new RedisSessionStoreError(
        "redis_timeout",
        url,
        `${PREFIX} Redis at ${url} did not answer within ${timeoutMs} ms while ${doing}.${maybeApplied} Check that Redis is running and reachable (an overloaded server or a firewall that drops packets can cause this), or raise timeoutMs.`,
      );
    }
    const cause = error instanceof Error ? error : new Error(String(error));
    if (cause.name === "ReplyError") return replyError(cause, doing, key);
    const detail = lastConnectionError?.message ?? cause.message;
    return new RedisSessionStoreError(
      "redis_unreachable",
      url,
      `${PREFIX} cannot reach Redis at ${url} while ${doing} (${detail}).${maybeApplied} Start Redis (for example redis-server, or docker run -p 6379:6379 redis:7), or check the URL and that this machine can reach it.`,
      { cause },
    );
  }

  function replyError(cause: Error, doing: string, key: string | undefined): Error {
    const reply = cause.message;
    if (/^WRONGTYPE/.test(reply)) {
      return new RedisSessionStoreError(
        "redis_not_a_session",
        url,
        `${PREFIX} the key ${JSON.stringify(key ?? indexKey)} on ${url} holds a value of another type, not one this store wrote (${doing}). Another application uses these keys: choose another keyPrefix, or remove that key.`,
        { cause },
      );
    }
    const hint = /^(NOAUTH|WRONGPASS)/.test(reply)
      ? "Check the user name and password in the URL (redis://user:password@host:6379)."
      : /^OOM/.test(reply)
        ? "Redis is out of memory (maxmemory): free memory or raise maxmemory. Nothing was written."
        : /^READONLY/.test(reply)
          ? "This server is a read-only replica: point the store at the primary."
          : /^LOADING/.test(reply)
            ? "Redis is loading its data after a restart: try again in a moment."
            : "See Redis's reply above.";
    return new RedisSessionStoreError(
      "redis_command_failed",
      url,
      `${PREFIX} Redis at ${url} refused ${doing}: ${reply}. ${hint}`,
      { cause },
    );
  }

  return {
    name,
    url,
    keyPrefix,
    // Appends honour SessionAppendOptions.fence (H28).
    fencedAppends: true,
    // saveCheckpoint and load(sessionId, { fromCheckpoint: true }) (C8).
    checkpoints: true,

    async ready() {
      await use("checking the connection (PING)", undefined, () => client.ping());
    },

    async load(sessionId: string, options?: SessionLoadOptions): Promise<SessionSnapshot> {
      const prefix = `${PREFIX} load():`;
      checkSessionId(prefix, sessionId);
      const fromCheckpoint = checkLoadOptions(prefix, options);
      const doing = `loading session ${JSON.stringify(sessionId)}`;
      const key = sessionKey(sessionId);
      if (fromCheckpoint) {
        const keys = keysOf(sessionId);
        const [version, state, texts] = await use(doing, key, () => scripts.loadCheckpoint(keys));
        const start = version === "" ? 0 : Number(version);
        const entries = parseEntries(texts, start, key);
        if (version === "") return { entries, version: entries.length };
        const checkpoint: SessionCheckpoint = {
          version: start,
          state: parseState(state, keys.checkpoint),
        };
        return { entries, version: start + entries.length, checkpoint };
      }
      const texts = await use(doing, key, () => client.lrange(key, 0, -1));
      const entries = parseEntries(texts, 0, key);
      return { entries, version: entries.length };
    },

    async saveCheckpoint(sessionId: string, checkpoint: SessionCheckpoint) {
      const prefix = `${PREFIX} saveCheckpoint():`;
      checkSessionId(prefix, sessionId);
      const { version, text } = serializeCheckpoint(prefix, checkpoint);
      const keys = keysOf(sessionId);
      const saved = await use(
        `saving a checkpoint of session ${JSON.stringify(sessionId)}`,
        keys.checkpoint,
        () => scripts.saveCheckpoint(keys, version, text),
      );
      return saved === 1;
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
      const keys = keysOf(sessionId);
      const [applied, value] = await use(
        `appending to session ${JSON.stringify(sessionId)}`,
        keys.session,
        () => scripts.append(keys, expectedVersion, sessionId, fence, texts),
      );
      if (applied === 2) throw new SessionFencedError(sessionId, fence!, Number(value));
      if (applied !== 1) {
        throw new SessionConflictError(sessionId, expectedVersion, Number(value));
      }
      return Number(value);
    },

    async list() {
      // Sorted here: the contract's order is JavaScript's (UTF-16 code units).
      return (await use("listing sessions", indexKey, () => client.smembers(indexKey))).sort();
    },

    async delete(sessionId: string) {
      checkSessionId(`${PREFIX} delete():`, sessionId);
      const keys = keysOf(sessionId);
      const removed = await use(`deleting session ${JSON.stringify(sessionId)}`, keys.session, () =>
        scripts.delete(keys, sessionId),
      );
      return removed === 1;
    },

    close() {
      closing ??= owned ? quit(client, timeoutMs) : Promise.resolve();
      return closing;
    },
  };

  /** Parses the list's items from index `start` on. */
  function parseEntries(texts: readonly string[], start: number, key: string): SessionEntry[] {
    const entries = new Array<SessionEntry>(texts.length);
    for (let index = 0; index < texts.length; index++) {
      entries[index] = parseEntry(texts[index]!, start + index, key);
    }
    return entries;
  }

  function parseState(text: string, key: string): SessionCheckpoint["state"] {
    try {
      return JSON.parse(text) as SessionCheckpoint["state"];
    } catch {
      throw new RedisSessionStoreError(
        "redis_not_a_session",
        url,
        `${PREFIX} the state in ${JSON.stringify(key)} on ${url} is not JSON (${describeValue(text)}): this store did not write it. Another application uses these keys: choose another keyPrefix.`,
      );
    }
  }

  function parseEntry(text: string, index: number, key: string): SessionEntry {
    let entry: unknown;
    try {
      entry = JSON.parse(text);
    } catch {
      entry = undefined;
    }
    if (entry === null || typeof entry !== "object" || Array.isArray(entry)) {
      throw new RedisSessionStoreError(
        "redis_not_a_session",
        url,
        `${PREFIX} item ${index} of ${JSON.stringify(key)} on ${url} is not a JSON object (${describeValue(text)}): this store did not write it. Another application uses these keys: choose another keyPrefix.`,
      );
    }
    return entry as SessionEntry;
  }
}

/** A call outlived the store's `timeoutMs`. */
class DeadlineError extends Error {}

function checkConnectionOptions(url: unknown, client: unknown): void {
  if (url !== undefined && client !== undefined) {
    throw new InvalidOptionError(
      PREFIX,
      "client",
      'and option "url" were both given: pass one, { url } for a client the store creates and closes, or { client } for an ioredis client you own.',
    );
  }
  if (url === undefined && client === undefined) {
    throw new InvalidOptionError(
      PREFIX,
      "url",
      'is required: pass { url: "redis://127.0.0.1:6379" }, or { client } with an ioredis client you own.',
    );
  }
  if (client !== undefined) {
    const candidate = client as Partial<Record<"defineCommand" | "lrange" | "isCluster", unknown>>;
    if (
      client === null ||
      typeof client !== "object" ||
      typeof candidate.defineCommand !== "function" ||
      typeof candidate.lrange !== "function"
    ) {
      throw new InvalidOptionError(
        PREFIX,
        "client",
        `must be an ioredis client (new Redis(...) from "ioredis"), received ${describeValue(client)}.`,
      );
    }
    if (candidate.isCluster === true) {
      throw new InvalidOptionError(
        PREFIX,
        "client",
        "is a Redis Cluster client, which this store does not support: an append updates the session's list and the session index in one script, and a cluster keeps them on different slots. Pass a Redis client of one primary (standalone, or through Sentinel).",
      );
    }
    return;
  }
  let protocol: string | undefined;
  try {
    protocol = typeof url === "string" ? new URL(url).protocol : undefined;
  } catch {
    protocol = undefined;
  }
  if (protocol !== "redis:" && protocol !== "rediss:") {
    const shown =
      typeof url === "string" ? JSON.stringify(redactRedisUrl(url)) : describeValue(url);
    throw new InvalidOptionError(
      PREFIX,
      "url",
      `must be a redis:// or rediss:// URL, for example "redis://127.0.0.1:6379" or "redis://:password@host:6379/0", received ${shown}.`,
    );
  }
}

/** The store's own client: connects on first use, fails fast when the server is down. */
function createClient(url: string, timeoutMs: number): Redis {
  return new Redis(url, {
    lazyConnect: true,
    connectTimeout: Math.min(timeoutMs, DEFAULT_TIMEOUT_MS),
    // A refused connection is retried once, then the waiting calls fail; the client keeps
    // reconnecting in the background, so the store works again once Redis is back.
    maxRetriesPerRequest: 1,
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 2000),
    // A call cut by a lost connection is not sent again: an append that reached Redis would
    // come back as a conflict with itself. It times out instead, saying to load the session.
    autoResendUnfulfilledCommands: false,
  });
}

async function quit(client: Redis, timeoutMs: number): Promise<void> {
  if (client.status === "ready") {
    let timer: NodeJS.Timeout | undefined;
    try {
      await Promise.race([
        client.quit(),
        new Promise((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
        }),
      ]);
    } catch {
      // The connection is going away anyway.
    } finally {
      clearTimeout(timer);
    }
  }
  client.disconnect();
}
