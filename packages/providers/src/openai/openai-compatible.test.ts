import { tool, UnknownOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod/v4";
import type { ModelMessage } from "../content-blocks.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import type { ProviderError } from "../provider-error.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { openaiCompatible } from "./openai-compatible.js";

const KEY = "sk-openai-test-0123456789";
const search = tool(
  "search",
  "Search documents",
  z.object({
    query: z.string(),
    limit: z.number().optional(),
    filter: z.object({ tag: z.string().optional() }).optional(),
  }),
  async () => ({ content: "" }),
  { strict: true },
);

async function collect(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("the last event is not a response");
  return { events, response: last.response };
}

describe("openaiCompatible()", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await server.close();
    vi.unstubAllEnvs();
  });

  it("implements ModelProviderV1 and posts to baseURL + /chat/completions with a bearer key", async () => {
    server.enqueue({ content: [{ type: "text", text: "Hello" }] });
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    expect(provider).toMatchObject({
      specificationVersion: "v1",
      name: "openai-compatible",
      baseURL: server.openaiBaseURL,
    });
    const { response } = await collect(
      provider.stream({
        model: "gpt-4.1",
        maxTokens: 50,
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(response.message.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(response.stopReason).toBe("end_turn");
    const request = server.requests[0]!;
    expect(request.path).toBe("/v1/chat/completions");
    expect(request.headers.authorization).toBe("[redacted]");
    expect(request.body).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
    });
  });

  it("assembles parallel tool calls by index, with reasoning as thinking, streaming and not", async () => {
    const reply = {
      content: [
        { type: "thinking" as const, thinking: "two lookups", signature: "" },
        { type: "text" as const, text: "Looking up both." },
        { type: "tool_use" as const, id: "call_1", name: "search", input: { query: "a" } },
        {
          type: "tool_use" as const,
          id: "call_2",
          name: "search",
          input: { query: "b", limit: 3 },
        },
      ],
      chunkSize: 3,
      usage: { inputTokens: 20, outputTokens: 9 },
    };
    server.enqueue(reply, reply);
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    for (const stream of [true, false]) {
      const { response } = await collect(
        provider.stream({
          model: "m",
          maxTokens: 50,
          stream,
          tools: [search],
          messages: [{ role: "user", content: "Hi" }],
        }),
      );
      expect(response.message.content).toEqual([
        { type: "thinking", thinking: "two lookups", signature: "" },
        { type: "text", text: "Looking up both." },
        { type: "tool_use", id: "call_1", name: "search", input: { query: "a" } },
        { type: "tool_use", id: "call_2", name: "search", input: { query: "b", limit: 3 } },
      ]);
      expect(response.stopReason).toBe("tool_use");
      expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 9 });
    }
  });

  it("sends strict tools with the strict schema and removes the nulls strict mode adds", async () => {
    server.enqueue({
      content: [
        {
          type: "tool_use",
          id: "call_s",
          name: "search",
          input: { query: "q", limit: null, filter: { tag: null } },
        },
      ],
    });
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    const { response } = await collect(
      provider.stream({
        model: "m",
        maxTokens: 50,
        tools: [search],
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(response.message.content[0]).toEqual({
      type: "tool_use",
      id: "call_s",
      name: "search",
      input: { query: "q", filter: {} },
    });
    const sent = (
      server.requests[0]!.body as {
        tools: { function: { strict: boolean; parameters: Record<string, unknown> } }[];
      }
    ).tools[0]!.function;
    expect(sent.strict).toBe(true);
    expect(sent.parameters).toMatchObject({
      additionalProperties: false,
      required: ["query", "limit", "filter"],
    });
  });

  it("round-trips a tool turn: tool results as role tool messages the server accepts", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "search", input: { query: "x" } }] },
      { content: [{ type: "text", text: "Found it" }] },
    );
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    const first = await collect(
      provider.stream({
        model: "m",
        maxTokens: 50,
        tools: [search],
        messages: [{ role: "user", content: "Find x" }],
      }),
    );
    const toolUse = first.response.message.content[0]!;
    if (toolUse.type !== "tool_use") throw new Error("expected a tool call");
    const messages: ModelMessage[] = [
      { role: "user", content: "Find x" },
      { role: "assistant", content: first.response.message.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: toolUse.id, content: "x is here" }],
      },
    ];
    const second = await collect(
      provider.stream({
        model: "m",
        maxTokens: 50,
        tools: [search],
        system: "Be brief.",
        messages,
      }),
    );
    expect(second.response.message.content).toEqual([{ type: "text", text: "Found it" }]);
    const sent = (server.requests[1]!.body as { messages: unknown[] }).messages;
    expect(sent[0]).toEqual({ role: "system", content: "Be brief." });
    expect(sent[3]).toEqual({ role: "tool", tool_call_id: toolUse.id, content: "x is here" });
  });

  it.each([
    ["end_turn", "end_turn"],
    ["max_tokens", "max_tokens"],
    ["refusal", "refusal"],
    ["stop_sequence", "end_turn"],
  ] as const)("maps finish_reason for %s", async (scripted, expected) => {
    server.enqueue({ content: [{ type: "text", text: "x" }], stopReason: scripted });
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    const { response } = await collect(
      provider.stream({ model: "m", maxTokens: 5, messages: [{ role: "user", content: "x" }] }),
    );
    expect(response.stopReason).toBe(expected);
  });

  it("reads OPENAI_API_KEY, needs a key only for api.openai.com, and names the variable on 401", async () => {
    vi.stubEnv("OPENAI_API_KEY", "");
    let missing: unknown;
    try {
      await collect(
        openaiCompatible().stream({
          model: "m",
          maxTokens: 5,
          messages: [{ role: "user", content: "x" }],
        }),
      );
    } catch (caught) {
      missing = caught;
    }
    expect((missing as ProviderError).code).toBe("provider_missing_api_key");
    vi.stubEnv("OPENAI_API_KEY", "sk-wrong-openai-key-1");
    let unauthorised: unknown;
    try {
      await collect(
        openaiCompatible({ baseURL: server.openaiBaseURL }).stream({
          model: "m",
          maxTokens: 5,
          messages: [{ role: "user", content: "x" }],
        }),
      );
    } catch (caught) {
      unauthorised = caught;
    }
    expect((unauthorised as ProviderError).status).toBe(401);
    expect((unauthorised as ProviderError).message).toContain("OPENAI_API_KEY");
    expect((unauthorised as ProviderError).message).not.toContain("sk-wrong-openai-key-1");
  });

  it("uses max_completion_tokens for api.openai.com by default", async () => {
    const bodies: unknown[] = [];
    const fetchImpl = (async (_url: string, init: RequestInit) => {
      bodies.push(JSON.parse(init.body as string));
      return new Response(
        JSON.stringify({
          id: "c",
          model: "m",
          choices: [
            { index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" },
          ],
        }),
        { headers: { "content-type": "application/json" } },
      );
    }) as unknown as typeof fetch;
    await collect(
      openaiCompatible({ apiKey: "k", fetch: fetchImpl }).stream({
        model: "m",
        maxTokens: 7,
        stream: false,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(bodies[0]).toMatchObject({ max_completion_tokens: 7 });
    expect(bodies[0]).not.toHaveProperty("max_tokens");
  });

  it("checks its options strictly", () => {
    expect(() => openaiCompatible({ apiKey: KEY, organization: "x" } as never)).toThrow(
      UnknownOptionError,
    );
    expect(() => openaiCompatible({ apiKey: KEY, organization: "x" } as never)).toThrow(
      'openaiCompatible(): unknown option "organization"',
    );
    expect(() => openaiCompatible({ maxTokensParameter: "tokens" as never })).toThrow(
      /maxTokensParameter/,
    );
  });
});
