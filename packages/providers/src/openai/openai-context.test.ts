import { afterEach, describe, expect, it } from "vitest";
import type { ModelRequest } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import {
  createScriptedModelServer,
  estimateRequestTokens,
  type ScriptedModelServer,
} from "../testing/index.js";
import { openaiCompatible } from "./openai-compatible.js";

const KEY = "sk-openai-test-0123456789";
const REQUEST: ModelRequest = {
  model: "gpt-4.1",
  system: "Be brief.",
  maxTokens: 256,
  messages: [{ role: "user", content: "y".repeat(2_000) }],
};

async function outcome(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<ModelResponse | ProviderError> {
  try {
    for await (const event of iterable) if (event.type === "response") return event.response;
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error("no response");
}

describe("openaiCompatible(): context (issue 24)", () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  for (const stream of [true, false]) {
    it(`C4: context_length_exceeded is a provider_context_overflow with the sizes (${stream ? "streaming" : "non-streaming"})`, async () => {
      server = await createScriptedModelServer({
        apiKey: KEY,
        contextWindow: 120,
        turns: [{ content: [{ type: "text", text: "never sent" }] }],
      });
      const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
      const error = await outcome(provider.stream({ ...REQUEST, stream }));
      const sent = estimateRequestTokens(server.requests[0]!.body);
      expect(error).toBeInstanceOf(ProviderError);
      expect(error).toMatchObject({
        code: "provider_context_overflow",
        status: 400,
        type: "invalid_request_error",
        retryable: false,
        promptTokens: sent,
        contextLimit: 120,
        endpoint: `${server.openaiBaseURL}/chat/completions`,
      });
      const message = (error as ProviderError).message;
      expect(message).toContain(`${server.openaiBaseURL}/chat/completions`);
      expect(message).toContain(`(${sent} tokens > 120 maximum)`);
      expect(message).toContain("contextManagement");
      expect(server.requests).toHaveLength(1);
      expect(server.pendingTurns).toBe(1);
    });
  }

  it("C4: a DeepSeek-style 400 that says the same without the code is an overflow too", async () => {
    server = await createScriptedModelServer({
      turns: [
        {
          status: 400,
          body: {
            error: {
              message:
                "This model's maximum context length is 65536 tokens. However, you requested 70000 tokens (68976 in the messages, 1024 in the completion). Please reduce the length of the messages or completion.",
              type: "invalid_request_error",
              param: null,
              code: "invalid_request_error",
            },
          },
        },
      ],
    });
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    expect(await outcome(provider.stream(REQUEST))).toMatchObject({
      code: "provider_context_overflow",
      promptTokens: 68_976,
      contextLimit: 65_536,
      retryable: false,
    });
  });

  it("C7: contextManagement is ignored (not sent; the strict validator would refuse it)", async () => {
    server = await createScriptedModelServer({
      apiKey: KEY,
      turns: [{ content: [{ type: "text", text: "ok" }] }],
    });
    const provider = openaiCompatible({ apiKey: KEY, baseURL: server.openaiBaseURL });
    const response = await outcome(
      provider.stream({
        ...REQUEST,
        contextManagement: { edits: [{ type: "clear_tool_uses_20250919" }] },
      }),
    );
    expect(response).not.toBeInstanceOf(ProviderError);
    expect(response).not.toHaveProperty("contextEdits");
    expect(server.requests[0]!.body).not.toHaveProperty("context_management");
    expect(server.requests[0]!.headers["anthropic-beta"]).toBeUndefined();
  });
});
