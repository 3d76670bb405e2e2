import { createToolDefinition, tool } from "@lattice/tools";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { add, fail, lookup, report } from "./fixtures/served-tools.js";
import { serveMcp } from "./serve-mcp.js";
import type { ServeMcpHttpHandle } from "./serve-mcp-options.js";
import { isConstantlyConcurrencySafe } from "./tool-annotations.js";

const handles: ServeMcpHttpHandle[] = [];
const clients: Client[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
});

async function connect(handle: ServeMcpHttpHandle, era: "legacy" | "modern"): Promise<Client> {
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: "auto" } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
  clients.push(client);
  return client;
}

async function serve(
  definition: Partial<Parameters<typeof serveMcp>[0]>,
): Promise<ServeMcpHttpHandle> {
  const handle = await serveMcp(
    { name: "test-server", version: "1.2.3", ...definition },
    { transport: "http", port: 0 },
  );
  handles.push(handle);
  return handle;
}

function text(result: { content: unknown }): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? "")
    .join("\n");
}

describe.each(["legacy", "modern"] as const)("serveMcp over HTTP, %s-era client", (era) => {
  it("M11: lists the tools, answers calls, invalid inputs, throws and structured results", async () => {
    const handle = await serve({ tools: [add, lookup, fail, report] });
    const client = await connect(handle, era);
    expect(client.getServerVersion()).toMatchObject({ name: "test-server", version: "1.2.3" });
    const { tools } = await client.listTools();
    expect(tools.map((listed) => [listed.name, listed.annotations?.readOnlyHint])).toEqual([
      ["add", true],
      ["lookup", undefined],
      ["fail", undefined],
      ["report", undefined],
    ]);
    expect(tools[0]?.inputSchema).toEqual(add.inputSchema);

    const ok = await client.callTool({ name: "add", arguments: { a: 1, b: 2 } });
    expect([text(ok), ok.isError ?? false]).toEqual(["3", false]);
    const invalid = await client.callTool({ name: "add", arguments: { a: 1 } });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^Invalid input for tool "add":\n- b: /);
    const thrown = await client.callTool({ name: "fail", arguments: {} });
    expect([text(thrown), thrown.isError]).toEqual(["the disk is full", true]);
    const structured = await client.callTool({ name: "report", arguments: { items: [4, 5] } });
    expect(structured.structuredContent).toEqual({ total: 9, count: 2 });
  });

  it("M11: an unknown tool is a JSON-RPC error naming the server's tools", async () => {
    const handle = await serve({ tools: [add] });
    const client = await connect(handle, era);
    await expect(client.callTool({ name: "nope", arguments: {} })).rejects.toThrow(
      /Unknown tool "nope" on MCP server "test-server". Its tools: add/,
    );
  });
});

