import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelMessage } from "../content-blocks.js";
import type { ModelRequest, ModelToolChoice, ModelToolSpec } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { anthropic } from "./anthropic.js";
import { toAnthropicBody } from "./to-anthropic-body.js";

const LOOKUP: ModelToolSpec = {
  name: "lookup",
  description: "Look a word up",
  inputSchema: { type: "object", properties: { word: { type: "string" } } },
};

async function send(provider: ReturnType<typeof anthropic>, request: ModelRequest) {
  let response: ModelResponse | undefined;
  for await (const event of provider.stream(request)) {
    if (event.type === "response") response = event.response;
  }
  return response!;
}

describe("anthropic(): thinking, toolChoice and stopSequences", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("sends thinking as { type: enabled, budget_tokens } and raises max_tokens to budget + maxTokens only when maxTokens is not above the budget", () => {
    const base = { model: "m", messages: [{ role: "user" as const, content: "x" }] };
    const cases = [
      { maxTokens: 8000, budgetTokens: 2048, expected: 8000 },
      { maxTokens: 2049, budgetTokens: 2048, expected: 2049 },
      { maxTokens: 2048, budgetTokens: 2048, expected: 4096 },
      { maxTokens: 1024, budgetTokens: 10_000, expected: 11_024 },
    ];
    for (const { maxTokens, budgetTokens, expected } of cases) {
      const body = toAnthropicBody({ ...base, maxTokens, thinking: { budgetTokens } }, false);
      expect(body.thinking).toEqual({ type: "enabled", budget_tokens: budgetTokens });
      expect(body.max_tokens).toBe(expected);
      expect(body.max_tokens).toBeGreaterThan(budgetTokens);
    }
    expect(toAnthropicBody({ ...base, maxTokens: 100 }, false)).not.toHaveProperty("thinking");
  });

  it("does not send temperature with thinking, and the server (checking the API's rules) accepts the request, streaming and not", async () => {
    const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
    for (const stream of [true, false]) {
      server.enqueue({
        content: [
          { type: "thinking", thinking: "Let me think.", signature: "sig-1" },
          { type: "text", text: "42" },
        ],
      });
      const response = await send(provider, {
        model: "m",
        maxTokens: 1024,
        temperature: 0.3,
        thinking: { budgetTokens: 1024 },
        stream,
        messages: [{ role: "user", content: "Answer?" }],
      });
      expect(response.message.content).toEqual([
        { type: "thinking", thinking: "Let me think.", signature: "sig-1" },
        { type: "text", text: "42" },
      ]);
      const body = server.requests.at(-1)!.body as Record<string, unknown>;
      expect(body).toMatchObject({
        max_tokens: 2048,
        thinking: { type: "enabled", budget_tokens: 1024 },
      });
      expect(body).not.toHaveProperty("temperature");
    }
  });

  it("round-trips thinking signatures and redacted thinking unchanged, streaming and not", async () => {
    const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
    for (const stream of [true, false]) {
      server.enqueue(
        {
          content: [
            {
              type: "thinking",
              thinking: "Look it up.",
              signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h",
            },
            { type: "tool_use", id: `toolu_${stream}`, name: "lookup", input: { word: "x" } },
          ],
          chunkSize: 4,
        },
        { content: [{ type: "text", text: "done" }] },
      );
      const request = {
        model: "m",
        maxTokens: 4096,
        thinking: { budgetTokens: 2048 },
        tools: [LOOKUP],
        stream,
      };
      const first = await send(provider, {
        ...request,
        messages: [{ role: "user", content: "Define x." }],
      });
      const redacted = { type: "redacted_thinking" as const, data: "EmwKAhgBEgy3va3pzix/LafPsn4a" };
      const assistant = [redacted, ...first.message.content];
      const messages: ModelMessage[] = [
        { role: "user", content: "Define x." },
        { role: "assistant", content: assistant },
        {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: `toolu_${stream}`, content: "a letter" }],
        },
      ];
      await send(provider, { ...request, messages });
      const sent = (server.requests.at(-1)!.body as { messages: { content: unknown }[] })
        .messages[1]!.content;
      expect(sent).toEqual([
        redacted,
        { type: "thinking", thinking: "Look it up.", signature: "EqQBCgIYAhIM1gbcDa9GJwZA2b3h" },
        { type: "tool_use", id: `toolu_${stream}`, name: "lookup", input: { word: "x" } },
      ]);
    }
  });

  it.each([
    [{ type: "auto" }, { type: "auto" }],
    [{ type: "any" }, { type: "any" }],
    [{ type: "none" }, { type: "none" }],
    [
      { type: "tool", name: "lookup" },
      { type: "tool", name: "lookup" },
    ],
  ] as [ModelToolChoice, unknown][])(
    "sends toolChoice %j as tool_choice %j",
    async (choice, wire) => {
      server.enqueue({ content: [{ type: "text", text: "ok" }] });
      const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
      await send(provider, {
        model: "m",
        maxTokens: 10,
        tools: [LOOKUP],
        toolChoice: choice,
        messages: [{ role: "user", content: "x" }],
      });
      expect((server.requests[0]!.body as { tool_choice: unknown }).tool_choice).toEqual(wire);
    },
  );

  it("sends stopSequences as stop_sequences and reports stop_sequence", async () => {
    server.enqueue({ content: [{ type: "text", text: "one two" }], stopReason: "stop_sequence" });
    const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
    const response = await send(provider, {
      model: "m",
      maxTokens: 10,
      stopSequences: ["three", "END"],
      messages: [{ role: "user", content: "Count" }],
    });
    expect((server.requests[0]!.body as { stop_sequences: unknown }).stop_sequences).toEqual([
      "three",
      "END",
    ]);
    expect(response.stopReason).toBe("stop_sequence");
  });

  it("sends no reasoning_effort (an OpenAI field) and no empty stop_sequences", () => {
    const body = toAnthropicBody(
      {
        model: "m",
        maxTokens: 10,
        reasoningEffort: "high",
        stopSequences: [],
        messages: [{ role: "user", content: "x" }],
      },
      true,
    );
    expect(body).not.toHaveProperty("reasoning_effort");
    expect(body).not.toHaveProperty("stop_sequences");
  });
});
