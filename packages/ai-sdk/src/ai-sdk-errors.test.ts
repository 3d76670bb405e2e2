import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import type { ModelStreamEvent } from "@lattice/providers";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "./index.js";
import { collect, failure, finish, request, responseOf, usage } from "./mock-model.test-helpers.js";

describe("fromAiSdk: non-streaming (doGenerate)", () => {
  it("yields usage, stop and the response, with the same block mapping", async () => {
    const model = new MockLanguageModelV3({
      provider: "mock.chat",
      modelId: "mock-model",
      doGenerate: {
        content: [
          { type: "reasoning", text: "why", providerMetadata: { openai: { itemId: "rs_1" } } },
          { type: "text", text: "" },
          { type: "text", text: "Answer" },
          { type: "tool-call", toolCallId: "x", toolName: "lookup", input: '{"q":1}' },
          { type: "tool-call", toolCallId: "y", toolName: "lookup", input: "nope" },
          { type: "file", mediaType: "image/png", data: new Uint8Array([1, 2, 3]) },
        ],
        finishReason: { unified: "tool-calls", raw: "tool_calls" },
        usage: usage(9, 4, 2),
        response: { id: "gen_1", modelId: "mock-model-x", headers: { "x-request-id": "req_9" } },
        warnings: [],
      },
    });
    const events = await collect(fromAiSdk(model).stream(request({ stream: false })));
    expect(events.map((event) => event.type)).toEqual(["usage", "stop", "response"]);
    const response = responseOf(events);
    expect(response).toMatchObject({
      id: "gen_1",
      model: "mock-model-x",
      requestId: "req_9",
      stopReason: "tool_use",
      rawStopReason: "tool_calls",
      usage: { inputTokens: 9, outputTokens: 4, cacheReadInputTokens: 2 },
    });
    expect(response.message.content).toEqual([
      {
        type: "thinking",
        thinking: "why",
        signature: "",
        providerMetadata: { openai: { itemId: "rs_1" } },
      },
      { type: "text", text: "Answer" },
      { type: "tool_use", id: "x", name: "lookup", input: { q: 1 } },
      expect.objectContaining({
        type: "tool_use",
        id: "y",
        input: {},
        inputError: expect.stringContaining('"lookup"'),
      }),
      { type: "image", source: { type: "base64", media_type: "image/png", data: "AQID" } },
    ]);
    expect(model.doStreamCalls).toHaveLength(0);
  });
});

