import { type AnyToolDefinition, tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod/v4";
import { anthropic } from "./anthropic/anthropic.js";
import type { ModelProviderV1 } from "./model-provider.js";
import type { ModelRequest, ModelToolSpec } from "./model-request.js";
import { openaiCompatible } from "./openai/openai-compatible.js";
import { createScriptedModelServer, type ScriptedModelServer } from "./testing/index.js";

// Plain data: what an adapter outside the repository, or a test, can build by hand.
const SEARCH: ModelToolSpec = Object.freeze({
  name: "search",
  description: "Search documents",
  inputSchema: Object.freeze({
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { query: { type: "string" }, limit: { type: "number" } },
    required: ["query"],
    additionalProperties: false,
  }),
  strict: true,
});

async function call(provider: ModelProviderV1, request: ModelRequest) {
  for await (const event of provider.stream(request)) {
    if (event.type === "response") return event.response;
  }
  throw new Error("no response");
}

describe("ModelRequest.tools: plain data (ModelToolSpec)", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("a tool definition from @lattice/tools is a ModelToolSpec", () => {
    expectTypeOf<AnyToolDefinition>().toExtend<ModelToolSpec>();
    const definition = tool("t", "d", z.object({ a: z.string() }), async () => ({ content: "" }));
    const request: ModelRequest = {
      model: "m",
      maxTokens: 1,
      tools: [definition],
      messages: [{ role: "user", content: "x" }],
    };
    expect(request.tools?.[0]?.name).toBe("t");
  });

  it("both adapters send a handler-less spec using only name, description, inputSchema and strict", async () => {
    const withExtras = {
      ...SEARCH,
      handler: () => "never called",
      kind: "tool",
      metadata: { a: 1 },
    };
    server.enqueue(
      { content: [{ type: "tool_use", name: "search", input: { query: "q" } }] },
      { content: [{ type: "tool_use", name: "search", input: { query: "q", limit: null } }] },
    );
    const messages = [{ role: "user" as const, content: "Find q" }];
    const fromAnthropic = await call(anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL }), {
      model: "m",
      maxTokens: 50,
      tools: [withExtras],
      messages,
    });
    const fromOpenAi = await call(
      openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL }),
      {
        model: "m",
        maxTokens: 50,
        tools: [withExtras],
        messages,
      },
    );
    expect(fromAnthropic.message.content[0]).toMatchObject({
      name: "search",
      input: { query: "q" },
    });
    // Strict mode's null for the optional `limit` is removed again.
    expect(fromOpenAi.message.content[0]).toMatchObject({ name: "search", input: { query: "q" } });
    const [anthropicBody, openAiBody] = server.requests.map((request) => request.body) as [
      { tools: unknown[] },
      { tools: unknown[] },
    ];
    expect(anthropicBody.tools).toEqual([
      {
        name: "search",
        description: "Search documents",
        input_schema: {
          type: "object",
          properties: { query: { type: "string" }, limit: { type: "number" } },
          required: ["query"],
          additionalProperties: false,
        },
      },
    ]);
    expect(openAiBody.tools).toEqual([
      {
        type: "function",
        function: {
          name: "search",
          description: "Search documents",
          strict: true,
          parameters: {
            type: "object",
            properties: { query: { type: "string" }, limit: { type: ["number", "null"] } },
            required: ["query", "limit"],
            additionalProperties: false,
          },
        },
      },
    ]);
  });
});
