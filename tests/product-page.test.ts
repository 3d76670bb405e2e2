// The product page's examples, word for word, through `agent-lattice`. The endpoints it names
// are routed to the scripted model server on 127.0.0.1 (see deepseek-fetch.ts).
import { createAgent, tool } from "agent-lattice";
import { createScriptedModelServer, type ScriptedModelServer } from "agent-lattice/testing";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod/v4";
import { routeModelApisTo, type SentRequest } from "./deepseek-fetch.js";

let server: ScriptedModelServer;
let sent: SentRequest[];
let restore: () => void;

beforeEach(async () => {
  server = await createScriptedModelServer();
  sent = [];
  restore = routeModelApisTo(server, sent);
  vi.stubEnv("DEEPSEEK_API_KEY", "sk-deepseek-test");
  vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-test");
});
afterEach(async () => {
  restore();
  vi.unstubAllEnvs();
  await server.close();
});

describe("defining a tool (T1–T4, T34)", () => {
  it("T1, T2, T34, H29: the calculator runs on DeepSeek's Anthropic endpoint as written", async () => {
    const calculator = tool(
      "calculator",
      "Apply an arithmetic operator to two numbers",
      z.object({ a: z.number(), op: z.enum(["+", "-", "*", "/"]), b: z.number() }),
      async ({ a, op, b }) => {
        const value = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : a / b;
        return { content: String(value) };
      },
    );

    const agent = createAgent({
      apiKey: process.env.DEEPSEEK_API_KEY,
      baseURL: "https://api.deepseek.com/anthropic",
      model: "deepseek-v4-flash",
      tools: [calculator],
    });

    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_calc",
            name: "calculator",
            input: { a: 6, op: "*", b: 7 },
          },
        ],
      },
      { content: [{ type: "text", text: "6 * 7 = 42" }] },
    );
    const result = await agent.run("What is 6 * 7?");
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      result: "6 * 7 = 42",
      numTurns: 2,
    });
    expect(sent[0]?.url).toBe("https://api.deepseek.com/anthropic/v1/messages");
    expect(sent[0]?.headers.get("x-api-key")).toBe("sk-deepseek-test");
    expect(sent[0]?.headers.get("anthropic-version")).toBe("2023-06-01");
    const first = server.requests[0]?.body as {
      model: string;
      tools: Array<{ name: string; input_schema: unknown }>;
    };
    expect(first.model).toBe("deepseek-v4-flash");
    // T2: the model received the JSON Schema of the Zod schema.
    expect(first.tools).toEqual([
      {
        name: "calculator",
        description: "Apply an arithmetic operator to two numbers",
        input_schema: {
          type: "object",
          properties: {
            a: { type: "number" },
            op: { type: "string", enum: ["+", "-", "*", "/"] },
            b: { type: "number" },
          },
          required: ["a", "op", "b"],
        },
      },
    ]);
    // T4: the handler's value went back as the tool_result.
    const second = server.requests[1]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(second.messages.at(-1)).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "toolu_calc", content: [{ type: "text", text: "42" }] },
      ],
    });
  });

  it("T3, T6: invalid input and a throwing handler become is_error results the model can act on", async () => {
    const calculator = tool(
      "calculator",
      "Apply an arithmetic operator to two numbers",
      z.object({ a: z.number(), op: z.enum(["+", "-", "*", "/"]), b: z.number() }),
      async ({ a, op, b }) => {
        if (op === "/" && b === 0) throw new Error("division by zero");
        const value = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : a / b;
        return { content: String(value) };
      },
    );
    const agent = createAgent({ model: "claude-sonnet-4-6", tools: [calculator] });
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "bad_input",
            name: "calculator",
            input: { a: 1, op: "process.exit()", b: 1 },
          },
          { type: "tool_use", id: "throws", name: "calculator", input: { a: 1, op: "/", b: 0 } },
        ],
      },
      { content: [{ type: "text", text: "I could not compute that." }] },
    );
    const result = await agent.run("Compute");
    expect(result.subtype).toBe("success");
    expect(sent[0]?.url).toBe("https://api.anthropic.com/v1/messages");
    expect(sent[0]?.headers.get("x-api-key")).toBe("sk-ant-test");
    const results = (
      server.requests[1]!.body as { messages: Array<{ content: unknown }> }
    ).messages.at(-1)?.content as Array<{
      tool_use_id: string;
      is_error?: boolean;
      content: Array<{ text: string }>;
    }>;
    expect(results[0]).toMatchObject({ tool_use_id: "bad_input", is_error: true });
    expect(results[0]?.content[0]?.text).toContain(
      '- op: Invalid option: expected one of "+"|"-"|"*"|"/"',
    );
    expect(results[1]).toMatchObject({
      tool_use_id: "throws",
      is_error: true,
      content: [{ text: "division by zero" }],
    });
  });
});

