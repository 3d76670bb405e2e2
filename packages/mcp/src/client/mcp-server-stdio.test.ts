import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { faultServerCommand, isRunning, waitFor } from "../test-servers/commands.js";
import type { FaultServerStats } from "../test-servers/fault-server.js";
import { runNodeScript } from "../test-servers/run-node.js";
import { McpConnectionError } from "./errors.js";
import { type McpToolSource, mcpServer } from "./mcp-server.js";
import type { McpProgressEvent, McpWarning } from "./mcp-server-options.js";
import { call, toolNamed } from "./test-helpers.js";

const signal = () => new AbortController().signal;

async function stats(source: McpToolSource): Promise<FaultServerStats> {
  const result = await call(await source.tools(signal()), "fault__stats", {});
  return JSON.parse(result.text) as FaultServerStats;
}

describe("mcpServer over stdio, against the fault server", () => {
  const warnings: McpWarning[] = [];
  const progress: McpProgressEvent[] = [];
  const stderr: string[] = [];
  let source: McpToolSource;

  beforeAll(() => {
    source = mcpServer({
      name: "fault",
      ...faultServerCommand(),
      onWarning: (warning) => warnings.push(warning),
      onProgress: (event) => progress.push(event),
      onStderr: (text) => stderr.push(text),
    });
  });
  afterAll(() => source.close());

  it("M2: connects lazily, once, shared by concurrent callers; M3: the same array until the list changes", async () => {
    expect(stderr).toEqual([]);
    const [first, second] = await Promise.all([source.tools(signal()), source.tools(signal())]);
    expect(first).toBe(second);
    expect(await source.tools(signal())).toBe(first);
    expect(stderr.join("").match(/fault-server pid/g)).toHaveLength(1);
  });

  it("M4: prefixes names with <server>__ and sanitises them", async () => {
    const names = (await source.tools(signal())).map((tool) => tool.name);
    expect(names).toContain("fault__echo");
    expect(names).toContain("fault__needs_sanitizing_tool");
    for (const name of names) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    const tool = toolNamed(await source.tools(signal()), "fault__needs_sanitizing_tool");
    expect(tool.kind).toBe("mcp");
    expect(tool.metadata).toEqual({
      mcp: { server: "fault", tool: "needs.sanitizing tool", annotations: {} },
    });
    expect((await call(await source.tools(signal()), tool.name, {})).text).toBe(
      "needs.sanitizing tool:",
    );
  });

  it("M5: the model sees the server's inputSchema; an invalid input is is_error with the validator's text and never reaches the server", async () => {
    const tools = await source.tools(signal());
    expect(toolNamed(tools, "fault__echo").inputSchema).toEqual({
      type: "object",
      properties: { text: { type: "string", minLength: 1 } },
      required: ["text"],
      additionalProperties: false,
    });
    const before = (await stats(source)).calls.echo ?? 0;
    const result = await call(tools, "fault__echo", { text: 42, extra: true });
    expect(result.isError).toBe(true);
    expect(result.text).toContain('Invalid input for tool "fault__echo"');
    expect(result.text).toContain("- text: must be string");
    expect(result.text).toContain("- extra: is not allowed");
    expect((await call(tools, "fault__echo", {})).text).toContain("- text: is required");
    expect((await stats(source)).calls.echo ?? 0).toBe(before);
    expect((await call(tools, "fault__echo", { text: "hi" })).text).toBe("echo:hi");
  });

  it("M5: a tool whose inputSchema is not valid JSON Schema is skipped with a warning; the others work", async () => {
    const tools = await source.tools(signal());
    expect(tools.map((tool) => tool.name)).not.toContain("fault__bad_schema");
    expect(warnings).toContainEqual(
      expect.objectContaining({
        code: "invalid_input_schema",
        serverName: "fault",
        toolName: "bad_schema",
      }),
    );
    const warning = warnings.find((w) => w.toolName === "bad_schema");
    expect(warning?.message).toMatch(
      /^mcp server "fault": skipped the tool "bad_schema": its inputSchema is not valid JSON Schema \(schema is invalid: .*type/,
    );
  });

  it("M6: readOnlyHint tools are concurrency-safe, others are not", async () => {
    const tools = await source.tools(signal());
    expect(toolNamed(tools, "fault__slow").isConcurrencySafe?.({})).toBe(true);
    expect(toolNamed(tools, "fault__write").isConcurrencySafe).toBeUndefined();
    expect(toolNamed(tools, "fault__crash").isConcurrencySafe).toBeUndefined();
  });

  it("M7: maps text, image, audio, resource links and embedded resources; keeps structuredContent", async () => {
    const tools = await source.tools(signal());
    const mixed = await call(tools, "fault__mixed", {});
    expect(mixed.isError).toBe(false);
    expect(mixed.content[0]).toEqual({ type: "text", text: "hello" });
    expect(mixed.content[1]).toMatchObject({
      type: "image",
      source: { type: "base64", media_type: "image/png" },
    });
    expect(mixed.text).toContain("[audio (audio/wav, 3 bytes) not shown");
    expect(mixed.text).toContain("[resource link a <file:///tmp/a.txt> (text/plain)]");
    expect(mixed.text).toContain("[resource <file:///tmp/b.txt> (text/plain)]\ninner text");
    expect(mixed.text).toContain(
      "[resource <file:///tmp/c.bin> (application/octet-stream, 3 bytes of binary data) not shown]",
    );
    const handlerResult = await toolNamed(tools, "fault__structured_only").handler(
      {},
      { signal: signal(), toolUseId: "t", toolName: "fault__structured_only" },
    );
    expect(handlerResult).toEqual({
      content: [{ type: "text", text: '{"temperature":21,"unit":"C"}' }],
      structuredContent: { temperature: 21, unit: "C" },
    });
    const failed = await call(tools, "fault__tool_error", {});
    expect(failed).toMatchObject({ isError: true, text: "disk full" });
  });

  it("M8: a JSON-RPC error is is_error naming the server, the tool and the cause; the next call works", async () => {
    const tools = await source.tools(signal());
    const result = await call(tools, "fault__rpc_error", {});
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'mcp server "fault": tool "rpc_error" failed with JSON-RPC error -32001: the database is locked',
    );
    expect((await call(tools, "fault__echo", { text: "still here" })).text).toBe("echo:still here");
  });

  it("M9: progress notifications reach onProgress", async () => {
    const result = await call(await source.tools(signal()), "fault__progress", { steps: 3 });
    expect(result.text).toBe("3 steps");
    expect(progress.map((event) => event.progress)).toEqual([1, 2, 3]);
    expect(progress[0]).toEqual({
      serverName: "fault",
      toolName: "progress",
      latticeToolName: "fault__progress",
      toolUseId: "toolu_fault__progress",
      progress: 1,
      total: 3,
      message: "step 1",
    });
  });

  it("M9: aborting a call sends notifications/cancelled for it", async () => {
    const tools = await source.tools(signal());
    const controller = new AbortController();
    const started = Date.now();
    setTimeout(() => controller.abort(), 100);
    const result = await call(tools, "fault__slow", { ms: 5_000 }, controller.signal);
    expect(Date.now() - started).toBeLessThan(2_000);
    expect(result.isError).toBe(true);
    expect(await waitFor(() => true)).toBe(true);
    const seen = await stats(source);
    expect(seen.cancelled).toContain("slow");
  });

  it("M3: a tools/list_changed notification gives a new list before the next model call", async () => {
    const before = await source.tools(signal());
    expect(before.map((tool) => tool.name)).not.toContain("fault__added");
    await call(before, "fault__add_tool", {});
    expect(await waitFor(() => true)).toBe(true);
    let after = await source.tools(signal());
    for (let i = 0; i < 50 && after === before; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      after = await source.tools(signal());
    }
    expect(after).not.toBe(before);
    expect(after.map((tool) => tool.name)).toContain("fault__added");
    expect(await source.tools(signal())).toBe(after);
  });

  it("M8: a server that exits mid-call is is_error naming the server and its exit code; the next call reconnects", async () => {
    const tools = await source.tools(signal());
    const { pid } = await stats(source);
    const result = await call(tools, "fault__crash", {});
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^mcp server "fault": tool "crash" failed: the connection to the server ended during the call \(the server process exited with code 3; its stderr ended with: fault-server pid \d+\)\. The next call reconnects\.$/,
    );
    expect(isRunning(pid)).toBe(false);
    const again = await call(tools, "fault__echo", { text: "back" });
    expect(again.text).toBe("echo:back");
    expect((await stats(source)).pid).not.toBe(pid);
  });

  it("M2: close() ends the server process; a later tools() connects again", async () => {
    const { pid } = await stats(source);
    expect(isRunning(pid)).toBe(true);
    await source.close();
    expect(await waitFor(() => !isRunning(pid))).toBe(true);
    await source.close();
    const { pid: next } = await stats(source);
    expect(next).not.toBe(pid);
    await source.close();
    expect(await waitFor(() => !isRunning(next))).toBe(true);
  });
});

