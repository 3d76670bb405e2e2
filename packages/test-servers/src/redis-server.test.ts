import { accessSync, constants, existsSync } from "node:fs";
import { createConnection } from "node:net";
import { describe, expect, it } from "vitest";
import { ensureRedisServer, startRedis } from "./redis-server.js";

/** Sends inline commands then QUIT on a raw socket; resolves with every reply, as text. */
function send(port: number, ...commands: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let replies = "";
    socket.once("error", reject);
    socket.once("connect", () => socket.write(`${[...commands, "QUIT"].join("\r\n")}\r\n`));
    socket.on("data", (chunk: Buffer) => {
      replies += chunk.toString();
    });
    socket.once("close", () => resolve(replies));
  });
}

describe("startRedis()", () => {
  it("D1: ensureRedisServer() returns the redis-server executable", () => {
    const path = ensureRedisServer();
    expect(() => accessSync(path, constants.X_OK)).not.toThrow();
    expect(ensureRedisServer()).toBe(path);
  });

  it("D1: starts a server on loopback that answers PING, and stop() removes its folder (idempotent)", async () => {
    const server = await startRedis();
    expect(server.url).toBe(`redis://127.0.0.1:${server.port}`);
    expect(existsSync(server.dir)).toBe(true);
    expect(await send(server.port, "PING")).toBe("+PONG\r\n+OK\r\n");
    await server.stop();
    await server.stop();
    expect(existsSync(server.dir)).toBe(false);
    await expect(send(server.port, "PING")).rejects.toMatchObject({ code: "ECONNREFUSED" });
    await expect(server.restart()).rejects.toThrow(/it was stopped/);
  });

  it("D1: persistent: restart() and kill() + restart() keep the data, on the same port", async () => {
    const server = await startRedis({ persistent: true });
    try {
      expect(await send(server.port, "SET greeting hello")).toBe("+OK\r\n+OK\r\n");
      await server.restart();
      expect(await send(server.port, "GET greeting")).toBe("$5\r\nhello\r\n+OK\r\n");
      expect(await send(server.port, "RPUSH log one two")).toBe(":2\r\n+OK\r\n");
      await server.kill();
      await expect(send(server.port, "PING")).rejects.toMatchObject({ code: "ECONNREFUSED" });
      expect(existsSync(server.dir)).toBe(true);
      await server.restart();
      expect(await send(server.port, "LLEN log", "GET greeting")).toBe(
        ":2\r\n$5\r\nhello\r\n+OK\r\n",
      );
    } finally {
      await server.stop();
    }
  });

  it("D1: without persistent, a restart starts empty", async () => {
    const server = await startRedis();
    try {
      await send(server.port, "SET greeting hello");
      await server.restart();
      expect(await send(server.port, "EXISTS greeting")).toBe(":0\r\n+OK\r\n");
    } finally {
      await server.stop();
    }
  });

  it("D1: two servers at once get different ports and folders", async () => {
    const [first, second] = await Promise.all([startRedis(), startRedis()]);
    try {
      expect(first.port).not.toBe(second.port);
      expect(first.dir).not.toBe(second.dir);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it("D1: refuses an unknown option", async () => {
    await expect(startRedis({ persistant: true } as never)).rejects.toThrow(
      'startRedis: unknown option "persistant". Known options: persistent, startTimeoutMs.',
    );
  });
});
