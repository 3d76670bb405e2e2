import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import * as tools from "./index.js";
import {
  createToolDefinition,
  LatticeError,
  runTool,
  type StandardSchemaResult,
  type StandardSchemaV1,
  ToolDefinitionError,
  tool,
  toolResultText,
  UnknownOptionError,
} from "./index.js";

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
    let message: string | undefined;
    try {
      tool("search", "d", z.object({}), ok, { bogusOption: true } as unknown as tools.ToolOptions<
        Record<string, never>
      >);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
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

  it("T1, H29: the README's calculator runs as written, and runs no code the model sends", async () => {
    const calculator = tool(
      "calculator",
      "Apply an arithmetic operator to two numbers",
      z.object({
        a: z.number(),
        op: z.enum(["+", "-", "*", "/"]).describe("The operator"),
        b: z.number(),
      }),
      async ({ a, op, b }) => {
        const value = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : a / b;
        return { content: String(value) };
      },
    );
    expect(calculator.inputSchema.properties?.op).toEqual({
      type: "string",
      enum: ["+", "-", "*", "/"],
      description: "The operator",
    });
    const injected = await runTool(
      calculator,
      { a: 1, op: "process.exit()", b: 2 },
      context("calculator"),
    );
    expect(injected.isError).toBe(true);
    const result = await runTool(calculator, { a: 6, op: "*", b: 7 }, context("calculator"));
    expect(result).toEqual({
      content: [{ type: "text", text: "42" }],
      isError: false,
      endTurn: false,
    });
  });
});

/** A Standard Schema v1 written by hand: `{ text: string }`, with issues in both path styles. */
function textSchema(
  validate?: (value: unknown) => StandardSchemaResult<{ text: string }> | Promise<never>,
): StandardSchemaV1<unknown, { text: string }> {
  return {
    "~standard": {
      version: 1,
      vendor: "hand-written",
      validate:
        validate ??
        ((value) => {
          const text = (value as { text?: unknown } | null)?.text;
          if (typeof text === "string") return { value: { text } };
          return {
            issues: [
              { message: "expected a string", path: [{ key: "text" }] },
              { message: "no extra fields", path: ["extra", 0] },
            ],
          };
        }),
    },
  };
}

const textInputSchema = {
  type: "object",
  properties: { text: { type: "string" } },
  required: ["text"],
} as const;

describe("createToolDefinition: any Standard Schema plus an explicit inputSchema", () => {
  it("builds a definition whose inputSchema is the one given and whose input is validated by the schema", async () => {
    const echo = createToolDefinition({
      name: "echo",
      description: "Repeats a text",
      kind: "mcp",
      schema: textSchema(),
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        ...textInputSchema,
      },
      handler: async ({ text }) => ({ content: text }),
    });
    expect(echo.kind).toBe("mcp");
    expect(echo.inputSchema).toEqual(textInputSchema);
    expect(Object.isFrozen(echo)).toBe(true);
    expect(toolResultText(await runTool(echo, { text: "hi" }, context("echo")))).toBe("hi");
    const refused = await runTool(echo, { text: 1 }, context("echo"));
    expect(refused.isError).toBe(true);
    expect(toolResultText(refused)).toBe(
      'Invalid input for tool "echo":\n- text: expected a string\n- extra[0]: no extra fields\nFix these fields and call the tool again.',
    );
  });

  it("a validate that returns a Promise is awaited; one that rejects or throws is reported, not thrown", async () => {
    const later = createToolDefinition({
      name: "later",
      description: "d",
      kind: "tool",
      schema: textSchema(async (value) => ({ value: value as { text: string } }) as never),
      inputSchema: textInputSchema,
      handler: ({ text }) => ({ content: `later ${text}` }),
    });
    expect(toolResultText(await runTool(later, { text: "x" }, context("later")))).toBe("later x");
    for (const validate of [
      () => Promise.reject(new Error("kaput")),
      () => {
        throw new Error("kaput");
      },
    ]) {
      const broken = createToolDefinition({
        name: "broken",
        description: "d",
        kind: "tool",
        schema: textSchema(validate),
        inputSchema: textInputSchema,
        handler: ok,
      });
      const result = await runTool(broken, { text: "x" }, context("broken"));
      expect(result.isError).toBe(true);
      expect(toolResultText(result)).toBe(
        'Invalid input for tool "broken": the schema\'s validation threw (kaput). Check the input and call the tool again.',
      );
    }
  });

  it("an explicit inputSchema wins over converting a z.object", () => {
    const defined = createToolDefinition({
      name: "explicit",
      description: "d",
      kind: "tool",
      schema: z.object({ text: z.string() }),
      inputSchema: { type: "object", properties: { text: { type: "string", minLength: 2 } } },
      handler: ok,
    });
    expect(defined.inputSchema).toEqual({
      type: "object",
      properties: { text: { type: "string", minLength: 2 } },
    });
  });

  it("refuses a schema that is not a z.object without inputSchema, saying to pass one", () => {
    expect(() =>
      createToolDefinition({
        name: "nozod",
        description: "d",
        kind: "mcp",
        schema: textSchema(),
        handler: ok,
      }),
    ).toThrow(
      'tool("nozod"): the schema must be a z.object(...) from Zod v4, received a Standard Schema from "hand-written". Lattice converts only Zod object schemas to the JSON Schema the model receives: pass that JSON Schema as inputSchema',
    );
  });

  it("refuses an inputSchema that is not an object schema, and a schema that cannot validate", () => {
    for (const inputSchema of [{ type: "string" }, [], null, "object"]) {
      expect(() =>
        createToolDefinition({
          name: "badjson",
          description: "d",
          kind: "mcp",
          schema: textSchema(),
          inputSchema: inputSchema as never,
          handler: ok,
        }),
      ).toThrow('tool("badjson"): inputSchema must be a JSON Schema object with type: "object"');
    }
    expect(() =>
      createToolDefinition({
        name: "novalidate",
        description: "d",
        kind: "mcp",
        schema: { type: "object" } as never,
        inputSchema: textInputSchema,
        handler: ok,
      }),
    ).toThrow('tool("novalidate"): the schema must implement Standard Schema v1');
  });

  it("a Zod schema without toJSONSchema (Zod older than 4.2) gets a clear error naming the tool", () => {
    const schema = z.object({ a: z.string() });
    const older = Object.create(schema, { toJSONSchema: { value: undefined } }) as typeof schema;
    const error = (() => {
      try {
        tool("old", "d", older, ok);
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(ToolDefinitionError);
    expect((error as ToolDefinitionError).toolName).toBe("old");
    expect((error as Error).message).toContain(
      'tool("old"): the schema has no toJSONSchema() method',
    );
    expect((error as Error).message).toContain("Upgrade zod to 4.2 or newer");
    expect((error as Error).message).toContain("inputSchema");
  });
});