describe("serveMcp tools", () => {
  it("M11: readOnlyHint is derived only from a constant-true isConcurrencySafe", () => {
    const make = (isConcurrencySafe?: (input: { x?: number }) => boolean) =>
      tool("t", "t", z.object({ x: z.number().optional() }), () => ({ content: "" }), {
        ...(isConcurrencySafe !== undefined ? { isConcurrencySafe } : {}),
      });
    expect(isConstantlyConcurrencySafe(make(() => true))).toBe(true);
    expect(isConstantlyConcurrencySafe(make(() => false))).toBe(false);
    expect(isConstantlyConcurrencySafe(make((input) => input.x === undefined))).toBe(false);
    expect(isConstantlyConcurrencySafe(make())).toBe(false);
    expect(
      isConstantlyConcurrencySafe(
        make(() => {
          throw new Error("no");
        }),
      ),
    ).toBe(false);
  });

  it("M11: the host's annotations are merged over the derived ones", async () => {
    const handle = await serve({
      tools: [add, lookup],
      annotations: {
        lookup: { readOnlyHint: true, title: "Lookup" },
        add: { idempotentHint: true },
      },
    });
    const { tools } = await (await connect(handle, "legacy")).listTools();
    expect(tools.map((listed) => listed.annotations)).toEqual([
      { readOnlyHint: true, idempotentHint: true },
      { readOnlyHint: true, title: "Lookup" },
    ]);
  });

  it("M11: a call that needs approval is refused, one that does not runs; a deadline answers timed out", async () => {
    const guarded = tool(
      "transfer",
      "Move money",
      z.object({ amount: z.number() }),
      ({ amount }) => ({ content: `moved ${amount}` }),
      { needsApproval: ({ amount }) => amount > 100 },
    );
    const sleepy = tool(
      "sleepy",
      "Sleeps",
      z.object({}),
      (_input, { signal }) =>
        new Promise((resolve) => {
          const timer = setTimeout(() => resolve({ content: "woke" }), 5_000);
          signal.addEventListener("abort", () => clearTimeout(timer));
        }),
      { timeoutMs: 50 },
    );
    const client = await connect(await serve({ tools: [guarded, sleepy] }), "legacy");
    expect(text(await client.callTool({ name: "transfer", arguments: { amount: 5 } }))).toBe(
      "moved 5",
    );
    const refused = await client.callTool({ name: "transfer", arguments: { amount: 500 } });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(
      /^Tool "transfer" was not run: this call needs a person's approval/,
    );
    const late = await client.callTool({ name: "sleepy", arguments: {} });
    expect([text(late), late.isError]).toEqual(['Tool "sleepy" timed out after 50 ms.', true]);
  });

  it("M11: a non-object structuredResult reaches the client, with images as image content", async () => {
    const pixel = tool("pixel", "One pixel", z.object({}), () => ({
      content: [
        { type: "text", text: "a pixel" },
        {
          type: "image",
          source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" },
        },
      ],
      structuredResult: [1, 2, 3],
    }));
    const handle = await serve({ tools: [pixel] });
    const legacy = await (await connect(handle, "legacy")).callTool({
      name: "pixel",
      arguments: {},
    });
    expect(legacy.content).toEqual([
      { type: "text", text: "a pixel" },
      { type: "image", data: "iVBORw0KGgo=", mimeType: "image/png" },
    ]);
    // The 2025 wire needs an object: the SDK wraps the value.
    expect(legacy.structuredContent).toEqual({ result: [1, 2, 3] });
    const modern = await (await connect(handle, "modern")).callTool({
      name: "pixel",
      arguments: {},
    });
    expect(modern.structuredContent).toEqual([1, 2, 3]);
  });
});

describe("serveMcp options", () => {
  const echo = createToolDefinition({
    name: "echo",
    description: "Echo",
    kind: "tool",
    schema: z.object({ text: z.string() }),
    handler: ({ text }) => ({ content: text }),
  });

  it("M11: both arguments are checked strictly", async () => {
    const base = { name: "s", version: "1", tools: [echo] };
    await expect(serveMcp({ ...base, tool: [] } as never, { transport: "stdio" })).rejects.toThrow(
      'serveMcp(definition): unknown option "tool"',
    );
    await expect(serveMcp(base, { transport: "stdio", port: 1 } as never)).rejects.toThrow(
      'serveMcp(options): unknown option "port"',
    );
    await expect(serveMcp(base, { transport: "http" } as never)).rejects.toThrow(
      'serveMcp(options): option "port" must be an integer from 0 to 65535',
    );
    await expect(serveMcp(base, { transport: "sse" } as never)).rejects.toThrow(
      'option "transport" must be "stdio" or "http"',
    );
    await expect(
      serveMcp({ ...base, version: undefined } as never, { transport: "stdio" }),
    ).rejects.toThrow('option "version" must be a non-empty string');
    await expect(
      serveMcp({ ...base, tools: [echo, echo] }, { transport: "stdio" }),
    ).rejects.toThrow('holds two tools or agents named "echo"');
    await expect(
      serveMcp({ ...base, tools: [{ name: "x" }] as never }, { transport: "stdio" }),
    ).rejects.toThrow('option "tools[0]" must be a Lattice tool');
    await expect(
      serveMcp({ ...base, annotations: { ech: { readOnlyHint: true } } }, { transport: "stdio" }),
    ).rejects.toThrow('option "annotations.ech" names no served tool. Served: "echo"');
    await expect(serveMcp(base, { transport: "http", port: 0, path: "mcp" })).rejects.toThrow(
      'option "path" must be a string starting with "/"',
    );
  });

  it("M11: a taken port rejects with mcp_listen_failed", async () => {
    const first = await serve({ tools: [echo] });
    await expect(
      serveMcp({ name: "s", version: "1", tools: [echo] }, { transport: "http", port: first.port }),
    ).rejects.toMatchObject({ code: "mcp_listen_failed" });
  });
});