describe("mcpServer over stdio: lifecycle and failures", () => {
  it("M2: `await using` closes the source at the end of the scope", async () => {
    let pid = 0;
    {
      await using source = mcpServer({
        name: "fault",
        ...faultServerCommand(),
        onWarning: () => {},
      });
      pid = JSON.parse((await call(await source.tools(signal()), "fault__stats", {})).text).pid;
      expect(isRunning(pid)).toBe(true);
    }
    expect(await waitFor(() => !isRunning(pid))).toBe(true);
  });

  it("M2: no orphan survives a parent killed with SIGKILL before it could close its source", async () => {
    const how = "kill";
    const script = fileURLToPath(new URL("../test-servers/exit-without-close.ts", import.meta.url));
    const run = await runNodeScript([], script, [how]);
    expect({ out: run.stdout, code: run.code, killedBy: run.signal }).toEqual({
      out: expect.stringMatching(/^server pid \d+\n$/),
      code: null,
      killedBy: "SIGKILL",
    });
    const pid = Number(/server pid (\d+)/.exec(run.stdout)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(await waitFor(() => !isRunning(pid))).toBe(true);
  });

  it("M4: two tools that end with one name fail at connect, naming both", async () => {
    await using source = mcpServer({
      name: "fault",
      ...faultServerCommand("collide"),
      onWarning: () => {},
    });
    await expect(source.tools(signal())).rejects.toThrow(
      'mcp server "fault": the tools "a.b" and "a_b" both become "fault__a_b" once prefixed and made to fit ^[a-zA-Z0-9_-]{1,64}$. Leave one out with include or exclude, or change the prefix option.',
    );
    // The filters resolve it; prefix: false and a custom prefix name the tools accordingly.
    await using filtered = mcpServer({
      name: "fault",
      ...faultServerCommand("collide"),
      exclude: ["a.b"],
      prefix: false,
      onWarning: () => {},
    });
    expect((await filtered.tools(signal())).map((tool) => tool.name)).toEqual(["a_b", "echo"]);
  });

  it("M8: a server that cannot start fails tools() naming the server, the command, its exit code and its stderr", async () => {
    const source = mcpServer({
      name: "broken",
      command: process.execPath,
      args: [
        "-e",
        "console.error('starting'); console.error('fatal: GITHUB_TOKEN is not set'); process.exit(2)",
      ],
    });
    const error = await source.tools(signal()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(McpConnectionError);
    const failure = error as McpConnectionError;
    expect(failure.code).toBe("mcp_connection_failed");
    expect(failure.exitCode).toBe(2);
    expect(failure.message).toContain('mcp server "broken" could not start: `');
    expect(failure.message).toContain(" -e ");
    expect(failure.message).toContain("exited with code 2 before the MCP handshake finished");
    expect(failure.message).toContain("fatal: GITHUB_TOKEN is not set");
    await source.close();
  });

  it("M8: a process that never completes the handshake fails tools() after connectTimeoutMs and is ended", async () => {
    const pids: number[] = [];
    const source = mcpServer({
      name: "mute",
      command: process.execPath,
      args: ["-e", "console.error('pid ' + process.pid); setInterval(() => {}, 1000)"],
      connectTimeoutMs: 300,
      onStderr: (text) => pids.push(Number(/pid (\d+)/.exec(text)?.[1])),
    });
    await expect(source.tools(signal())).rejects.toThrow(
      /^mcp server "mute" could not start: `.+` did not complete the MCP handshake within 300 ms \(connectTimeoutMs\)\. Its stderr ended with:\npid \d+\nCheck that the command starts an MCP server on stdio\.$/,
    );
    expect(pids[0]).toBeGreaterThan(0);
    expect(await waitFor(() => !isRunning(pids[0] as number))).toBe(true);
  });

  it("M8: a command that does not exist fails tools() with a clear message", async () => {
    const source = mcpServer({ name: "ghost", command: "lattice-no-such-command-xyz" });
    await expect(source.tools(signal())).rejects.toThrow(
      /^mcp server "ghost" could not start: the command "lattice-no-such-command-xyz" was not found \(spawn lattice-no-such-command-xyz ENOENT\)\. Check the command and PATH\.$/,
    );
  });

  it("M9: timeoutMs bounds each call; the call is cancelled on the server", async () => {
    await using source = mcpServer({
      name: "fault",
      ...faultServerCommand(),
      timeoutMs: 150,
      onWarning: () => {},
    });
    const tools = await source.tools(signal());
    expect(toolNamed(tools, "fault__slow").timeoutMs).toBe(150);
    const result = await call(tools, "fault__slow", { ms: 5_000 });
    expect(result.isError).toBe(true);
    expect(result.text).toBe(
      'mcp server "fault": tool "slow" timed out after 150 ms; the call was cancelled on the server.',
    );
    const seen = JSON.parse((await call(tools, "fault__stats", {})).text) as FaultServerStats;
    expect(seen.cancelled).toEqual(["slow"]);
  });
});
