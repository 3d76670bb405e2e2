import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { anthropic } from "./anthropic/anthropic.js";
import type { ModelProviderV1 } from "./model-provider.js";
import type { ModelResponse, ModelUsage } from "./model-response.js";
import { openaiCompatible } from "./openai/openai-compatible.js";
import { readOpenAiUsage } from "./openai/openai-usage.js";
import { createScriptedModelServer, type ScriptedModelServer } from "./testing/index.js";

async function respond(
  provider: ModelProviderV1,
  stream: boolean,
): Promise<{ response: ModelResponse; usageEvents: ModelUsage[] }> {
  const usageEvents: ModelUsage[] = [];
  let response: ModelResponse | undefined;
  for await (const event of provider.stream({
    model: "m",
    maxTokens: 50,
    stream,
    messages: [{ role: "user", content: "Hi" }],
  })) {
    if (event.type === "usage") usageEvents.push(event.usage);
    if (event.type === "response") response = event.response;
  }
  return { response: response!, usageEvents };
}

describe("cache tokens in the response usage", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([true, false])(
    "Anthropic reports cache_read_input_tokens and cache_creation_input_tokens (stream: %s)",
    async (stream) => {
      server.enqueue({
        content: [{ type: "text", text: "Hi" }],
        usage: {
          inputTokens: 12,
          outputTokens: 5,
          cacheReadInputTokens: 900,
          cacheCreationInputTokens: 300,
        },
      });
      const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
      const { response, usageEvents } = await respond(provider, stream);
      const expected = {
        inputTokens: 12,
        outputTokens: 5,
        cacheReadInputTokens: 900,
        cacheCreationInputTokens: 300,
      };
      expect(response.usage).toEqual(expected);
      expect(usageEvents.at(-1)).toEqual(expected);
    },
  );

  it.each([true, false])(
    "OpenAI-compatible reports prompt_tokens_details.cached_tokens as cacheReadInputTokens, out of inputTokens (stream: %s)",
    async (stream) => {
      server.enqueue({
        content: [{ type: "text", text: "Hi" }],
        usage: { inputTokens: 12, outputTokens: 5, cacheReadInputTokens: 1024 },
      });
      const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
      const { response, usageEvents } = await respond(provider, stream);
      const expected = { inputTokens: 12, outputTokens: 5, cacheReadInputTokens: 1024 };
      expect(response.usage).toEqual(expected);
      if (stream) expect(usageEvents.at(-1)).toEqual(expected);
    },
  );

  it("reads DeepSeek's prompt_cache_hit_tokens when prompt_tokens_details is absent, and sets no cache field when nothing was cached", () => {
    expect(
      readOpenAiUsage({
        prompt_tokens: 100,
        completion_tokens: 7,
        prompt_cache_hit_tokens: 64,
        prompt_cache_miss_tokens: 36,
      }),
    ).toEqual({ inputTokens: 36, outputTokens: 7, cacheReadInputTokens: 64 });
    expect(
      readOpenAiUsage({
        prompt_tokens: 100,
        completion_tokens: 7,
        prompt_tokens_details: { cached_tokens: 0 },
      }),
    ).toEqual({ inputTokens: 100, outputTokens: 7 });
  });
});
