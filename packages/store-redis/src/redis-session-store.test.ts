import { createServer, type Server, type Socket } from "node:net";
import { SessionConflictError, type SessionEntry } from "@lattice/core";
import { runSessionStoreConformance } from "@lattice/core/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { Cluster, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type RedisSessionStore, RedisSessionStoreError, redisSessionStore } from "./index.js";

let server: RedisServer;
/** A client of the test's own, to look at keys and to serve as a caller-owned client. */
let inspector: Redis;
beforeAll(async () => {
  server = await startRedis();
  inspector = new Redis(server.url);
});
afterAll(async () => {
  await inspector?.quit();
  await server?.stop();
});

async function errorOf(call: () => unknown): Promise<Error & Record<string, unknown>> {
  try {
    await call();
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

/** A loopback port nothing listens on (it was free a moment ago). */
function deadPort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const address = probe.address();
      probe.close(() => resolve(typeof address === "object" && address ? address.port : 1));
    });
  });
}

let prefixes = 0;
const freshPrefix = () => `test-${process.pid}-${prefixes++}:`;

describe("D1: redisSessionStore({ url }) passes the conformance suite", () => {
  runSessionStoreConformance(() => redisSessionStore({ url: server.url }), it, {
    reopen: async (store) => {
      await store.close();
      return redisSessionStore({ url: server.url });
    },
  });
});

describe("D1: redisSessionStore({ client }) passes the conformance suite", () => {
  runSessionStoreConformance(() => redisSessionStore({ client: inspector }), it, {
    reopen: async (store) => {
      await store.close();
      return redisSessionStore({ client: inspector, keyPrefix: store.keyPrefix });
    },
  });
});

