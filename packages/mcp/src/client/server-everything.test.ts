import { type ChildProcess, spawn } from "node:child_process";
import { createServer } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { everythingServerCommand, isRunning, waitFor } from "../test-servers/commands.js";
import { type McpToolSource, mcpServer } from "./mcp-server.js";
import type { McpProgressEvent } from "./mcp-server-options.js";
import { call, toolNamed } from "./test-helpers.js";

// `@modelcontextprotocol/server-everything`: a real third-party server, written by the MCP
// project with the v1 SDK, started by the tests over stdio and over Streamable HTTP.

const signal = () => new AbortController().signal;

describe("@modelcontextprotocol/server-everything over stdio", () => {
  const progress: McpProgressEvent[] = [];
  let source: McpToolSource;
  beforeAll(() => {
    source = mcpServer({
      name: "everything",
      ...everythingServerCommand("stdio"),
      needsApproval: (tool) => tool.annotations.readOnlyHint !== true,
      onProgress: (event) => progress.push(event),
    });
  });
  afterAll(() => source.close());

  it("M3, M4, M6: lists its tools, prefixed, read-only ones concurrency-safe, the others needing approval", async () => {
    const tools = await source.tools(signal());
    const names = tools.map((tool) => tool.name);
    expect(names).toEqual(
      expect.arrayContaining([
        "everything__echo",
        "everything__get-sum",
        "everything__get-tiny-image",
      ]),
    );
    const echo = toolNamed(tools, "everything__echo");
    expect(echo.description).toBe("Echoes back the input string");
    expect(echo.inputSchema).toMatchObject({ type: "object", required: ["message"] });
    expect(echo.inputSchema).not.toHaveProperty("$schema");
    expect(echo.isConcurrencySafe?.({ message: "x" })).toBe(true);
    const toggle = toolNamed(tools, "everything__toggle-simulated-logging");
    expect(toggle.isConcurrencySafe).toBeUndefined();
    const context = { signal: signal(), toolUseId: "t", toolName: toggle.name };
    expect(
      typeof toggle.needsApproval === "function" && (await toggle.needsApproval({}, context)),
    ).toBe(true);
    expect(
      typeof echo.needsApproval === "function" && (await echo.needsApproval({}, context)),
    ).toBe(false);
  });

  it("M5, M7: calls tools, validates inputs against the server's draft-07 schemas, maps images and resource links", async () => {
    const tools = await source.tools(signal());
    expect((await call(tools, "everything__echo", { message: "hello" })).text).toBe("Echo: hello");
    expect((await call(tools, "everything__get-sum", { a: 2, b: 3 })).text).toBe(
      "The sum of 2 and 3 is 5.",
    );
    const invalid = await call(tools, "everything__get-sum", { a: "two" });
    expect(invalid.isError).toBe(true);
    expect(invalid.text).toContain("- a: must be number");
    expect(invalid.text).toContain("- b: is required");
    const image = await call(tools, "everything__get-tiny-image", {});
    expect(image.content.some((block) => block.type === "image")).toBe(true);
    const links = await call(tools, "everything__get-resource-links", { count: 2 });
    expect(links.text).toMatch(
      /\[resource link .+ <demo:\/\/resource\/dynamic\/(text|blob)\/1> \(.+\)/,
    );
    const structured = await toolNamed(tools, "everything__get-structured-content").handler(
      { location: "Chicago" },
      { signal: signal(), toolUseId: "t", toolName: "everything__get-structured-content" },
    );
    expect(structured.structuredContent).toMatchObject({ temperature: expect.any(Number) });
  });

  it("M9: progress notifications of a long-running tool reach onProgress", async () => {
    const tools = await source.tools(signal());
    const result = await call(tools, "everything__trigger-long-running-operation", {
      duration: 0.2,
      steps: 2,
    });
    expect(result.text).toContain("Long running operation completed");
    // The SDK drops a progress notification that arrives together with the final answer, so
    // the last step may be missing.
    expect(progress.length).toBeGreaterThanOrEqual(1);
    expect(progress[0]).toMatchObject({
      serverName: "everything",
      toolName: "trigger-long-running-operation",
      progress: 1,
      total: 2,
    });
  });
});

describe("@modelcontextprotocol/server-everything over Streamable HTTP", () => {
  let child: ChildProcess;
  let url: string;
  beforeAll(async () => {
    const port = await freePort();
    const { command, args } = everythingServerCommand("streamableHttp");
    child = spawn(command, args, {
      env: { ...process.env, PORT: String(port) },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr?.on("data", (chunk) => {
      stderr += String(chunk);
    });
    expect(await waitFor(() => stderr.includes("listening on port"), 10_000)).toBe(true);
    url = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(async () => {
    child.kill();
    if (child.pid !== undefined) await waitFor(() => !isRunning(child.pid as number));
  });

  it("M1: lists and calls its tools over HTTP", async () => {
    await using source = mcpServer({ name: "everything_http", url });
    const tools = await source.tools(signal());
    expect(tools.map((tool) => tool.name)).toContain("everything_http__get-sum");
    expect((await call(tools, "everything_http__get-sum", { a: 20, b: 22 })).text).toBe(
      "The sum of 20 and 22 is 42.",
    );
    const results = await Promise.all(
      ["a", "b", "c"].map((message) => call(tools, "everything_http__echo", { message })),
    );
    expect(results.map((result) => result.text)).toEqual(["Echo: a", "Echo: b", "Echo: c"]);
  });
});

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}
