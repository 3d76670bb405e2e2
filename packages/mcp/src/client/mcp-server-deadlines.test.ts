import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { faultServerCommand, handWrittenServerCommand } from "../test-servers/commands.js";
import { McpConnectionError } from "./errors.js";
import { mcpServer } from "./mcp-server.js";
import { resolveMcpServerOptions } from "./mcp-server-options.js";
import { call } from "./test-helpers.js";

/** How a scripted HTTP server answers one JSON-RPC message; `"hang"` never answers it. */
type Answer = "hang" | ((res: ServerResponse, message: { id?: unknown; method?: string }) => void);

/**
 * A Streamable HTTP server speaking MCP by hand: it answers `initialize`, accepts
 * notifications with 202, refuses the GET stream with 405, and answers other messages as
 * `answers` say (by method).
 */
function scriptedServer(answers: Readonly<Record<string, Answer>>): Server {
  return createServer(async (req: IncomingMessage, res: ServerResponse) => {
    let body = "";
    for await (const chunk of req) body += chunk;
    if (req.method === "GET") {
      res.writeHead(405).end();
      return;
    }
    const message = JSON.parse(body) as {
      id?: unknown;
      method?: string;
      params?: { protocolVersion?: string };
    };
    const answer = answers[message.method ?? ""];
    if (answer === "hang") return;
    if (answer !== undefined) {
      answer(res, message);
      return;
    }
    if (message.method === "initialize") {
      res.writeHead(200, { "content-type": "application/json", "mcp-session-id": "s1" });
      res.end(
        JSON.stringify({
          jsonrpc: "2.0",
          id: message.id,
          result: {
            protocolVersion: message.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: "scripted", version: "1" },
          },
        }),
      );
      return;
    }
    res.writeHead(202).end();
  });
}

describe("every request to a server has a deadline (H22)", () => {
  let raw: Server | undefined;
  afterEach(async () => {
    raw?.closeAllConnections();
    if (raw !== undefined) await new Promise((resolve) => raw?.close(resolve));
    raw = undefined;
  });

  it("H22: a tools/list that never answers fails tools() at timeoutMs, and the next tools() connects again", async () => {
    await using source = mcpServer({
      name: "mute",
      ...faultServerCommand("silent_list"),
      timeoutMs: 500,
    });
    const started = performance.now();
    const error = await source.tools().catch((caught: unknown) => caught);
    const elapsed = performance.now() - started;
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toBe(
      'mcp server "mute": listing its tools failed: the server did not answer tools/list within 500 ms (timeoutMs). Check that the server works, or give it more time.',
    );
    expect(elapsed).toBeLessThan(5_000);
    await expect(source.tools()).rejects.toThrow("within 500 ms");
  }, 15_000);

  it("H22: without timeoutMs, tools/list waits connectTimeoutMs", async () => {
    raw = scriptedServer({ "tools/list": "hang" });
    await new Promise<void>((resolve) => raw?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp`;
    await using source = mcpServer({ name: "mute", url, connectTimeoutMs: 1_000 });
    const started = performance.now();
    await expect(source.tools()).rejects.toThrow(
      "the server did not answer tools/list within 1000 ms (connectTimeoutMs)",
    );
    expect(performance.now() - started).toBeLessThan(5_000);
  }, 15_000);

  it("H22: an HTTP server that answers initialize and never the initialized notification fails tools() at connectTimeoutMs", async () => {
    raw = scriptedServer({ "notifications/initialized": "hang" });
    await new Promise<void>((resolve) => raw?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp?page=2`;
    await using source = mcpServer({ name: "mute", url, connectTimeoutMs: 1_000 });
    const started = performance.now();
    const error = await source.tools().catch((caught: unknown) => caught);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(error).toBeInstanceOf(McpConnectionError);
    // (The URL is shown without its query: H21.)
    expect((error as Error).message).toMatch(
      /^mcp server "mute": could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: the MCP handshake did not finish within 1000 ms \(connectTimeoutMs\)\. Check that the server runs and that the URL is its MCP endpoint\.$/,
    );
  }, 15_000);

  it("H22: an oversize stdio message during the handshake is reported naming the bound, not as an exit code", async () => {
    await using source = mcpServer({
      name: "big",
      ...handWrittenServerCommand("huge_initialize"),
      maxResponseBytes: 64 * 1024,
    });
    const error = await source.tools().catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(McpConnectionError);
    const message = (error as Error).message;
    expect(message).toMatch(/^mcp server "big" could not start: `.+` failed the MCP handshake: /s);
    expect(message).toContain(
      "the server sent a message larger than 64 KiB (maxResponseBytes); the rest was not read. Raise maxResponseBytes if the server's answers are that large.",
    );
    expect(message).not.toMatch(/exited with code|was ended by/);
  }, 15_000);

  it("H22: without timeoutMs, a call that keeps reporting progress ends at maxCallDurationMs (default 10 minutes)", async () => {
    expect(resolveMcpServerOptions({ name: "fault", command: "node" }).maxCallDurationMs).toBe(
      600_000,
    );
    await using source = mcpServer({
      name: "fault",
      ...faultServerCommand(),
      maxCallDurationMs: 1_000,
      // Asks for progress: each notification restarts the SDK's request timeout.
      onProgress: () => {},
    });
    const tools = await source.tools();
    const started = performance.now();
    const result = await call(tools, "fault__progress", { steps: 1_000_000 });
    expect(performance.now() - started).toBeLessThan(8_000);
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'mcp server "fault": tool "progress" timed out after 1000 ms (maxCallDurationMs); the call was cancelled on the server.',
    );
  }, 30_000);

  it("H22: an HTTP server that never answers initialize fails tools() at connectTimeoutMs", async () => {
    raw = createServer(() => {
      // Reads the request and never answers.
    });
    await new Promise<void>((resolve) => raw?.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(raw.address() as AddressInfo).port}/mcp`;
    const source = mcpServer({ name: "mute", url, connectTimeoutMs: 400 });
    const started = performance.now();
    await expect(source.tools()).rejects.toThrow(
      /^mcp server "mute": could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: the MCP handshake did not finish within 400 ms \(connectTimeoutMs\)/,
    );
    expect(performance.now() - started).toBeLessThan(5_000);
    await source.close();
  }, 15_000);

  it("H22: a stdio message over the bound is reported naming it, not as an exit code or a signal", async () => {
    await using source = mcpServer({
      name: "fault",
      ...faultServerCommand("hostile"),
      onWarning: () => {},
    });
    const tools = await source.tools();
    const result = await call(tools, "fault__huge", { bytes: 17 * 1024 * 1024 });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      `mcp server "fault": tool "huge" failed: the server sent a message larger than 16 MiB (maxResponseBytes); the rest was not read. Raise maxResponseBytes if the server's answers are that large.`,
    );
    // The next call starts the server again.
    expect((await call(tools, "fault__echo", { text: "back" })).text).toBe("echo:back");
  }, 30_000);
});
