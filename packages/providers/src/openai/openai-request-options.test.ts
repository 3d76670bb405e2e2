import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelRequest, ModelToolChoice, ModelToolSpec } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { openaiCompatible } from "./openai-compatible.js";

const LOOKUP: ModelToolSpec = {
  name: "lookup",
  description: "Look a word up",
  inputSchema: { type: "object", properties: { word: { type: "string" } } },
};

async function send(provider: ReturnType<typeof openaiCompatible>, request: ModelRequest) {
  let response: ModelResponse | undefined;
  for await (const event of provider.stream(request)) {
    if (event.type === "response") response = event.response;
  }
  return response!;
}

describe("openaiCompatible(): reasoningEffort, toolChoice and stopSequences", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it.each(["low", "medium", "high"] as const)(
    "sends reasoningEffort %s as reasoning_effort, and never Anthropic's thinking or cache_control",
    async (effort) => {
      server.enqueue({
        content: [
          { type: "thinking", thinking: "Reasoning.", signature: "" },
          { type: "text", text: "42" },
        ],
      });
      const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
      const response = await send(provider, {
        model: "o4-mini",
        maxTokens: 100,
        reasoningEffort: effort,
        thinking: { budgetTokens: 2048 },
        promptCaching: "auto",
        system: "Be brief.",
        messages: [{ role: "user", content: "Answer?" }],
      });
      expect(response.message.content).toEqual([
        { type: "thinking", thinking: "Reasoning.", signature: "" },
        { type: "text", text: "42" },
      ]);
      const body = server.requests[0]!.body as Record<string, unknown>;
      expect(body.reasoning_effort).toBe(effort);
      expect(body.max_tokens).toBe(100);
      expect(body).not.toHaveProperty("thinking");
      expect(JSON.stringify(body)).not.toContain("cache_control");
    },
  );

  it.each([
    [{ type: "auto" }, "auto"],
    [{ type: "any" }, "required"],
    [{ type: "none" }, "none"],
    [
      { type: "tool", name: "lookup" },
      { type: "function", function: { name: "lookup" } },
    ],
  ] as [ModelToolChoice, unknown][])(
    "sends toolChoice %j as tool_choice %j",
    async (choice, wire) => {
      server.enqueue({ content: [{ type: "text", text: "ok" }] });
      const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
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

  it("sends stopSequences as stop (and no empty stop), streaming and not", async () => {
    const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
    for (const stream of [true, false]) {
      server.enqueue(
        { content: [{ type: "text", text: "one two" }], stopReason: "stop_sequence" },
        { content: [{ type: "text", text: "one" }] },
      );
      const base = {
        model: "m",
        maxTokens: 10,
        stream,
        messages: [{ role: "user" as const, content: "Count" }],
      };
      const response = await send(provider, { ...base, stopSequences: ["three", "END"] });
      expect((server.requests.at(-1)!.body as { stop: unknown }).stop).toEqual(["three", "END"]);
      // Chat Completions reports a stop sequence as finish_reason "stop", like a natural end.
      expect(response.stopReason).toBe("end_turn");
      await send(provider, { ...base, stopSequences: [] });
      expect(server.requests.at(-1)!.body).not.toHaveProperty("stop");
    }
  });
});
