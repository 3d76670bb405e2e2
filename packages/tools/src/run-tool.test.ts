import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type LatticeError,
  parseToolInput,
  runTool,
  ToolInputError,
  tool,
  toolResultText,
} from "./index.js";
import { executeTool, normalizeToolResult } from "./internal.js";

function context(toolName: string) {
  return { signal: new AbortController().signal, toolUseId: "toolu_1", toolName };
}

const order = tool(
  "order",
  "Place an order",
  z.object({
    sku: z.string(),
    quantity: z.number().int().positive(),
    items: z.array(z.object({ name: z.string() })).optional(),
  }),
  async ({ sku, quantity }) => ({ content: `${quantity} × ${sku}` }),
);

describe("T3: input is validated before the handler runs", () => {
  it("invalid input never reaches the handler and names each failing field path", async () => {
    let called = false;
    const guarded = tool("guarded", "d", z.object({ n: z.number() }), async () => {
      called = true;
      return { content: "ran" };
    });
    const result = await runTool(guarded, { n: "seven" }, context("guarded"));
    expect(called).toBe(false);
    expect(result.isError).toBe(true);
    expect(toolResultText(result)).toContain('Invalid input for tool "guarded"');
    expect(toolResultText(result)).toContain(
      "- n: Invalid input: expected number, received string",
    );
    expect(result.error).toBeInstanceOf(ToolInputError);
  });

  it("lists every failing field with nested paths and what was expected", async () => {
    const result = await runTool(
      order,
      { sku: 5, quantity: -1, items: [{ name: "a" }, { title: "b" }] },
      context("order"),
    );
    const text = toolResultText(result);
    expect(text).toContain("- sku: Invalid input: expected string, received number");
    expect(text).toContain("- quantity: Too small: expected number to be >0");
    expect(text).toContain("- items[1].name: Invalid input: expected string, received undefined");
    expect(text).toMatch(/call the tool again/);
    const error = result.error as ToolInputError;
    expect(error.issues.map((issue) => issue.path)).toEqual([
      ["sku"],
      ["quantity"],
      ["items", 1, "name"],
    ]);
  });

  it("says when the input is not a JSON object at all", async () => {
    const result = await runTool(order, "sku=5", context("order"));
    expect(toolResultText(result)).toContain("The input must be a JSON object; received string.");
  });

  it("explains which options of a union were tried", async () => {
    const either = tool(
      "either",
      "d",
      z.object({ id: z.union([z.string(), z.number()]) }),
      async () => ({
        content: "x",
      }),
    );
    const result = await runTool(either, { id: true }, context("either"));
    expect(toolResultText(result)).toContain("matched none of the allowed options");
    expect(toolResultText(result)).toContain("expected string");
    expect(toolResultText(result)).toContain("expected number");
  });

  it("passes the parsed output (defaults applied) to the handler", async () => {
    const paged = tool(
      "paged",
      "d",
      z.object({ limit: z.number().default(10) }),
      async ({ limit }) => ({ content: String(limit) }),
    );
    expect(toolResultText(await runTool(paged, {}, context("paged")))).toBe("10");
  });

  it("supports async refinements", async () => {
    const checked = tool(
      "checked",
      "d",
      z.object({ name: z.string().refine(async (value) => value !== "taken", "name is taken") }),
      async ({ name }) => ({ content: name }),
    );
    expect(toolResultText(await runTool(checked, { name: "free" }, context("checked")))).toBe(
      "free",
    );
    const refused = await runTool(checked, { name: "taken" }, context("checked"));
    expect(refused.isError).toBe(true);
    expect(toolResultText(refused)).toContain("- name: name is taken");
  });

  it("a refinement that throws is reported, not thrown", async () => {
    const boom = tool(
      "boom",
      "d",
      z.object({
        a: z.string().refine(() => {
          throw new Error("kaput");
        }),
      }),
      async () => ({ content: "x" }),
    );
    const result = await runTool(boom, { a: "x" }, context("boom"));
    expect(result.isError).toBe(true);
    expect(toolResultText(result)).toContain("kaput");
  });

  it("parseToolInput returns the typed input on success", async () => {
    const parsed = await parseToolInput(order, { sku: "A1", quantity: 2 });
    expect(parsed).toEqual({ success: true, input: { sku: "A1", quantity: 2 } });
  });
});

