import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { createAgent, type TraceEvent } from "@lattice/core";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "./index.js";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 2, text: 2, reasoning: undefined },
};

/** The `model_request_finished` trace event of a one-turn run on `model`. */
async function finishedOf(model: MockLanguageModelV3, stream: boolean) {
  const events: TraceEvent[] = [];
  const agent = createAgent({
    provider: fromAiSdk(model),
    model: "mock-model",
    stream,
    onTrace: (event) => void events.push(event),
  });
  expect((await agent.run("hi")).subtype).toBe("success");
  return events.find((event) => event.type === "model_request_finished");
}

describe("fromAiSdk: the reply's id and model reach the trace (O3a)", () => {
  it("O3a: a stream's response-metadata id and modelId are the trace event's responseId and responseModel", async () => {
    const model = new MockLanguageModelV3({
      provider: "mock.chat",
      modelId: "mock-model",
      doStream: {
        stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
          { type: "stream-start", warnings: [] },
          {
            type: "response-metadata",
            id: "chatcmpl-ai-sdk-1",
            modelId: "mock-model-2026-01-01",
            timestamp: new Date(0),
          },
          { type: "text-start", id: "0" },
          { type: "text-delta", id: "0", delta: "Hello." },
          { type: "text-end", id: "0" },
          { type: "finish", finishReason: { unified: "stop", raw: "stop" }, usage },
        ]),
        response: { headers: { "x-request-id": "req_ai_sdk_1" } },
      },
    });
    expect(await finishedOf(model, true)).toMatchObject({
      responseId: "chatcmpl-ai-sdk-1",
      responseModel: "mock-model-2026-01-01",
      requestId: "req_ai_sdk_1",
    });
  });

  it("O3a: doGenerate's response.id and response.modelId are the trace event's responseId and responseModel", async () => {
    const model = new MockLanguageModelV3({
      provider: "mock.chat",
      modelId: "mock-model",
      doGenerate: {
        content: [{ type: "text", text: "Hello." }],
        finishReason: { unified: "stop", raw: "stop" },
        usage,
        response: { id: "msg_ai_sdk_1", modelId: "mock-model-2026-02-02" },
        warnings: [],
      },
    });
    expect(await finishedOf(model, false)).toMatchObject({
      responseId: "msg_ai_sdk_1",
      responseModel: "mock-model-2026-02-02",
    });
  });
});
