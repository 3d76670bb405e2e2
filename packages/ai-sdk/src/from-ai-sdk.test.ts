import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "./index.js";
import {
  collect,
  failure,
  finish,
  request,
  responseOf,
  streamingModel,
  usage,
} from "./mock-model.test-helpers.js";

describe("fromAiSdk: streaming a V3 model", () => {
  it("maps text, reasoning and tool input parts to Lattice's events and final message", async () => {
    const model = streamingModel([
      { type: "stream-start", warnings: [] },
      {
        type: "response-metadata",
        id: "resp_1",
        modelId: "mock-model-2026",
        timestamp: new Date(0),
      },
      { type: "reasoning-start", id: "r0" },
      { type: "reasoning-delta", id: "r0", delta: "Think" },
      { type: "reasoning-delta", id: "r0", delta: "ing" },
      { type: "reasoning-end", id: "r0", providerMetadata: { anthropic: { signature: "sig-1" } } },
      { type: "text-start", id: "t0" },
      { type: "text-delta", id: "t0", delta: "Let me " },
      { type: "text-delta", id: "t0", delta: "look." },
      { type: "text-end", id: "t0" },
      { type: "tool-input-start", id: "call_1", toolName: "lookup" },
      { type: "tool-input-delta", id: "call_1", delta: '{"q":' },
      { type: "tool-input-delta", id: "call_1", delta: '"x"}' },
      { type: "tool-input-end", id: "call_1" },
      { type: "tool-call", toolCallId: "call_1", toolName: "lookup", input: '{"q":"x"}' },
      finish("tool-calls", "tool_use", usage(7, 20, 100, 30)),
    ]);
    const events = await collect(fromAiSdk(model).stream(request()));
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "block_start",
      "thinking_delta",
      "thinking_delta",
      "block_stop",
      "block_start",
      "text_delta",
      "text_delta",
      "block_stop",
      "block_start",
      "tool_input_delta",
      "tool_input_delta",
      "block_stop",
      "usage",
      "stop",
      "response",
    ]);
    expect(events[0]).toEqual({ type: "message_start", id: "resp_1", model: "mock-model-2026" });
    expect(events[9]).toEqual({
      type: "block_start",
      index: 2,
      block: { type: "tool_use", id: "call_1", name: "lookup" },
    });
    const response = responseOf(events);
    expect(response).toMatchObject({
      id: "resp_1",
      model: "mock-model-2026",
      stopReason: "tool_use",
      rawStopReason: "tool_use",
      retries: 0,
      usage: {
        inputTokens: 7,
        outputTokens: 20,
        cacheReadInputTokens: 100,
        cacheCreationInputTokens: 30,
      },
    });
    expect(response.message.content).toEqual([
      {
        type: "thinking",
        thinking: "Thinking",
        signature: "",
        providerMetadata: { anthropic: { signature: "sig-1" } },
      },
      { type: "text", text: "Let me look." },
      { type: "tool_use", id: "call_1", name: "lookup", input: { q: "x" } },
    ]);
  });

  it("keeps a reasoning part without text when it carries provider metadata (redacted reasoning)", async () => {
    const model = streamingModel([
      {
        type: "reasoning-start",
        id: "r0",
        providerMetadata: { anthropic: { redactedData: "opaque" } },
      },
      { type: "reasoning-end", id: "r0" },
      { type: "text-start", id: "t0" },
      { type: "text-end", id: "t0" },
      { type: "text-start", id: "t1" },
      { type: "text-delta", id: "t1", delta: "Done." },
      { type: "text-end", id: "t1" },
      finish("stop", "end_turn"),
    ]);
    const response = responseOf(await collect(fromAiSdk(model).stream(request())));
    expect(response.message.content).toEqual([
      {
        type: "thinking",
        thinking: "",
        signature: "",
        providerMetadata: { anthropic: { redactedData: "opaque" } },
      },
      { type: "text", text: "Done." },
    ]);
    expect(response.stopReason).toBe("end_turn");
  });

  it("reads empty, malformed and non-object tool inputs as Lattice's adapters do (inputError)", async () => {
    const model = streamingModel([
      { type: "tool-call", toolCallId: "a", toolName: "noArgs", input: "" },
      { type: "tool-input-start", id: "b", toolName: "broken" },
      { type: "tool-input-delta", id: "b", delta: '{"path": "unterminated' },
      { type: "tool-input-end", id: "b" },
      { type: "tool-call", toolCallId: "b", toolName: "broken", input: '{"path": "unterminated' },
      { type: "tool-call", toolCallId: "c", toolName: "listy", input: "[1,2]" },
      finish("tool-calls"),
    ]);
    const content = responseOf(await collect(fromAiSdk(model).stream(request()))).message.content;
    expect(content[0]).toEqual({ type: "tool_use", id: "a", name: "noArgs", input: {} });
    expect(content[1]).toMatchObject({ type: "tool_use", id: "b", name: "broken", input: {} });
    expect((content[1] as { inputError?: string }).inputError).toMatch(
      /The input for tool "broken" is not valid JSON/,
    );
    expect((content[2] as { inputError?: string }).inputError).toMatch(
      /The input for tool "listy" must be a JSON object/,
    );
  });

  it("closes the blocks left open (no end part, no tool-call part) before usage and stop", async () => {
    const model = streamingModel([
      { type: "text-delta", id: "t", delta: "Calling." },
      { type: "tool-input-start", id: "a", toolName: "lookup" },
      { type: "tool-input-delta", id: "a", delta: '{"n":1}' },
      finish("tool-calls"),
    ]);
    const events = await collect(fromAiSdk(model).stream(request()));
    expect(events.map((event) => event.type).slice(-5)).toEqual([
      "block_stop",
      "block_stop",
      "usage",
      "stop",
      "response",
    ]);
    expect(responseOf(events).message.content).toEqual([
      { type: "text", text: "Calling." },
      { type: "tool_use", id: "a", name: "lookup", input: { n: 1 } },
    ]);
  });

  it("keeps provider-executed calls and results as opaque blocks and sends them back unchanged", async () => {
    const model = streamingModel(
      [
        { type: "tool-input-start", id: "ws", toolName: "web_search", providerExecuted: true },
        { type: "tool-input-delta", id: "ws", delta: '{"query":"lattice"}' },
        {
          type: "tool-call",
          toolCallId: "ws",
          toolName: "web_search",
          input: '{"query":"lattice"}',
          providerExecuted: true,
          providerMetadata: { anthropic: { serverToolName: "web_search" } },
        },
        { type: "tool-result", toolCallId: "ws", toolName: "web_search", result: { hits: 3 } },
        { type: "source", sourceType: "url", id: "s1", url: "https://example.com" },
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "Found it." },
        { type: "text-end", id: "t" },
        finish("stop"),
      ],
      [{ type: "text-delta", id: "t", delta: "ok" }, finish("stop")],
    );
    const provider = fromAiSdk(model);
    const events = await collect(provider.stream(request()));
    expect(events.filter((event) => event.type === "block_start")).toEqual([
      { type: "block_start", index: 0, block: { type: "opaque", blockType: "tool-call" } },
      { type: "block_start", index: 1, block: { type: "opaque", blockType: "tool-result" } },
      { type: "block_start", index: 2, block: { type: "text" } },
    ]);
    const response = responseOf(events);
    const call = {
      type: "tool-call",
      toolCallId: "ws",
      toolName: "web_search",
      input: { query: "lattice" },
      providerExecuted: true,
      providerOptions: { anthropic: { serverToolName: "web_search" } },
    };
    const result = {
      type: "tool-result",
      toolCallId: "ws",
      toolName: "web_search",
      output: { type: "json", value: { hits: 3 } },
    };
    expect(response.message.content).toEqual([
      { type: "opaque", provider: "ai-sdk", block: call },
      { type: "opaque", provider: "ai-sdk", block: result },
      { type: "text", text: "Found it." },
    ]);
    // Not Lattice's to run: the reply ends the turn.
    expect(response.stopReason).toBe("end_turn");
    await collect(
      provider.stream(
        request({
          messages: [
            { role: "user", content: "Search" },
            response.message,
            { role: "user", content: "Thanks" },
          ],
        }),
      ),
    );
    expect(model.doStreamCalls[1]!.prompt[1]).toEqual({
      role: "assistant",
      content: [call, result, { type: "text", text: "Found it." }],
    });
  });

  it("leaves other adapters' opaque blocks and redacted thinking out of the prompt", async () => {
    const model = streamingModel([{ type: "text-delta", id: "t", delta: "ok" }, finish("stop")]);
    await collect(
      fromAiSdk(model).stream(
        request({
          messages: [
            { role: "user", content: "Hi" },
            {
              role: "assistant",
              content: [
                { type: "redacted_thinking", data: "xyz" },
                {
                  type: "opaque",
                  provider: "anthropic",
                  block: { type: "server_tool_use", id: "s", name: "web_search", input: {} },
                },
                { type: "text", text: "Hello" },
              ],
            },
            { role: "user", content: "Again" },
          ],
        }),
      ),
    );
    expect(model.doStreamCalls[0]!.prompt[1]).toEqual({
      role: "assistant",
      content: [{ type: "text", text: "Hello" }],
    });
  });

  it("keeps a tool call's provider metadata (Gemini thought signatures) and sends it back", async () => {
    const model = streamingModel(
      [
        {
          type: "tool-call",
          toolCallId: "g1",
          toolName: "lookup",
          input: "{}",
          providerMetadata: { google: { thoughtSignature: "ts-1" } },
        },
        finish("tool-calls"),
      ],
      [
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: "ok" },
        finish("stop"),
      ],
    );
    const provider = fromAiSdk(model);
    const first = responseOf(await collect(provider.stream(request())));
    await collect(
      provider.stream(
        request({
          messages: [
            { role: "user", content: "Hi" },
            first.message,
            { role: "user", content: [{ type: "tool_result", tool_use_id: "g1", content: "42" }] },
          ],
        }),
      ),
    );
    const prompt = model.doStreamCalls[1]!.prompt;
    expect(prompt[1]).toEqual({
      role: "assistant",
      content: [
        {
          type: "tool-call",
          toolCallId: "g1",
          toolName: "lookup",
          input: {},
          providerOptions: { google: { thoughtSignature: "ts-1" } },
        },
      ],
    });
    expect(prompt[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "g1",
          toolName: "lookup",
          output: { type: "text", value: "42" },
        },
      ],
    });
  });

  it("maps finish reasons to Lattice stop reasons", async () => {
    const cases: Array<[LanguageModelV3StreamPart, string]> = [
      [finish("stop", "end_turn"), "end_turn"],
      [finish("stop", "stop_sequence"), "stop_sequence"],
      [finish("length", "max_tokens"), "max_tokens"],
      [finish("content-filter", "refusal"), "refusal"],
      [finish("other", "pause_turn"), "pause_turn"],
      [finish("stop", "pause_turn"), "pause_turn"],
      [finish("other", "weird"), "other"],
      [finish("error"), "other"],
    ];
    for (const [part, expected] of cases) {
      const model = streamingModel([{ type: "text-delta", id: "t", delta: "x" }, part]);
      const response = responseOf(await collect(fromAiSdk(model).stream(request())));
      expect(response.stopReason, JSON.stringify(part)).toBe(expected);
    }
  });

  it("computes input tokens without the cache when the provider leaves noCache out", async () => {
    const model = streamingModel([
      { type: "text-delta", id: "t", delta: "x" },
      finish("stop", undefined, {
        inputTokens: { total: 120, noCache: undefined, cacheRead: 100, cacheWrite: undefined },
        outputTokens: { total: 3, text: 3, reasoning: undefined },
      }),
    ]);
    const response = responseOf(await collect(fromAiSdk(model).stream(request())));
    expect(response.usage).toEqual({ inputTokens: 20, outputTokens: 3, cacheReadInputTokens: 100 });
  });

  it("fails with provider_stream_truncated when the stream ends without a finish part", async () => {
    const model = streamingModel([{ type: "text-delta", id: "t", delta: "partial" }]);
    const error = await failure(fromAiSdk(model, { maxRetries: 0 }).stream(request()));
    expect(error.name).toBe("ProviderError");
    expect(error.code).toBe("provider_stream_truncated");
    expect(error.message).toContain('AI SDK model "mock-model" (mock.chat)');
  });

  it("turns an error part into a ProviderError, and retries it while nothing was yielded", async () => {
    const model = streamingModel(
      [{ type: "error", error: { type: "overloaded_error", message: "Overloaded" } }],
      [{ type: "text-delta", id: "t", delta: "ok" }, finish("stop")],
    );
    const events = await collect(fromAiSdk(model).stream(request()));
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1 });
    expect((events[0] as { message: string }).message).toMatch(/overloaded_error: Overloaded/);
    expect(responseOf(events)).toMatchObject({ retries: 1, stopReason: "end_turn" });

    const midStream = streamingModel([
      { type: "text-delta", id: "t", delta: "Hello" },
      { type: "error", error: { error: { type: "invalid_request_error", message: "bad" } } },
    ]);
    const error = await failure(fromAiSdk(midStream).stream(request()));
    expect(error.code).toBe("provider_stream_error");
    expect(error.retryable).toBe(false);
    expect(midStream.doStreamCalls).toHaveLength(1);
  });
});

describe("fromAiSdk: arguments", () => {
  it("refuses what is not a V2 or V3 language model, and unknown or bad options", () => {
    expect(() => fromAiSdk("openai/gpt-4o" as never)).toThrow(
      /Model id strings .* are not supported/,
    );
    expect(() =>
      fromAiSdk({ specificationVersion: "v1", doStream() {}, doGenerate() {} } as never),
    ).toThrow(/specification "v1"/);
    expect(() => fromAiSdk({} as never)).toThrow(/must be an AI SDK language model/);
    const model = streamingModel([]);
    expect(() => fromAiSdk(model, { retries: 3 } as never)).toThrow(/unknown option "retries"/);
    expect(() => fromAiSdk(model, { maxRetries: -1 })).toThrow(/maxRetries/);
    expect(() => fromAiSdk(model, { timeoutMs: 0 })).toThrow(/timeoutMs/);
    const provider = fromAiSdk(model);
    expect(provider).toMatchObject({
      specificationVersion: "v1",
      name: "ai-sdk",
      baseURL: "ai-sdk:mock.chat",
    });
  });
});
