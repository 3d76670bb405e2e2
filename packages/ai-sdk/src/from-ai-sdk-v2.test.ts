import type {
  LanguageModelV2,
  LanguageModelV2CallOptions,
  LanguageModelV2StreamPart,
} from "@ai-sdk/provider";
import type { ModelRequest, ModelStreamEvent } from "@lattice/providers";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "./index.js";

/** A minimal AI SDK 5 (V2) model, written by hand: ai 6 ships no V2 mock. */
function v2Model(parts: LanguageModelV2StreamPart[]) {
  const calls: LanguageModelV2CallOptions[] = [];
  const model: LanguageModelV2 = {
    specificationVersion: "v2",
    provider: "legacy.chat",
    modelId: "legacy-1",
    supportedUrls: {},
    async doGenerate(options) {
      calls.push(options);
      return {
        content: [
          { type: "text", text: "Hello" },
          { type: "tool-call", toolCallId: "c", toolName: "lookup", input: '{"q":"v2"}' },
        ],
        finishReason: "tool-calls",
        usage: { inputTokens: 50, outputTokens: 7, totalTokens: 57, cachedInputTokens: 40 },
        warnings: [],
      };
    },
    async doStream(options) {
      calls.push(options);
      return {
        stream: new ReadableStream<LanguageModelV2StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part);
            controller.close();
          },
        }),
      };
    },
  };
  return { model, calls };
}

const request = (extra: Partial<ModelRequest> = {}): ModelRequest => ({
  model: "legacy-1",
  maxTokens: 64,
  messages: [{ role: "user", content: "Hi" }],
  ...extra,
});

async function collect(events: AsyncIterable<ModelStreamEvent>): Promise<ModelStreamEvent[]> {
  const out: ModelStreamEvent[] = [];
  for await (const event of events) out.push(event);
  return out;
}

describe("fromAiSdk: a V2 model (AI SDK 5 provider packages)", () => {
  it("streams with V2 finish reasons and usage (inputTokens counts the cached tokens)", async () => {
    const { model } = v2Model([
      { type: "stream-start", warnings: [] },
      { type: "text-start", id: "0" },
      { type: "text-delta", id: "0", delta: "Hi there" },
      { type: "text-end", id: "0" },
      { type: "tool-input-start", id: "c1", toolName: "lookup" },
      { type: "tool-input-delta", id: "c1", delta: '{"q":"a"}' },
      { type: "tool-input-end", id: "c1" },
      { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: '{"q":"a"}' },
      {
        type: "finish",
        finishReason: "tool-calls",
        usage: { inputTokens: 120, outputTokens: 9, totalTokens: 129, cachedInputTokens: 100 },
      },
    ]);
    const events = await collect(fromAiSdk(model).stream(request()));
    const last = events.at(-1);
    expect(last?.type).toBe("response");
    if (last?.type !== "response") return;
    expect(last.response).toMatchObject({
      model: "legacy-1",
      stopReason: "tool_use",
      usage: { inputTokens: 20, outputTokens: 9, cacheReadInputTokens: 100 },
      message: {
        content: [
          { type: "text", text: "Hi there" },
          { type: "tool_use", id: "c1", name: "lookup", input: { q: "a" } },
        ],
      },
    });
    expect(last.response.rawStopReason).toBeUndefined();
  });

  it("maps the V2 finish reason unknown to other", async () => {
    const { model } = v2Model([
      { type: "text-delta", id: "0", delta: "x" },
      {
        type: "finish",
        finishReason: "unknown",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    ]);
    const events = await collect(fromAiSdk(model).stream(request()));
    expect(events.find((event) => event.type === "stop")).toEqual({
      type: "stop",
      stopReason: "other",
    });
  });

  it("sends tool results with images as V2 media parts, and no strict flag on tools", async () => {
    const { model, calls } = v2Model([
      { type: "text-delta", id: "0", delta: "ok" },
      {
        type: "finish",
        finishReason: "stop",
        usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 },
      },
    ]);
    await collect(
      fromAiSdk(model).stream(
        request({
          tools: [
            {
              name: "shot",
              description: "Screenshot.",
              inputSchema: { type: "object" },
              strict: true,
            },
          ] as unknown as ModelRequest["tools"],
          messages: [
            { role: "user", content: "Shot?" },
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "s", name: "shot", input: {} }],
            },
            {
              role: "user",
              content: [
                {
                  type: "tool_result",
                  tool_use_id: "s",
                  content: [
                    {
                      type: "image",
                      source: { type: "base64", media_type: "image/png", data: "AAAA" },
                    },
                    { type: "image", source: { type: "url", url: "https://example.com/x.png" } },
                  ],
                },
              ],
            },
          ],
        }),
      ),
    );
    expect(calls[0]!.tools).toEqual([
      {
        type: "function",
        name: "shot",
        description: "Screenshot.",
        inputSchema: { type: "object" },
      },
    ]);
    expect(calls[0]!.prompt[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "s",
          toolName: "shot",
          output: {
            type: "content",
            value: [
              { type: "media", data: "AAAA", mediaType: "image/png" },
              { type: "text", text: "[image: https://example.com/x.png]" },
            ],
          },
        },
      ],
    });
  });

  it("calls doGenerate for a non-streaming request", async () => {
    const { model } = v2Model([]);
    const events = await collect(fromAiSdk(model).stream(request({ stream: false })));
    expect(events.map((event) => event.type)).toEqual(["usage", "stop", "response"]);
    const last = events.at(-1);
    if (last?.type !== "response") throw new Error("no response");
    expect(last.response.usage).toEqual({
      inputTokens: 10,
      outputTokens: 7,
      cacheReadInputTokens: 40,
    });
    expect(last.response.message.content).toEqual([
      { type: "text", text: "Hello" },
      { type: "tool_use", id: "c", name: "lookup", input: { q: "v2" } },
    ]);
  });
});
