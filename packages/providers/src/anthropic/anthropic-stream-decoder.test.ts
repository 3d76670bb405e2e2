import { describe, expect, it } from "vitest";
import { ProviderError } from "../provider-error.js";
import { AnthropicStreamDecoder } from "./anthropic-stream-decoder.js";

const CONTEXT = {
  label: "Anthropic API",
  endpoint: "http://127.0.0.1:1/v1/messages",
  secrets: ["sk-ant-secret-123"],
  keyHint: "the apiKey option",
};

function feed(decoder: AnthropicStreamDecoder, events: unknown[]): void {
  for (const data of events)
    decoder.handle({ event: (data as { type: string }).type, data: JSON.stringify(data) });
}

describe("AnthropicStreamDecoder", () => {
  it("ignores ping and unknown event types, keeps unknown block types as opaque blocks, indices dense", () => {
    const decoder = new AnthropicStreamDecoder(CONTEXT);
    feed(decoder, [
      {
        type: "message_start",
        message: {
          id: "m1",
          model: "x",
          usage: { input_tokens: 5, output_tokens: 1, cache_read_input_tokens: 3 },
        },
      },
      { type: "ping" },
      { type: "some_future_event", payload: 1 },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "server_tool_use", id: "s", name: "web_search", input: {} },
      },
      {
        type: "content_block_delta",
        index: 0,
        delta: { type: "input_json_delta", partial_json: "{}" },
      },
      { type: "content_block_stop", index: 0 },
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "redacted_thinking", data: "opaque" },
      },
      { type: "content_block_stop", index: 1 },
      { type: "content_block_start", index: 2, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 2, delta: { type: "citations_delta", citation: {} } },
      { type: "content_block_delta", index: 2, delta: { type: "text_delta", text: "Hi" } },
      { type: "content_block_stop", index: 2 },
      { type: "message_delta", delta: { stop_reason: "refusal" }, usage: { output_tokens: 7 } },
      { type: "message_stop" },
    ]);
    const message = decoder.finish();
    expect(message.content).toEqual([
      {
        type: "opaque",
        provider: "anthropic",
        block: { type: "server_tool_use", id: "s", name: "web_search", input: {} },
      },
      { type: "redacted_thinking", data: "opaque" },
      { type: "text", text: "Hi" },
    ]);
    expect(message.stopReason).toBe("refusal");
    expect(message.usage).toEqual({ inputTokens: 5, outputTokens: 7, cacheReadInputTokens: 3 });
    expect(
      decoder.events
        .filter((event) => event.type === "block_start")
        .map((event) => (event.type === "block_start" ? event.index : -1)),
    ).toEqual([0, 1, 2]);
  });

  it("takes a tool input given whole in content_block_start when no deltas follow", () => {
    const decoder = new AnthropicStreamDecoder(CONTEXT);
    feed(decoder, [
      { type: "message_start", message: { id: "m", model: "x", usage: { input_tokens: 1 } } },
      {
        type: "content_block_start",
        index: 0,
        content_block: { type: "tool_use", id: "t", name: "calc", input: { a: 1 } },
      },
      { type: "content_block_stop", index: 0 },
      { type: "message_delta", delta: { stop_reason: "tool_use" }, usage: { output_tokens: 2 } },
      { type: "message_stop" },
    ]);
    expect(decoder.finish().content).toEqual([
      { type: "tool_use", id: "t", name: "calc", input: { a: 1 } },
    ]);
  });

  it("turns an error event into a ProviderError with the API's type, and redacts the key", () => {
    const decoder = new AnthropicStreamDecoder(CONTEXT);
    let error: unknown;
    try {
      feed(decoder, [
        { type: "error", error: { type: "api_error", message: "bad key sk-ant-secret-123" } },
      ]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).type).toBe("api_error");
    expect((error as ProviderError).retryable).toBe(true);
    expect((error as ProviderError).message).not.toContain("sk-ant-secret-123");
    expect((error as ProviderError).apiMessage).toBe("bad key [redacted]");
  });
  it("C7: decodes message_delta's context_management.applied_edits, and null as absent", () => {
    const start = { type: "message_start", message: { id: "m", model: "x", usage: {} } };
    const decoder = new AnthropicStreamDecoder(CONTEXT);
    feed(decoder, [
      start,
      {
        type: "message_delta",
        delta: { stop_reason: "model_context_window_exceeded" },
        usage: { output_tokens: 3 },
        context_management: {
          applied_edits: [
            {
              type: "clear_thinking_20251015",
              cleared_input_tokens: 50,
              cleared_thinking_turns: 2,
            },
            { type: "clear_tool_uses_20250919", cleared_input_tokens: 70, cleared_tool_uses: 1 },
            { cleared_input_tokens: 1 },
          ],
        },
      },
      { type: "message_stop" },
    ]);
    const message = decoder.finish();
    expect(message.contextEdits).toEqual([
      { type: "clear_thinking_20251015", clearedInputTokens: 50, clearedThinkingTurns: 2 },
      { type: "clear_tool_uses_20250919", clearedInputTokens: 70, clearedToolUses: 1 },
    ]);
    // The reply was cut by the window: max_tokens, with the raw reason kept.
    expect(message.stopReason).toBe("max_tokens");
    expect(message.rawStopReason).toBe("model_context_window_exceeded");
    const plain = new AnthropicStreamDecoder(CONTEXT);
    feed(plain, [
      start,
      { type: "message_delta", delta: { stop_reason: "end_turn" }, context_management: null },
      { type: "message_stop" },
    ]);
    expect(plain.finish().contextEdits).toBeUndefined();
  });
});