describe("ending the run from a tool (T8, T11)", () => {
  it("T8: the page's finish tool ends the run with its answer", async () => {
    const finish = tool(
      "finish",
      "Submit the final answer and end the run",
      z.object({ answer: z.string() }),
      async ({ answer }) => ({ content: answer, endTurn: true }),
    );
    const agent = createAgent({
      apiKey: process.env.DEEPSEEK_API_KEY,
      baseURL: "https://api.deepseek.com/anthropic",
      model: "deepseek-v4-flash",
      tools: [finish],
    });
    server.enqueue({ content: [{ type: "tool_use", name: "finish", input: { answer: "Paris" } }] });
    const result = await agent.run("Capital of France? Use finish.");
    expect(result).toMatchObject({
      subtype: "success",
      result: "Paris",
      structuredResult: undefined,
      numTurns: 1,
    });
    expect(server.requests).toHaveLength(1);
  });
});

describe("concurrent tools (T13, T14, T18)", () => {
  it("T13, T14: the page's search runs three queries at the same time under maxConcurrency 8", async () => {
    let inFlight = 0;
    let peak = 0;
    const documentIndex = {
      async search(query: string) {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await new Promise((resolve) => setTimeout(resolve, 100));
        inFlight--;
        return `results for ${query}`;
      },
    };
    const search = tool(
      "search",
      "Search documents",
      z.object({ query: z.string() }),
      async ({ query }) => {
        // 业务代码：替换成你的数据库或搜索客户端。
        return { content: await documentIndex.search(query) };
      },
      { isConcurrencySafe: () => true },
    );

    const agent = createAgent({
      model: "claude-sonnet-4-6",
      tools: [search],
      toolConcurrency: {
        mode: "safe",
        maxConcurrency: 8,
      },
    });
    server.enqueue(
      {
        content: ["a", "b", "c"].map((query) => ({
          type: "tool_use" as const,
          name: "search",
          input: { query },
        })),
      },
      { content: [{ type: "text", text: "found" }] },
    );
    const result = await agent.run("Search a, b and c");
    expect(result.result).toBe("found");
    expect(peak).toBe(3);
    // T17: the model was told it may batch independent calls.
    // api.anthropic.com gets prompt caching by default: the system prompt is a block array.
    expect(JSON.stringify((server.requests[0]!.body as { system: unknown }).system)).toMatch(
      /in a single reply/,
    );
  });
});

describe("metadata and strict options (T29, T31–T33)", () => {
  it("T29: metadata passes through unchanged and never reaches the model", async () => {
    const metadata = { contractVersion: "2024-06" };
    const search = tool(
      "search",
      "Search documents",
      z.object({ query: z.string() }),
      async () => ({ content: "" }),
      {
        metadata,
      },
    );
    expect(search.metadata).toBe(metadata);
    const agent = createAgent({ model: "claude-sonnet-4-6", tools: [search] });
    server.enqueue({ content: [{ type: "text", text: "ok" }] });
    await agent.run("hi");
    expect(JSON.stringify(server.requests[0]?.body)).not.toContain("2024-06");
  });

  it("T32: the page's exact message for an unknown AgentOptions key", () => {
    let message: string | undefined;
    try {
      createAgent({ model: "claude-sonnet-4-6", bogusOption: true } as never);
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'AgentOptions: unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });
});