describe("T4, T5: the handler's return value becomes the tool_result content", () => {
  it("T5: a string becomes one text block", async () => {
    const result = await runTool(order, { sku: "A1", quantity: 2 }, context("order"));
    expect(result).toEqual({
      content: [{ type: "text", text: "2 × A1" }],
      isError: false,
      endTurn: false,
    });
  });

  it("T5: an array of text and image blocks is kept as given", () => {
    const blocks = [
      { type: "text", text: "chart:" },
      { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } },
      { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
    ] as const;
    const result = normalizeToolResult("chart", { content: blocks });
    expect(result.content).toEqual(blocks);
    expect(result.isError).toBe(false);
  });

  it("T4: an empty string becomes no blocks (the APIs refuse empty text blocks)", () => {
    expect(normalizeToolResult("t", { content: "" }).content).toEqual([]);
    expect(normalizeToolResult("t", { content: [{ type: "text", text: "" }] }).content).toEqual([]);
  });

  it("isError: true marks the result as failed without throwing", () => {
    expect(normalizeToolResult("t", { content: "no such user", isError: true }).isError).toBe(true);
  });

  it.each([
    [undefined, 'Tool "bad" returned undefined.'],
    [42, 'Tool "bad" returned 42.'],
    ["plain string", 'Tool "bad" returned "plain string".'],
    [{}, 'Tool "bad" returned an object without `content`.'],
    [{ content: 7 }, 'Tool "bad" returned content of type number.'],
    [
      { content: [{ type: "video", url: "x" }] },
      'Tool "bad" returned content[0] has unknown block type "video".',
    ],
    [
      { content: [{ type: "text" }] },
      'Tool "bad" returned content[0] of type text without a string `text`.',
    ],
    [
      { content: [{ type: "image", source: { type: "base64" } }] },
      "content[0] of type image without a valid `source`",
    ],
    [{ content: ["loose"] }, 'returned content[0] = "loose", not a block.'],
  ])("a malformed return (%j) becomes an is_error result that says so", async (value, message) => {
    const bad = tool("bad", "d", z.object({}), async () => value as never);
    const result = await runTool(bad, {}, context("bad"));
    expect(result.isError).toBe(true);
    expect(toolResultText(result)).toContain(message);
    expect(toolResultText(result)).toContain("A handler must return { content }");
    expect((result.error as LatticeError).code).toBe("invalid_tool_result");
  });
});

describe("T6: a throwing handler becomes an is_error result", () => {
  it("carries the error's message and the run goes on", async () => {
    const failing = tool("failing", "d", z.object({}), async () => {
      throw new Error("database is down");
    });
    const result = await runTool(failing, {}, context("failing"));
    expect(result.isError).toBe(true);
    expect(toolResultText(result)).toBe("database is down");
    expect((result.error as Error).message).toBe("database is down");
  });

  it("handles sync throws, rejections with strings, and non-Error values", async () => {
    const syncThrow = tool("sync", "d", z.object({}), () => {
      throw new TypeError("");
    });
    expect(toolResultText(await runTool(syncThrow, {}, context("sync")))).toBe(
      'Tool "sync" failed with TypeError.',
    );
    const rejectsString = tool("str", "d", z.object({}), () => Promise.reject("nope"));
    expect(toolResultText(await runTool(rejectsString, {}, context("str")))).toBe("nope");
    const throwsObject = tool("obj", "d", z.object({}), () => Promise.reject({ code: 1 }));
    expect(toolResultText(await runTool(throwsObject, {}, context("obj")))).toContain(
      "threw a non-Error value",
    );
  });

  it("executeTool never throws, even when the handler does synchronously", async () => {
    const syncThrow = tool("sync2", "d", z.object({}), () => {
      throw new Error("sync");
    });
    await expect(executeTool(syncThrow, {}, context("sync2"))).resolves.toMatchObject({
      isError: true,
    });
  });
});

describe("T8, T11: endTurn and structuredResult", () => {
  it("T8: endTurn: true is kept", () => {
    expect(normalizeToolResult("finish", { content: "42", endTurn: true })).toEqual({
      content: [{ type: "text", text: "42" }],
      isError: false,
      endTurn: true,
    });
  });

  it("T11: structuredResult is kept with endTurn", () => {
    const result = normalizeToolResult("finish", {
      content: "done",
      endTurn: true,
      structuredResult: { answer: 42 },
    });
    expect(result.structuredResult).toEqual({ answer: 42 });
  });

  it("T11: structuredResult without endTurn is ignored", () => {
    const result = normalizeToolResult("finish", {
      content: "done",
      structuredResult: { answer: 42 },
    });
    expect("structuredResult" in result).toBe(false);
    expect(result.endTurn).toBe(false);
  });

  it("toolResultText joins text blocks and skips images", () => {
    expect(
      toolResultText({
        content: [
          { type: "text", text: "a" },
          { type: "image", source: { type: "url", url: "https://x/y.png" } },
          { type: "text", text: "b" },
        ],
      }),
    ).toBe("a\nb");
  });
});
