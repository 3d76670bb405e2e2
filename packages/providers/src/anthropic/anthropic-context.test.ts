import { afterEach, describe, expect, it, vi } from "vitest";
import type { AnthropicContextManagement, ModelRequest } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { openaiCompatible } from "../openai/openai-compatible.js";
import { ProviderError } from "../provider-error.js";
import {
  createScriptedModelServer,
  estimateRequestTokens,
  type ScriptedModelServer,
} from "../testing/index.js";
import { bytewise, fetchChunks } from "../transport/recorded-stream.test-helpers.js";
import { anthropic } from "./anthropic.js";

const KEY = "sk-ant-test-0123456789";
const BETA = "context-management-2025-06-27";
const CONTEXT: AnthropicContextManagement = {
  edits: [
    {
      type: "clear_tool_uses_20250919",
      trigger: { type: "input_tokens", value: 30_000 },
      keep: { type: "tool_uses", value: 3 },
      clear_at_least: { type: "input_tokens", value: 5_000 },
      clear_tool_inputs: false,
      exclude_tools: ["web_search"],
    },
  ],
};
const REQUEST: ModelRequest = {
  model: "claude-sonnet-4-6",
  system: "Be brief.",
  maxTokens: 256,
  temperature: 0.5,
  stopSequences: ["END"],
  messages: [{ role: "user", content: "x".repeat(2_000) }],
};

async function last(iterable: AsyncIterable<ModelStreamEvent>): Promise<ModelResponse> {
  let response: ModelResponse | undefined;
  for await (const event of iterable) if (event.type === "response") response = event.response;
  if (response === undefined) throw new Error("no response");
  return response;
}

async function failure(iterable: AsyncIterable<ModelStreamEvent>): Promise<ProviderError> {
  try {
    for await (const _event of iterable) {
    }
  } catch (error) {
    if (error instanceof ProviderError) return error;
    throw error;
  }
  throw new Error("the call did not fail");
}