describe("fromAiSdk: errors, retries, abort and timeouts", () => {
  const apiError = (statusCode: number | undefined, headers: Record<string, string> = {}) =>
    new APICallError({
      message:
        statusCode === undefined
          ? "Cannot connect to API: connect ECONNREFUSED"
          : `status ${statusCode} from the API`,
      url: "https://api.example.com/v1/chat/completions?key=SECRET",
      requestBodyValues: {},
      statusCode,
      responseHeaders: { "x-request-id": "req_42", ...headers },
      isRetryable: statusCode === undefined || statusCode === 429 || statusCode >= 500,
      data: { error: { type: statusCode === 401 ? "authentication_error" : "rate_limit_error" } },
    });

  it("retries a retryable APICallError, honouring retry-after-ms, with retry events", async () => {
    let calls = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        calls++;
        if (calls < 3) throw apiError(429, { "retry-after-ms": "5" });
        return {
          stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
            { type: "text-delta", id: "t", delta: "ok" },
            finish("stop"),
          ]),
        };
      },
    });
    const events = await collect(fromAiSdk(model).stream(request()));
    const retries = events.filter((event) => event.type === "retry");
    expect(retries).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 5, status: 429 }),
      expect.objectContaining({ attempt: 2, delayMs: 5, status: 429 }),
    ]);
    expect(responseOf(events).retries).toBe(2);
  });

  it("maps a 401 to provider_authentication without retrying, naming the model and a safe endpoint", async () => {
    const model = new MockLanguageModelV3({
      provider: "acme.chat",
      modelId: "acme-1",
      doStream: async () => {
        throw apiError(401);
      },
    });
    const error = await failure(fromAiSdk(model).stream(request()));
    expect(error).toMatchObject({
      name: "ProviderError",
      code: "provider_authentication",
      status: 401,
      type: "authentication_error",
      retryable: false,
      requestId: "req_42",
      endpoint: "https://api.example.com/v1/chat/completions",
    });
    expect(error.message).toContain('AI SDK model "acme-1" (acme.chat)');
    expect(error.message).toContain("apiKey");
    expect(error.message).not.toContain("SECRET");
  });

  it("maps exhausted retries, connection failures and a missing key", async () => {
    const always = (error: unknown) =>
      new MockLanguageModelV3({
        doStream: async () => {
          throw error;
        },
      });
    const rateLimited = await failure(
      fromAiSdk(always(apiError(429, { "retry-after-ms": "0" })), { maxRetries: 1 }).stream(
        request(),
      ),
    );
    expect(rateLimited).toMatchObject({ code: "provider_rate_limited", status: 429 });
    expect(rateLimited.message).toContain("after 1 retry");

    const refused = await failure(
      fromAiSdk(always(apiError(undefined, { "retry-after-ms": "0" })), { maxRetries: 0 }).stream(
        request(),
      ),
    );
    expect(refused).toMatchObject({ code: "provider_connection", retryable: true });

    const missing = await failure(
      fromAiSdk(
        always(new LoadAPIKeyError({ message: "Acme API key is missing. Set ACME_API_KEY." })),
      ).stream(request()),
    );
    expect(missing.code).toBe("provider_missing_api_key");
    expect(missing.message).toContain("ACME_API_KEY");
  });

  it("aborts promptly with an AbortError, even when the model ignores its signal", async () => {
    const model = new MockLanguageModelV3({
      doStream: async () => ({
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          start(controller) {
            controller.enqueue({ type: "text-delta", id: "t", delta: "thinking about it" });
            // Never closes, never looks at the abort signal.
          },
        }),
      }),
    });
    const controller = new AbortController();
    const events: ModelStreamEvent[] = [];
    const started = performance.now();
    const outcome = (async () => {
      for await (const event of fromAiSdk(model).stream(request({ signal: controller.signal }))) {
        events.push(event);
        if (event.type === "text_delta") setTimeout(() => controller.abort(), 10);
      }
    })();
    await expect(outcome).rejects.toMatchObject({ name: "AbortError" });
    expect(performance.now() - started).toBeLessThan(1000);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "block_start",
      "text_delta",
    ]);

    const hanging = new MockLanguageModelV3({ doStream: () => new Promise(() => {}) });
    const early = new AbortController();
    const pending = collect(fromAiSdk(hanging).stream(request({ signal: early.signal })));
    setTimeout(() => early.abort(), 10);
    await expect(pending).rejects.toMatchObject({ name: "AbortError" });
  });

  it("times out a model that makes no progress, and retries it", async () => {
    let calls = 0;
    const model = new MockLanguageModelV3({
      doStream: async () => {
        calls++;
        if (calls === 1)
          return { stream: new ReadableStream<LanguageModelV3StreamPart>({ start() {} }) };
        return {
          stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
            { type: "text-delta", id: "t", delta: "ok" },
            finish("stop"),
          ]),
        };
      },
    });
    const events = await collect(fromAiSdk(model, { timeoutMs: 50 }).stream(request()));
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1 });
    expect((events[0] as { message: string }).message).toMatch(/made no progress .* for 50 ms/);
    expect(responseOf(events).retries).toBe(1);

    const silent = new MockLanguageModelV3({ doGenerate: () => new Promise(() => {}) });
    const error = await failure(
      fromAiSdk(silent, { timeoutMs: 30, maxRetries: 0 }).stream(request({ stream: false })),
    );
    expect(error.code).toBe("provider_timeout");
  });
});
