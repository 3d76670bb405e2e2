import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import * as tools from "./index.js";
import { LatticeError, runTool, ToolDefinitionError, tool, UnknownOptionError } from "./index.js";

const ok = async () => ({ content: "ok" });

function context(toolName: string) {
  return { signal: new AbortController().signal, toolUseId: "toolu_1", toolName };
}

describe("tool()", () => {
  it("T1: is a named export of the package, not a global", () => {
    expect(typeof tools.tool).toBe("function");
    expect((globalThis as Record<string, unknown>).tool).toBeUndefined();
  });

  it("T1: returns a definition with name, description, JSON Schema, kind, handler and rule", () => {
    const isConcurrencySafe = () => true;
    const handler = async ({ query }: { query: string }) => ({ content: query });
    const search = tool("search", "Search documents", z.object({ query: z.string() }), handler, {
      isConcurrencySafe,
    });
    expect(search.name).toBe("search");
    expect(search.description).toBe("Search documents");
    expect(search.kind).toBe("tool");
    expect(search.handler).toBe(handler);
    expect(search.isConcurrencySafe).toBe(isConcurrencySafe);
    expect(search.inputSchema).toEqual({
      type: "object",
      properties: { query: { type: "string" } },
      required: ["query"],
    });
    expect(Object.isFrozen(search)).toBe(true);
  });

  it("T2: converts the Zod schema once, at definition time, without $schema", () => {
    const calculator = tool("calculator", "Evaluate", z.object({ expr: z.string() }), ok);
    expect(calculator.inputSchema).not.toHaveProperty("$schema");
    expect(calculator.inputSchema.type).toBe("object");
  });

  it("T29: passes metadata through unchanged, as the same object", () => {
    const metadata = { contractVersion: 3, owner: { team: "search" } };
    const defined = tool("meta", "d", z.object({}), ok, { metadata });
    expect(defined.metadata).toBe(metadata);
    expect(defined.metadata).toEqual({ contractVersion: 3, owner: { team: "search" } });
  });

  it("T29: without metadata the definition has no metadata key at all", () => {
    const defined = tool("plain", "d", z.object({}), ok);
    expect("metadata" in defined).toBe(false);
    expect(Object.keys(defined)).not.toContain("metadata");
    expect("isConcurrencySafe" in defined).toBe(false);
  });

  it("T29: metadata never reaches the model-facing JSON Schema or description", () => {
    const defined = tool("meta2", "d", z.object({ a: z.string() }), ok, {
      metadata: { secretNote: "host-only" },
    });
    expect(JSON.stringify(defined.inputSchema)).not.toContain("host-only");
    expect(defined.description).not.toContain("host-only");
  });

  it("T31, T32: an unknown option throws at definition time with the exact message", () => {
    expect(() =>
      tool("search", "d", z.object({}), ok, { bogusOption: true } as unknown as tools.ToolOptions<
        Record<string, never>
      >),
    ).toThrow(
      'tool("search"): unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("T31: the unknown-option error is an UnknownOptionError with a stable code and name", () => {
    let caught: unknown;
    try {
      tool("search", "d", z.object({}), ok, { isConcurencySafe: () => true } as never);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnknownOptionError);
    expect(caught).toBeInstanceOf(LatticeError);
    expect((caught as UnknownOptionError).code).toBe("unknown_option");
    expect((caught as UnknownOptionError).name).toBe("UnknownOptionError");
    expect((caught as UnknownOptionError).option).toBe("isConcurencySafe");
  });

  it("T33: host fields spread into the options throw, even when undefined", () => {
    const host = { requestId: undefined, isConcurrencySafe: () => true };
    expect(() => tool("spread", "d", z.object({}), ok, { ...host } as never)).toThrow(
      'tool("spread"): unknown option "requestId".',
    );
  });

  it.each([
    ["", "invalid name"],
    ["has space", "invalid name"],
    ["a".repeat(65), "invalid name"],
    ["dots.not.allowed", "invalid name"],
  ])("refuses the name %j with a message that says what to do", (name, fragment) => {
    expect(() => tool(name, "d", z.object({}), ok)).toThrow(ToolDefinitionError);
    expect(() => tool(name, "d", z.object({}), ok)).toThrow(fragment);
    expect(() => tool(name, "d", z.object({}), ok)).toThrow("^[a-zA-Z0-9_-]{1,64}$");
  });

  it("accepts names of 64 characters, digits, _ and -", () => {
    expect(tool("a".repeat(64), "d", z.object({}), ok).name).toHaveLength(64);
    expect(tool("get_weather-2", "d", z.object({}), ok).name).toBe("get_weather-2");
  });

  it("refuses a schema that is not a z.object, naming the tool and the fix", () => {
    expect(() => tool("str", "d", z.string() as never, ok)).toThrow(
      'tool("str"): the schema must be a z.object(...) from Zod v4, received a Zod string schema.',
    );
    expect(() => tool("plain", "d", { type: "object" } as never, ok)).toThrow(
      "an object that is not a Zod schema",
    );
  });

  it("refuses a handler that is not a function", () => {
    expect(() => tool("h", "d", z.object({}), "nope" as never)).toThrow(
      'tool("h"): the handler must be a function, received string.',
    );
  });

  it("refuses an isConcurrencySafe that is not a function", () => {
    expect(() => tool("c", "d", z.object({}), ok, { isConcurrencySafe: true as never })).toThrow(
      'tool("c"): isConcurrencySafe must be a function (input) => boolean, received boolean.',
    );
  });

  it("refuses metadata that is not a plain object", () => {
    expect(() => tool("m", "d", z.object({}), ok, { metadata: [] as never })).toThrow(
      "metadata must be a plain object",
    );
  });

  it("names the tool and the field when a schema cannot be represented in JSON Schema", () => {
    expect(() => tool("dated", "d", z.object({ meta: z.object({ when: z.date() }) }), ok)).toThrow(
      'tool("dated"): field "meta.when" cannot be represented in JSON Schema',
    );
    expect(() =>
      tool("big", "d", z.object({ items: z.array(z.object({ n: z.bigint() })) }), ok),
    ).toThrow('field "items[0].n"');
  });

  it("T7: the handler's context carries signal, toolUseId and toolName", async () => {
    let seen: tools.ToolContext | undefined;
    const defined = tool("ctx", "d", z.object({}), async (_input, ctx) => {
      seen = ctx;
      return { content: "ok" };
    });
    const controller = new AbortController();
    await runTool(
      defined,
      {},
      { signal: controller.signal, toolUseId: "toolu_9", toolName: "ctx" },
    );
    expect(seen?.signal).toBe(controller.signal);
    expect(seen?.toolUseId).toBe("toolu_9");
    expect(seen?.toolName).toBe("ctx");
  });

  it("T1: the seed's calculator runs as written", async () => {
    const calculator = tool(
      "calculator",
      "Evaluate a simple arithmetic expression",
      z.object({ expr: z.string() }),
      async (input) => {
        return { content: String(Function(`return ${input.expr}`)()) };
      },
    );
    const result = await runTool(calculator, { expr: "6*7" }, context("calculator"));
    expect(result).toEqual({
      content: [{ type: "text", text: "42" }],
      isError: false,
      endTurn: false,
    });
  });
});