describe("redisSessionStore()", () => {
  it("D2: of 12 stores on separate connections appending at the same version, exactly one wins each round and no entries interleave", async () => {
    const keyPrefix = freshPrefix();
    const stores = Array.from({ length: 12 }, () =>
      redisSessionStore({ url: server.url, keyPrefix }),
    );
    try {
      await Promise.all(stores.map((store) => store.ready()));
      const expected: SessionEntry[] = [];
      for (let round = 0; round < 10; round++) {
        const version = expected.length;
        const batches = stores.map((_, writer) =>
          [0, 1, 2].map((part) => ({ v: 1, round, writer, part })),
        );
        const outcomes = await Promise.allSettled(
          stores.map((store, writer) => store.append("race", version, batches[writer]!)),
        );
        const winners = outcomes.flatMap((outcome, writer) =>
          outcome.status === "fulfilled" ? [writer] : [],
        );
        expect(winners).toHaveLength(1);
        for (const outcome of outcomes) {
          if (outcome.status === "fulfilled") expect(outcome.value).toBe(version + 3);
          else {
            expect(outcome.reason).toBeInstanceOf(SessionConflictError);
            expect(outcome.reason).toMatchObject({
              code: "session_conflict",
              sessionId: "race",
              expectedVersion: version,
              actualVersion: version + 3,
            });
          }
        }
        expected.push(...batches[winners[0]!]!);
        expect(await stores[round]!.load("race")).toEqual({
          entries: expected,
          version: expected.length,
        });
      }
    } finally {
      await Promise.all(stores.map((store) => store.close()));
    }
  });

  it("D2: the key layout: a list of JSON texts per session, hash-tagged, and a set indexing the ids", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
    await store.append("chat 1", 0, [{ v: 1, z: 1, a: [1, 2] }]);
    await store.append("chat 1", 1, [{ v: 1, text: "é" }]);
    await store.append("other", 0, [{ v: 1 }]);
    expect(await inspector.type(`${keyPrefix}session:{chat 1}`)).toBe("list");
    expect(await inspector.lrange(`${keyPrefix}session:{chat 1}`, 0, -1)).toEqual([
      '{"v":1,"z":1,"a":[1,2]}',
      '{"v":1,"text":"é"}',
    ]);
    expect((await inspector.smembers(`${keyPrefix}sessions`)).sort()).toEqual(["chat 1", "other"]);
    expect(await store.delete("chat 1")).toBe(true);
    expect(await store.delete("chat 1")).toBe(false);
    expect(await inspector.exists(`${keyPrefix}session:{chat 1}`)).toBe(0);
    expect(await inspector.smembers(`${keyPrefix}sessions`)).toEqual(["other"]);
    // A client's own ioredis keyPrefix goes in front of the store's.
    const prefixed = new Redis(server.url, { keyPrefix: "app:" });
    await redisSessionStore({ client: prefixed, keyPrefix }).append("p", 0, [{ v: 1 }]);
    expect(await inspector.llen(`app:${keyPrefix}session:{p}`)).toBe(1);
    expect(await inspector.sismember(`app:${keyPrefix}sessions`, "p")).toBe(1);
    prefixed.disconnect();
    // Stores with other prefixes do not see each other's sessions.
    expect(await redisSessionStore({ client: inspector, keyPrefix: freshPrefix() }).list()).toEqual(
      [],
    );
  });

  it("H28: a session's fence is a string beside its list, kept exactly up to 2^53 - 1, raised only by a higher fence, and deleted with the session", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
    const fenceKey = `${keyPrefix}fence:{chat}`;
    await store.append("chat", 0, [{ v: 1 }], { fence: 1_700_000_000_123 });
    expect(await inspector.get(fenceKey)).toBe("1700000000123");
    await store.append("chat", 1, [], { fence: 9_007_199_254_740_991 });
    expect(await inspector.get(fenceKey)).toBe("9007199254740991");
    const refused = store.append("chat", 1, [{ v: 2 }], { fence: 9_007_199_254_740_990 });
    await expect(refused).rejects.toMatchObject({
      code: "session_fenced",
      fence: 9_007_199_254_740_990,
      currentFence: 9_007_199_254_740_991,
    });
    expect(await inspector.llen(`${keyPrefix}session:{chat}`)).toBe(1);
    // A raise on a session without entries leaves it out of the index.
    await store.append("empty", 0, [], { fence: 3 });
    expect(await inspector.smembers(`${keyPrefix}sessions`)).toEqual(["chat"]);
    expect(await store.delete("chat")).toBe(true);
    expect(await inspector.exists(fenceKey)).toBe(0);
  });

  it("D1: close() quits the store's own client but leaves a given client open; the store refuses calls after it", async () => {
    const given = redisSessionStore({ client: inspector, keyPrefix: freshPrefix() });
    await given.append("s", 0, [{ v: 1 }]);
    await given.close();
    await given.close();
    expect(await inspector.ping()).toBe("PONG");
    const error = await errorOf(() => given.load("s"));
    expect(error).toBeInstanceOf(RedisSessionStoreError);
    expect(error).toMatchObject({ code: "redis_store_closed", name: "RedisSessionStoreError" });
    expect(error.message).toBe(
      `redisSessionStore: the store of redis://127.0.0.1:${server.port} is closed (loading session "s"). Open a new one with redisSessionStore({ url }).`,
    );

    const before = Number(/connected_clients:(\d+)/.exec(await inspector.info("clients"))?.[1]);
    const own = redisSessionStore({ url: server.url });
    await own.ready();
    await own.close();
    await own.close();
    const after = Number(/connected_clients:(\d+)/.exec(await inspector.info("clients"))?.[1]);
    expect(after).toBe(before);
    expect(await errorOf(() => own.list())).toMatchObject({ code: "redis_store_closed" });
  });

  it("D1: an unreachable server: the first call rejects at once with redis_unreachable, naming the URL (password redacted) and what to do", async () => {
    const port = await deadPort();
    const store = redisSessionStore({ url: `redis://:s3cret@127.0.0.1:${port}/0` });
    try {
      const started = performance.now();
      const error = await errorOf(() => store.load("s"));
      expect(performance.now() - started).toBeLessThan(5000);
      expect(error).toBeInstanceOf(RedisSessionStoreError);
      expect(error).toMatchObject({
        code: "redis_unreachable",
        url: `redis://:***@127.0.0.1:${port}/0`,
      });
      expect(error.message).toMatch(
        new RegExp(
          `^redisSessionStore: cannot reach Redis at redis://:\\*\\*\\*@127\\.0\\.0\\.1:${port}/0 while loading session "s" \\(connect ECONNREFUSED 127\\.0\\.0\\.1:${port}\\)\\. Start Redis \\(for example redis-server, or docker run -p 6379:6379 redis:7\\), or check the URL and that this machine can reach it\\.$`,
        ),
      );
      expect(error.message).not.toContain("s3cret");
      expect(await errorOf(() => store.ready())).toMatchObject({ code: "redis_unreachable" });
      const append = await errorOf(() => store.append("s", 0, [{ v: 1 }]));
      expect(append).toMatchObject({ code: "redis_unreachable" });
      expect(append.message).toContain("load the session to see");
    } finally {
      await store.close();
    }
  });

  it("D1: a server that accepts connections and never answers: a call rejects with redis_timeout after timeoutMs, it does not hang", async () => {
    const sockets = new Set<Socket>();
    const silent: Server = createServer((socket) => {
      sockets.add(socket);
    });
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    const address = silent.address();
    const port = typeof address === "object" && address ? address.port : 0;
    const store = redisSessionStore({ url: `redis://127.0.0.1:${port}`, timeoutMs: 300 });
    try {
      const started = performance.now();
      const error = await errorOf(() => store.append("s", 0, [{ v: 1 }]));
      expect(performance.now() - started).toBeLessThan(3000);
      expect(error).toMatchObject({ code: "redis_timeout", name: "RedisSessionStoreError" });
      expect(error.message).toBe(
        `redisSessionStore: Redis at redis://127.0.0.1:${port} did not answer within 300 ms while appending to session "s". If the connection was lost after the append was sent, it may have been applied: load the session to see. Check that Redis is running and reachable (an overloaded server or a firewall that drops packets can cause this), or raise timeoutMs.`,
      );
    } finally {
      await store.close();
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  it("D1: a restart of a persistent Redis (AOF) keeps sessions; the same store reconnects, and a killed server keeps every acknowledged append", async () => {
    const persistent = await startRedis({ persistent: true });
    const store = redisSessionStore({ url: persistent.url });
    try {
      await store.append("kept", 0, [{ v: 1, n: 1 }]);
      await store.append("kept", 1, [
        { v: 1, n: 2 },
        { v: 1, n: 3 },
      ]);
      await persistent.restart();
      expect(await store.load("kept")).toEqual({
        entries: [
          { v: 1, n: 1 },
          { v: 1, n: 2 },
          { v: 1, n: 3 },
        ],
        version: 3,
      });
      expect(await store.append("kept", 3, [{ v: 1, n: 4 }])).toBe(4);

      await persistent.kill();
      expect(await errorOf(() => store.load("kept"))).toMatchObject({
        code: expect.stringMatching(/^redis_(unreachable|timeout)$/),
      });
      await persistent.restart();
      const reopened = redisSessionStore({ url: persistent.url });
      expect((await reopened.load("kept")).version).toBe(4);
      expect(await reopened.list()).toEqual(["kept"]);
      await reopened.close();
      expect((await store.load("kept")).version).toBe(4);
    } finally {
      await store.close();
      await persistent.stop();
    }
  });

  it("D1: a key of another type, or a list item that is not a JSON object, is refused with redis_not_a_session", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
    await inspector.set(`${keyPrefix}session:{taken}`, "not a list");
    for (const call of [() => store.load("taken"), () => store.append("taken", 0, [{ v: 1 }])]) {
      const error = await errorOf(call);
      expect(error).toMatchObject({ code: "redis_not_a_session", name: "RedisSessionStoreError" });
      expect(error.message).toMatch(
        new RegExp(
          `^redisSessionStore: the key "${keyPrefix}session:\\{taken\\}" on redis://127\\.0\\.0\\.1:${server.port} holds a value of another type, not one this store wrote \\((loading|appending to) session "taken"\\)\\. Another application uses these keys: choose another keyPrefix, or remove that key\\.$`,
        ),
      );
    }
    await inspector.rpush(`${keyPrefix}session:{odd}`, '{"v":1}', "plain text");
    const error = await errorOf(() => store.load("odd"));
    expect(error).toMatchObject({ code: "redis_not_a_session" });
    expect(error.message).toBe(
      `redisSessionStore: item 1 of "${keyPrefix}session:{odd}" on redis://127.0.0.1:${server.port} is not a JSON object ("plain text"): this store did not write it. Another application uses these keys: choose another keyPrefix.`,
    );
  });

  it("D1: a wrong password is refused with redis_command_failed, saying to check the URL", async () => {
    const guarded = await startRedis();
    const admin = new Redis(guarded.url);
    await admin.config("SET", "requirepass", "right");
    admin.disconnect();
    const store = redisSessionStore({ url: `redis://:wrong@127.0.0.1:${guarded.port}` });
    try {
      const error = await errorOf(() => store.ready());
      expect(error).toMatchObject({ code: "redis_command_failed" });
      expect(error.message).toMatch(/^redisSessionStore: Redis at redis:\/\/:\*\*\*@127\.0\.0\.1:/);
      expect(error.message).toContain("Check the user name and password in the URL");
      expect(error.message).not.toContain("wrong");
    } finally {
      await store.close();
      await guarded.stop();
    }
  });

  it("R10: name: redisSessionStore(url) by default, password redacted, the prefix when not the default; or the name option", async () => {
    const stores: RedisSessionStore[] = [
      redisSessionStore({ url: "redis://:pw@cache.internal:6380/2" }),
      redisSessionStore({ url: server.url, keyPrefix: "tenant-a:" }),
      redisSessionStore({ client: inspector }),
      redisSessionStore({ url: server.url, name: "chat sessions" }),
    ];
    expect(stores.map((store) => store.name)).toEqual([
      'redisSessionStore("redis://:***@cache.internal:6380/2")',
      `redisSessionStore("redis://127.0.0.1:${server.port}", keyPrefix "tenant-a:")`,
      `redisSessionStore("redis://127.0.0.1:${server.port}")`,
      "chat sessions",
    ]);
    expect(stores[0]!.url).toBe("redis://:***@cache.internal:6380/2");
    expect(stores[1]!.keyPrefix).toBe("tenant-a:");
    expect(stores[2]!.keyPrefix).toBe("lattice:");
    await Promise.all(stores.map((store) => store.close()));
  });

  it("R22: options are checked strictly", async () => {
    const refuse = (options: unknown) =>
      errorOf(() => redisSessionStore(options as Parameters<typeof redisSessionStore>[0]));
    expect(await refuse({ url: server.url, keyprefix: "x:" })).toMatchObject({
      code: "unknown_option",
      message:
        'redisSessionStore: unknown option "keyprefix". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    });
    expect(await refuse({ url: server.url, client: inspector })).toMatchObject({
      code: "invalid_option",
      message:
        'redisSessionStore: option "client" and option "url" were both given: pass one, { url } for a client the store creates and closes, or { client } for an ioredis client you own.',
    });
    for (const options of [undefined, {}]) {
      expect(await refuse(options)).toMatchObject({
        code: "invalid_option",
        message:
          'redisSessionStore: option "url" is required: pass { url: "redis://127.0.0.1:6379" }, or { client } with an ioredis client you own.',
      });
    }
    expect(await refuse({ url: "http://user:hunter2@localhost:6379" })).toMatchObject({
      code: "invalid_option",
      message:
        'redisSessionStore: option "url" must be a redis:// or rediss:// URL, for example "redis://127.0.0.1:6379" or "redis://:password@host:6379/0", received "http://user:***@localhost:6379/".',
    });
    expect(await refuse({ url: 6379 })).toMatchObject({ option: "url" });
    expect(await refuse({ client: { host: "localhost" } })).toMatchObject({
      option: "client",
      message: expect.stringContaining("must be an ioredis client"),
    });
    const cluster = new Cluster([{ host: "127.0.0.1", port: server.port }], { lazyConnect: true });
    expect(await refuse({ client: cluster })).toMatchObject({
      option: "client",
      message: expect.stringContaining("is a Redis Cluster client, which this store does not"),
    });
    cluster.disconnect();
    expect(await refuse({ url: server.url, keyPrefix: "{app}:" })).toMatchObject({
      option: "keyPrefix",
    });
    expect(await refuse({ url: server.url, keyPrefix: 7 })).toMatchObject({ option: "keyPrefix" });
    for (const timeoutMs of [0, -1, Number.NaN, Number.POSITIVE_INFINITY, "10"]) {
      expect(await refuse({ url: server.url, timeoutMs })).toMatchObject({ option: "timeoutMs" });
    }
    expect(await refuse({ url: server.url, name: "" })).toMatchObject({ option: "name" });
  });

  it("R10: bad arguments reject with InvalidOptionError, as every Lattice store does", async () => {
    const store = redisSessionStore({ client: inspector, keyPrefix: freshPrefix() });
    expect(await errorOf(() => store.load(""))).toMatchObject({
      code: "invalid_option",
      message:
        'redisSessionStore: load(): option "sessionId" must be a non-empty string, received "".',
    });
    expect(await errorOf(() => store.append("s", -1, [{ v: 1 }]))).toMatchObject({
      option: "expectedVersion",
    });
    expect(await errorOf(() => store.append("s", 0, [new Map() as never]))).toMatchObject({
      option: "entries",
      message: expect.stringContaining("entries[0] is a Map, not a plain object"),
    });
    expect(await store.list()).toEqual([]);
  });
});

describe("redisSessionStore() checkpoints (C8)", () => {
  it("C8: a session's checkpoint is a hash beside its list (version, state as saved), read with its tail through another connection, and deleted with the session", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
    const other = redisSessionStore({ url: server.url, keyPrefix });
    const checkpointKey = `${keyPrefix}checkpoint:{chat 1}`;
    try {
      await store.append("chat 1", 0, [{ v: 1 }, { v: 2 }, { v: 3 }]);
      expect(await store.saveCheckpoint!("chat 1", { version: 2, state: { z: 1, a: "é" } })).toBe(
        true,
      );
      expect(await inspector.type(checkpointKey)).toBe("hash");
      expect(await inspector.hgetall(checkpointKey)).toEqual({
        version: "2",
        state: '{"z":1,"a":"é"}',
      });
      expect(await other.saveCheckpoint!("chat 1", { version: 1, state: "older" })).toBe(false);
      await other.append("chat 1", 3, [{ v: 4 }]);
      expect(await other.load("chat 1", { fromCheckpoint: true })).toEqual({
        entries: [{ v: 3 }, { v: 4 }],
        version: 4,
        checkpoint: { version: 2, state: { z: 1, a: "é" } },
      });
      expect(await other.delete("chat 1")).toBe(true);
      expect(await inspector.exists(checkpointKey)).toBe(0);
    } finally {
      await other.close();
    }
  });

  it("C8: a checkpoint left beyond the list (an older release's delete) is passed over and replaced", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
    await store.append("s", 0, [{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(await store.saveCheckpoint!("s", { version: 3, state: "three" })).toBe(true);
    // An older release's delete script removes the list and the index member only.
    await inspector.del(`${keyPrefix}session:{s}`);
    await inspector.srem(`${keyPrefix}sessions`, "s");
    await store.append("s", 0, [{ v: "again" }]);
    expect(await store.load("s", { fromCheckpoint: true })).toEqual({
      entries: [{ v: "again" }],
      version: 1,
    });
    expect(await store.saveCheckpoint!("s", { version: 1, state: "fresh" })).toBe(true);
    expect(await store.load("s", { fromCheckpoint: true })).toEqual({
      entries: [],
      version: 1,
      checkpoint: { version: 1, state: "fresh" },
    });
  });

  it("C8: a 100,000-entry session loads from a checkpoint near its end with LRANGE from the checkpoint's index, reading only the tail", async () => {
    const keyPrefix = freshPrefix();
    const store = redisSessionStore({ client: inspector, keyPrefix });
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
    await store.delete("long");
  });

  it("R22: checks the arguments of saveCheckpoint and the options of load strictly, before sending anything", async () => {
    const store = redisSessionStore({ url: `redis://127.0.0.1:${await deadPort()}` });
    await expect(store.saveCheckpoint!("s", { version: -1, state: {} })).rejects.toThrow(
      'redisSessionStore: saveCheckpoint(): option "checkpoint.version" must be an integer >= 1 (how many of the session\'s entries the state covers), received -1.',
    );
    await expect(
      store.saveCheckpoint!("s", { version: 1, state: { f: () => 1 } as never }),
    ).rejects.toThrow(
      'redisSessionStore: saveCheckpoint(): option "checkpoint.state" must be JSON: checkpoint.state.f is a function.',
    );
    await expect(store.load("s", { fromCheckpoint: null } as never)).rejects.toThrow(
      'redisSessionStore: load(): option "fromCheckpoint" must be a boolean',
    );
    await expect(store.load("s", { checkpoint: true } as never)).rejects.toThrow(
      'redisSessionStore: load(): unknown option "checkpoint".',
    );
    await store.close();
  });
});
