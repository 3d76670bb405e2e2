import { afterEach, describe, expect, it } from "vitest";
import { type FaultHttpServer, startFaultHttpServer } from "../test-servers/fault-server-http.js";
import { McpConnectionError } from "./errors.js";
import { mcpServer } from "./mcp-server.js";
import type { McpWarning } from "./mcp-server-options.js";
import { call, toolNamed } from "./test-helpers.js";

const signal = () => new AbortController().signal;

describe("mcpServer over Streamable HTTP, against the fault server", () => {
  let server: FaultHttpServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("M1, M2: lists and calls tools over one shared session, sending the headers given", async () => {
    server = await startFaultHttpServer();
    await using source = mcpServer({
      name: "web",
      url: new URL(server.url),
      headers: { Authorization: "Bearer s3cret" },
      onWarning: () => {},
    });
    expect(source.transport).toBe("http");
    const [tools, again] = await Promise.all([source.tools(signal()), source.tools(signal())]);
    expect(tools).toBe(again);
    expect((await call(tools, "web__echo", { text: "hi" })).text).toBe("echo:hi");
    expect(server.sessionCount()).toBe(1);
    expect(server.authorizations.length).toBeGreaterThan(2);
    expect(new Set(server.authorizations)).toEqual(new Set(["Bearer s3cret"]));
  });

  it("M10: a session the server ended is re-established once, and the call succeeds", async () => {
    server = await startFaultHttpServer();
    await using source = mcpServer({ name: "web", url: server.url, onWarning: () => {} });
    const tools = await source.tools(signal());
    await server.endSessions();
    const result = await call(tools, "web__echo", { text: "again" });
    expect(result).toMatchObject({ isError: false, text: "echo:again" });
    expect(server.sessionCount()).toBe(2);
    expect(server.stats.calls.echo).toBe(1);
  });

  it("M8: a server that dies mid-call is is_error naming the server and the cause, without waiting for a timeout", async () => {
    server = await startFaultHttpServer();
    await using source = mcpServer({ name: "web", url: server.url, onWarning: () => {} });
    const tools = await source.tools(signal());
    const started = Date.now();
    const result = await call(tools, "web__crash", {});
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(result.isError).toBe(true);
    expect(result.text).toMatch(
      /^mcp server "web": tool "crash" failed: the connection to the server ended during the call \(the HTTP stream carrying a call broke \(.+\)\)\. The next call reconnects\.$/,
    );
    const next = await call(tools, "web__echo", { text: "x" });
    expect(next.isError).toBe(true);
    expect(next.text).toMatch(
      /^mcp server "web": tool "echo" could not be called: mcp server "web": could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: .*ECONNREFUSED/,
    );
  });

  it("M9: aborting a call sends notifications/cancelled for it", async () => {
    server = await startFaultHttpServer();
    await using source = mcpServer({ name: "web", url: server.url, onWarning: () => {} });
    const tools = await source.tools(signal());
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const result = await call(tools, "web__slow", { ms: 5_000 }, controller.signal);
    expect(result.isError).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(server.stats.cancelled).toEqual(["slow"]);
  });

  it("M8: a URL nobody answers fails tools() naming the server and the URL", async () => {
    server = await startFaultHttpServer();
    const url = server.url;
    await server.close();
    server = undefined;
    const source = mcpServer({ name: "down", url });
    const error = await source.tools(signal()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(McpConnectionError);
    expect((error as Error).message).toMatch(
      /^mcp server "down": could not connect to http:\/\/127\.0\.0\.1:\d+\/mcp: fetch failed \(connect ECONNREFUSED .+\)\. Check that the server runs and that the URL is its MCP endpoint\.$/,
    );
    await source.close();
  });

  it("M3, M6: include/exclude choose tools; isConcurrencySafe and needsApproval override per source or per tool", async () => {
    server = await startFaultHttpServer();
    const warnings: McpWarning[] = [];
    const context = { signal: signal(), toolUseId: "t", toolName: "x" };
    await using chosen = mcpServer({
      name: "web",
      url: server.url,
      include: ["echo", "slow", "write", "crash", "nope"],
      exclude: ["crash"],
      isConcurrencySafe: (tool, input) => tool.name === "write" && input.ms === 0,
      needsApproval: (tool) => tool.annotations.destructiveHint === true,
      onWarning: (warning) => warnings.push(warning),
    });
    const tools = await chosen.tools(signal());
    expect(tools.map((tool) => tool.name)).toEqual(["web__echo", "web__slow", "web__write"]);
    expect(warnings).toEqual([expect.objectContaining({ code: "unknown_tool", toolName: "nope" })]);
    expect(warnings[0]?.message).toContain(
      'the include option names the tool "nope", which the server does not list',
    );
    const write = toolNamed(tools, "web__write");
    expect(write.isConcurrencySafe?.({ ms: 0 })).toBe(true);
    expect(write.isConcurrencySafe?.({ ms: 5 })).toBe(false);
    expect(toolNamed(tools, "web__slow").isConcurrencySafe?.({})).toBe(false);
    const approval = (name: string) => toolNamed(tools, name).needsApproval;
    expect(
      typeof approval("web__write") === "function" &&
        (await (approval("web__write") as (i: unknown, c: typeof context) => boolean)({}, context)),
    ).toBe(true);
    expect(
      typeof approval("web__echo") === "function" &&
        (await (approval("web__echo") as (i: unknown, c: typeof context) => boolean)({}, context)),
    ).toBe(false);

    await using perTool = mcpServer({
      name: "web",
      url: server.url,
      prefix: "w_",
      isConcurrencySafe: false,
      needsApproval: { write: true },
      onWarning: () => {},
    });
    const second = await perTool.tools(signal());
    expect(toolNamed(second, "w_slow").isConcurrencySafe).toBeUndefined();
    expect(toolNamed(second, "w_write").needsApproval).toBe(true);
    expect(toolNamed(second, "w_echo").needsApproval).toBeUndefined();

    await using everyCall = mcpServer({
      name: "web",
      url: server.url,
      isConcurrencySafe: true,
      needsApproval: true,
      onWarning: () => {},
    });
    const third = await everyCall.tools(signal());
    expect(toolNamed(third, "web__write").isConcurrencySafe?.({})).toBe(true);
    expect(third.every((tool) => tool.needsApproval === true)).toBe(true);
  });
});