describe("anthropic(): context (issue 24)", () => {
  let server: ScriptedModelServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
    vi.unstubAllEnvs();
  });

  for (const stream of [true, false]) {
    it(`C4: a prompt longer than the window is a provider_context_overflow with the sizes (${stream ? "streaming" : "non-streaming"})`, async () => {
      server = await createScriptedModelServer({
        apiKey: KEY,
        contextWindow: 100,
        turns: [{ content: [{ type: "text", text: "never sent" }] }],
      });
      const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
      const error = await failure(provider.stream({ ...REQUEST, stream }));
      const sent = estimateRequestTokens(server.requests[0]!.body);
      expect(error).toMatchObject({
        name: "ProviderError",
        code: "provider_context_overflow",
        status: 400,
        type: "invalid_request_error",
        apiMessage: `prompt is too long: ${sent} tokens > 100 maximum`,
        retryable: false,
        promptTokens: sent,
        contextLimit: 100,
        requestId: "req_scripted_1",
        endpoint: `${server.anthropicBaseURL}/v1/messages`,
      });
      expect(error.message).toContain(`${server.anthropicBaseURL}/v1/messages`);
      expect(error.message).toContain(`(${sent} tokens > 100 maximum)`);
      expect(error.message).toContain("contextManagement");
      // Not retried, and no scripted turn used.
      expect(server.requests).toHaveLength(1);
      expect(server.pendingTurns).toBe(1);
    });
  }

  it("C4: an overflow is not retried even when the API says x-should-retry: true", async () => {
    server = await createScriptedModelServer({
      turns: [
        {
          status: 400,
          headers: { "x-should-retry": "true" },
          body: {
            type: "error",
            error: {
              type: "invalid_request_error",
              message: "prompt is too long: 210000 tokens > 200000 maximum",
            },
          },
        },
      ],
    });
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL, maxRetries: 3 });
    const error = await failure(provider.stream(REQUEST));
    expect(error).toMatchObject({
      code: "provider_context_overflow",
      retryable: false,
      promptTokens: 210_000,
      contextLimit: 200_000,
    });
    expect(server.requests).toHaveLength(1);
  });

  it("C1: countTokens posts the count_tokens body (validated) and returns input_tokens, without using a turn", async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
    const provider = anthropic({
      apiKey: KEY,
      baseURL: server.anthropicBaseURL,
      promptCaching: "auto",
    });
    const count = await provider.countTokens!(REQUEST);
    expect(server.requests).toHaveLength(1);
    const recorded = server.requests[0]!;
    expect(recorded).toMatchObject({
      protocol: "anthropic",
      method: "POST",
      path: "/v1/messages/count_tokens",
      stream: false,
    });
    expect(count).toBe(estimateRequestTokens(recorded.body));
    const body = recorded.body as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(["messages", "model", "system"]);
    expect(recorded.headers["anthropic-version"]).toBe("2023-06-01");
    expect(recorded.headers["x-api-key"]).toBe("[redacted]");
    expect(recorded.headers["anthropic-beta"]).toBeUndefined();
    // The same prompt as the messages request would send, cache breakpoints included.
    expect(JSON.stringify(body.system)).toContain("cache_control");
    expect(server.pendingTurns).toBe(0);
  });

  it("C1: countTokens with contextManagement sends it with the beta header", async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    await provider.countTokens!({ ...REQUEST, contextManagement: CONTEXT });
    const recorded = server.requests[0]!;
    expect((recorded.body as Record<string, unknown>).context_management).toEqual(CONTEXT);
    expect(recorded.headers["anthropic-beta"]).toBe(BETA);
  });

  it("C1: countTokens maps errors and retries like a model call", async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
    const wrongKey = anthropic({
      apiKey: "sk-ant-wrong-0000000",
      baseURL: server.anthropicBaseURL,
    });
    const error = await wrongKey.countTokens!(REQUEST).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      code: "provider_authentication",
      endpoint: `${server.anthropicBaseURL}/v1/messages/count_tokens`,
    });
    let calls = 0;
    const flaky = (async (url: string, init: RequestInit) => {
      calls++;
      if (calls === 1) {
        return new Response('{"type":"error","error":{"type":"api_error","message":"boom"}}', {
          status: 500,
          headers: { "content-type": "application/json", "retry-after-ms": "1" },
        });
      }
      return globalThis.fetch(url, init);
    }) as typeof fetch;
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL, fetch: flaky });
    expect(await provider.countTokens!(REQUEST)).toBeGreaterThan(500);
    expect(calls).toBe(2);
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    const missing = anthropic({ baseURL: server.anthropicBaseURL });
    await expect(missing.countTokens!(REQUEST)).rejects.toMatchObject({
      code: "provider_missing_api_key",
    });
  });

  it("C1: countTokens honours request.signal, before and during the request", async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const aborted = await provider.countTokens!({ ...REQUEST, signal: AbortSignal.abort() }).catch(
      (caught: unknown) => caught,
    );
    expect((aborted as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(0);
    const hanging = ((_url: string, init: RequestInit) =>
      new Promise<Response>((_resolve, reject) => {
        init.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      })) as typeof fetch;
    const stalled = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL, fetch: hanging });
    const controller = new AbortController();
    const pending = stalled.countTokens!({ ...REQUEST, signal: controller.signal });
    setTimeout(() => controller.abort(), 10);
    const error = await pending.catch((caught: unknown) => caught);
    expect((error as Error).name).toBe("AbortError");
  });

  it("C1: the OpenAI-compatible adapter has no countTokens and no contextEditing", () => {
    const provider = openaiCompatible({ apiKey: KEY, baseURL: "http://127.0.0.1:1/v1" });
    expect(provider.countTokens).toBeUndefined();
    expect(provider.contextEditing).toBeUndefined();
    expect(anthropic({ apiKey: KEY }).contextEditing).toBe(true);
  });

  for (const stream of [true, false]) {
    it(`C7: context_management is sent exactly, with the beta merged into anthropic-beta, and applied edits come back (${stream ? "streaming" : "non-streaming"})`, async () => {
      server = await createScriptedModelServer({
        apiKey: KEY,
        turns: [
          {
            content: [{ type: "text", text: "Done." }],
            contextEdits: [
              { type: "clear_tool_uses_20250919", clearedInputTokens: 12_000, clearedToolUses: 4 },
            ],
          },
          { content: [{ type: "text", text: "Plain." }] },
        ],
      });
      const provider = anthropic({
        apiKey: KEY,
        baseURL: server.anthropicBaseURL,
        headers: { "Anthropic-Beta": "interleaved-thinking-2025-05-14" },
      });
      const response = await last(
        provider.stream({ ...REQUEST, stream, contextManagement: CONTEXT }),
      );
      const recorded = server.requests[0]!;
      expect((recorded.body as Record<string, unknown>).context_management).toEqual(CONTEXT);
      expect(recorded.headers["anthropic-beta"]).toBe(`interleaved-thinking-2025-05-14,${BETA}`);
      expect(response.contextEdits).toEqual([
        { type: "clear_tool_uses_20250919", clearedInputTokens: 12_000, clearedToolUses: 4 },
      ]);
      // Without contextManagement: the configured betas only, and no contextEdits.
      const plain = await last(provider.stream({ ...REQUEST, stream }));
      expect(server.requests[1]!.headers["anthropic-beta"]).toBe("interleaved-thinking-2025-05-14");
      expect(server.requests[1]!.body).not.toHaveProperty("context_management");
      expect(plain).not.toHaveProperty("contextEdits");
    });
  }

  it("C7: a beta already configured is not sent twice; no edit applied decodes as []", async () => {
    server = await createScriptedModelServer({
      apiKey: KEY,
      turns: [{ content: [{ type: "text", text: "ok" }] }],
    });
    const provider = anthropic({
      apiKey: KEY,
      baseURL: server.anthropicBaseURL,
      headers: { "anthropic-beta": ` ${BETA} , files-api-2025-04-14` },
    });
    const response = await last(
      provider.stream({
        ...REQUEST,
        thinking: { budgetTokens: 1024 },
        temperature: undefined,
        contextManagement: { edits: [{ type: "clear_thinking_20251015", keep: "all" }] },
      }),
    );
    expect(server.requests[0]!.headers["anthropic-beta"]).toBe(`${BETA},files-api-2025-04-14`);
    expect(response.contextEdits).toEqual([]);
  });
  it("C7: applied edits are decoded from a stream delivered one byte at a time", async () => {
    const events = [
      { type: "message_start", message: { id: "msg_1", model: "m", usage: { input_tokens: 9 } } },
      { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: "Hé" } },
      { type: "content_block_stop", index: 0 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn" },
        usage: { output_tokens: 2 },
        context_management: {
          applied_edits: [
            { type: "clear_tool_uses_20250919", cleared_input_tokens: 4096, cleared_tool_uses: 7 },
          ],
        },
      },
      { type: "message_stop" },
    ];
    const sse = events.map((data) => `event: ${data.type}\ndata: ${JSON.stringify(data)}\n\n`);
    const bytes = new TextEncoder().encode(sse.join(""));
    const provider = anthropic({
      apiKey: KEY,
      baseURL: "http://127.0.0.1:1",
      fetch: fetchChunks(bytewise(bytes)),
    });
    const response = await last(provider.stream({ ...REQUEST, contextManagement: CONTEXT }));
    expect(response.contextEdits).toEqual([
      { type: "clear_tool_uses_20250919", clearedInputTokens: 4096, clearedToolUses: 7 },
    ]);
    expect(response.message.content).toEqual([{ type: "text", text: "Hé" }]);
  });
});
