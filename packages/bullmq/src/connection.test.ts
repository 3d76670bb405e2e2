import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { checkConnection, describeConnection } from "./connection.js";

describe("describeConnection", () => {
  it("names a URL without its password, in the userinfo or in a password query parameter", () => {
    expect(describeConnection("redis://:hunter2@127.0.0.1:6390/2")).toBe(
      "redis://:***@127.0.0.1:6390/2",
    );
    const described = describeConnection("redis://127.0.0.1:6390?Password=hunter2&db=3");
    expect(described).not.toContain("hunter2");
    expect(described).toContain("db=3");
    expect(describeConnection("not a url")).toBe("not a url");
    // A URL that does not parse keeps its shape, its secrets redacted.
    expect(describeConnection("redis://:hunter2@host:99999/0?password=x")).toBe(
      "redis://***@host:99999/0?password=***",
    );
    expect(describeConnection("redis//user:hunter2@host")).toBe("redis//***@host");
  });

  it("D3: redacts up to the last @ of a URL that does not parse, since a password may hold @", () => {
    expect(describeConnection("redis://:p@ss@host:99999")).toBe("redis://***@host:99999");
    expect(describeConnection("redis//:p@ss@word@host:6379")).toBe("redis//***@host:6379");
  });

  it("names options by host, port and database, and a socket by its path", () => {
    expect(describeConnection({ host: "cache", port: 6380, db: 1, password: "hunter2" })).toBe(
      "redis://cache:6380/1",
    );
    expect(describeConnection({ path: "/run/redis.sock" })).toBe("unix:/run/redis.sock");
  });
});

describe("checkConnection", () => {
  /** Whether checkConnection accepts a string, and the refusal's message when it does not. */
  const verdict = (connection: string): true | string => {
    try {
      checkConnection("RunQueueOptions:", connection);
      return true;
    } catch (error) {
      return (error as Error).message;
    }
  };

  /** How ioredis reads a connection string: the options of a client that never connects. */
  const ioredisReading = (connection: string): Record<string, unknown> => {
    const client = new Redis(connection, { lazyConnect: true });
    const { host, port, path, db } = client.options;
    client.disconnect();
    return path === undefined ? { host, port, db } : { host, port, path, db };
  };

  it("D3: accepts every string ioredis reads as meant and refuses what it would misread or cannot connect to, checked against ioredis's own parser", () => {
    // [the string, how ioredis reads it (a lazy client's options), whether it is accepted]
    const table: [string, Record<string, unknown>, boolean][] = [
      ["redis://127.0.0.1:6379", { host: "127.0.0.1", port: 6379, db: 0 }, true],
      ["redis://:hunter2@cache:6380/2", { host: "cache", port: 6380, db: 2 }, true],
      ["rediss://cache", { host: "cache", port: 6379, db: 0 }, true],
      ["redis://[::1]:6379", { host: "::1", port: 6379, db: 0 }, true],
      ["redis://cache?db=3", { host: "cache", port: 6379, db: 3 }, true],
      ["localhost:6379", { host: "localhost", port: 6379, db: 0 }, true],
      ["localhost", { host: "localhost", port: 6379, db: 0 }, true],
      ["6379", { host: "localhost", port: 6379, db: 0 }, true],
      ["/tmp/redis.sock", { host: "localhost", port: 6379, path: "/tmp/redis.sock", db: 0 }, true],
      [
        "unix:///tmp/redis.sock",
        { host: "localhost", port: 6379, path: "/tmp/redis.sock", db: 0 },
        true,
      ],
      ["redis//cache:6379", { host: "redis", port: 6379, path: "//cache:6379", db: 0 }, false],
      ["redis:/cache", { host: "redis", port: 6379, path: "/cache", db: 0 }, false],
      ["redis://cache:99999", { host: "cache", port: 99999, db: 0 }, false],
      ["redis://cache:0", { host: "cache", port: 0, db: 0 }, false],
      ["99999", { host: "localhost", port: 99999, db: 0 }, false],
      ["redis://cache/abc", { host: "cache", port: 6379, db: Number.NaN }, false],
      ["redis://cache?db=x", { host: "cache", port: 6379, db: Number.NaN }, false],
      ["http://cache:6379", { host: "cache", port: 6379, path: "/", db: 0 }, false],
      ["tcp://cache:6379", { host: "cache", port: 6379, db: 0 }, false],
    ];
    for (const [connection, reading, accepted] of table) {
      expect(ioredisReading(connection), connection).toEqual(reading);
      const outcome = verdict(connection);
      if (accepted) expect(outcome, connection).toBe(true);
      else expect(outcome, connection).toMatch(/^RunQueueOptions: option "connection" /);
    }
  });

  it("D3: a refusal says what is wrong and shows the string with its password redacted", () => {
    expect(verdict("redis//:hunter2@cache:6379")).toContain(
      'would be read by ioredis as a Unix socket path on host "redis"',
    );
    expect(verdict("redis//:hunter2@cache:6379")).toContain('received "redis//***@cache:6379"');
    expect(verdict("redis://:p@ss@cache:99999")).toContain(
      'has the port "99999", not one from 1 to 65535; received "redis://***@cache:99999"',
    );
    expect(verdict("http://user:hunter2@cache:6379")).toContain('has the scheme "http://"');
    expect(verdict("redis://cache/abc?password=hunter2")).toContain(
      'names the database "abc", which is not a number',
    );
    for (const bad of [
      "redis//:hunter2@c",
      "redis://:hunter2@c:0",
      "redis://c/x?password=hunter2",
    ]) {
      expect(verdict(bad)).not.toContain("hunter2");
    }
  });
});
