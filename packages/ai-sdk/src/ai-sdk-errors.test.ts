import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { APICallError, LoadAPIKeyError } from "@ai-sdk/provider";
import { type ModelStreamEvent, ProviderError } from "@lattice/providers";
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

describe("fromAiSdk: a model object that answers something malformed (H27)", () => {
  const label = 'AI SDK model "acme-1" (acme.chat)';

  /** The failure of one streamed call whose `doStream` resolves to `answer`. */
  const streamed = (answer: () => unknown) =>
    failure(
      fromAiSdk(
        new MockLanguageModelV3({
          provider: "acme.chat",
          modelId: "acme-1",
          doStream: async () => answer() as never,
        }),
        { maxRetries: 0 },
      ).stream(request()),
    );

  const expectMalformed = (error: unknown, field: string) => {
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toMatchObject({
      name: "ProviderError",
      code: "provider_malformed_response",
      retryable: false,
    });
    const message = (error as Error).message;
    expect(message).toContain(label);
    expect(message).toContain(field);
    expect(message).not.toMatch(/TypeError|Cannot read|is not a function|is not iterable/);
  };

  it.each([
    ["{ stream: null }", () => ({ stream: null }), '"stream"'],
    ["nothing", () => undefined, '"stream"'],
    ["a stream that is not a ReadableStream", () => ({ stream: { parts: [] } }), '"stream"'],
  ])(
    "H27: doStream() resolving to %s ends with a ProviderError naming the model and the field",
    async (_, answer, field) => {
      expectMalformed(await streamed(answer), field);
    },
  );

  const partsOf =
    (...parts: unknown[]) =>
    () => ({
      stream: convertArrayToReadableStream(parts as LanguageModelV3StreamPart[]),
    });

  it.each([
    ["null", [null], "stream part 0"],
    ["a number", [42], "stream part 0"],
    ["an object without a type", [{ id: "t", delta: "x" }], '"type"'],
    ["a text-delta without its delta", [{ type: "text-delta", id: "t" }], '"delta"'],
    ["a text-delta without its id", [{ type: "text-delta", delta: "hi" }], '"id"'],
    [
      "a tool-input-start without its toolName",
      [{ type: "tool-input-start", id: "c1" }],
      '"toolName"',
    ],
    [
      "a tool-call without its toolCallId",
      [{ type: "tool-call", toolName: "lookup", input: "{}" }],
      '"toolCallId"',
    ],
    ["a file without its mediaType", [{ type: "file", data: "AQID" }], '"mediaType"'],
    [
      "a finish without its usage",
      [{ type: "finish", finishReason: { unified: "stop" } }],
      '"usage"',
    ],
    [
      "a finish without its finishReason",
      [{ type: "finish", usage: usage(1, 1) }],
      '"finishReason"',
    ],
  ])(
    "H27: a stream part that is %s ends with a ProviderError naming the model and the field",
    async (_, parts, field) => {
      expectMalformed(await streamed(partsOf(...parts)), field);
    },
  );

  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  it.each([
    ["a cyclic object", cyclic],
    ["an object holding a BigInt", { a: 1n }],
  ])(
    "H27: a streamed tool-call whose input is %s (JSON cannot take it) ends with a ProviderError naming the model and the field",
    async (_, input) => {
      for (const parts of [
        [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input }, finish("tool-calls")],
        [
          { type: "tool-input-start", id: "c1", toolName: "lookup" },
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input },
          finish("tool-calls"),
        ],
      ]) {
        expectMalformed(await streamed(partsOf(...parts)), '"input"');
      }
    },
  );

  it("H27: a stream reader whose read() resolves to null ends with a ProviderError naming the model", async () => {
    const error = await streamed(() => ({
      stream: {
        getReader: () => ({ read: async () => null, cancel: async () => {} }),
      },
    }));
    expectMalformed(error, "read()");
  });

  it("H27: a stream part of a type the bridge does not know is skipped, as newer parts are", async () => {
    const events = await collect(
      fromAiSdk(
        new MockLanguageModelV3({
          doStream: async () =>
            partsOf(
              { type: "some-future-part", anything: 1 },
              { type: "text-delta", id: "t", delta: "ok" },
              finish("stop"),
            )() as never,
        }),
      ).stream(request()),
    );
    expect(responseOf(events).message.content).toEqual([{ type: "text", text: "ok" }]);
  });

  const generated = (result: unknown) =>
    failure(
      fromAiSdk(
        new MockLanguageModelV3({
          provider: "acme.chat",
          modelId: "acme-1",
          doGenerate: async () => result as never,
        }),
        { maxRetries: 0 },
      ).stream(request({ stream: false })),
    );
  const complete = {
    content: [{ type: "text", text: "hi" }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: usage(1, 1),
    warnings: [],
  };

  it.each([
    ["nothing", undefined, "doGenerate()"],
    ["no content", { ...complete, content: undefined }, '"content"'],
    ["no finishReason", { ...complete, finishReason: undefined }, '"finishReason"'],
    ["no usage", { ...complete, usage: undefined }, '"usage"'],
    ["a content part that is null", { ...complete, content: [null] }, "content part 0"],
    ["a text part without its text", { ...complete, content: [{ type: "text" }] }, '"text"'],
    [
      "a tool-call without its toolName",
      { ...complete, content: [{ type: "tool-call", toolCallId: "c1", input: "{}" }] },
      '"toolName"',
    ],
    [
      "a file without its mediaType",
      { ...complete, content: [{ type: "file", data: "AQID" }] },
      '"mediaType"',
    ],
    [
      "a tool-call whose input holds a BigInt",
      {
        ...complete,
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { a: 1n } }],
      },
      '"input"',
    ],
    [
      "a tool-call whose input is cyclic",
      {
        ...complete,
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "lookup", input: cyclic }],
      },
      '"input"',
    ],
  ])(
    "H27: doGenerate() answering %s ends with a ProviderError naming the model and the field",
    async (_, result, field) => {
      expectMalformed(await generated(result), field);
    },
  );
});
