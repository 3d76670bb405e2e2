import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import {
  bytewise,
  drain,
  fetchChunks,
  serveOnce,
  splitAt,
} from "../transport/recorded-stream.test-helpers.js";
import { openaiCompatible } from "./openai-compatible.js";

const FIXTURE = readFileSync(
  new URL("../../fixtures/openai-tool-call-stream.sse", import.meta.url),
);
const REQUEST = {
  model: "gpt-4.1",
  maxTokens: 1024,
  messages: [{ role: "user" as const, content: "Weather in Paris?" }],
};

async function run(
  chunks: readonly Uint8Array[],
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const provider = openaiCompatible({
    apiKey: "sk-fixture",
    fetch: fetchChunks(chunks),
    maxRetries: 0,
  });
  const events: ModelStreamEvent[] = [];
  for await (const event of provider.stream(REQUEST)) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("no response event");
  return { events, response: last.response };
}

function expectFixtureMessage(response: ModelResponse): void {
  expect(response.message.content).toEqual([
    {
      type: "tool_use",
      id: "call_SWduKE0DLAgLShfQqkQzwqq2",
      name: "get_weather",
      input: { location: "Paris" },
    },
  ]);
  expect(response.stopReason).toBe("tool_use");
  expect(response.rawStopReason).toBe("tool_calls");
  expect(response.usage).toEqual({ inputTokens: 53, outputTokens: 14 });
  expect(response.usage.inputTokens + response.usage.outputTokens).toBe(67);
  expect(response.id).toBe("chatcmpl-Bh6ikAZkQqJaGnddPnWSJmmZkZzT6");
  expect(response.model).toBe("gpt-4.1-2025-04-14");
}

describe("openaiCompatible(): recorded stream fixture", () => {
  it("parses the whole recorded stream to the expected message and events", async () => {
    const { events, response } = await run([FIXTURE]);
    expectFixtureMessage(response);
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "block_start",
      "tool_input_delta",
      "tool_input_delta",
      "tool_input_delta",
      "tool_input_delta",
      "tool_input_delta",
      "block_stop",
      "stop",
      "usage",
      "response",
    ]);
  });

  it("parses the same message when cut in two at every byte boundary", async () => {
    for (let cut = 1; cut < FIXTURE.length; cut++) {
      expectFixtureMessage((await run([FIXTURE.subarray(0, cut), FIXTURE.subarray(cut)])).response);
    }
  });

  it("parses the same message when delivered one byte at a time", async () => {
    expectFixtureMessage((await run(bytewise(FIXTURE))).response);
  });

  it("parses the same message under random multi-way splits (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 1, max: FIXTURE.length - 1 }), { maxLength: 40 }),
        async (cuts) => expectFixtureMessage((await run(splitAt(FIXTURE, cuts))).response),
      ),
      { numRuns: 200 },
    );
  });

  it("never yields a corrupt tool call when the stream is truncated at any byte", async () => {
    // The message is complete once the finish_reason chunk has arrived; only the usage chunk
    // and [DONE] may be missing after that (some servers omit them).
    const finishEnd = FIXTURE.indexOf('"finish_reason":"tool_calls"');
    const complete = FIXTURE.indexOf("\n\n", finishEnd) + 2;
    for (let end = 0; end < FIXTURE.length; end++) {
      const provider = openaiCompatible({
        apiKey: "sk-fixture",
        fetch: fetchChunks([FIXTURE.subarray(0, end)]),
        maxRetries: 0,
      });
      const { events, failure } = await drain(provider, REQUEST);
      const last = events.at(-1);
      if (end < complete) {
        expect(failure, `truncated at byte ${end}`).toBeInstanceOf(ProviderError);
        expect((failure as ProviderError).code).toBe("provider_stream_truncated");
        expect(last?.type).not.toBe("response");
      } else {
        expect(failure).toBeUndefined();
        expect(last?.type).toBe("response");
        if (last?.type === "response") {
          expect(last.response.message.content).toEqual([
            {
              type: "tool_use",
              id: "call_SWduKE0DLAgLShfQqkQzwqq2",
              name: "get_weather",
              input: { location: "Paris" },
            },
          ]);
        }
      }
    }
  });

  it("parses the recorded stream served over real HTTP on 127.0.0.1", async () => {
    await serveOnce(FIXTURE, { "x-request-id": "req_fixture" }, async (origin) => {
      const provider = openaiCompatible({
        apiKey: "sk-fixture",
        baseURL: `${origin}/v1`,
      });
      let response: ModelResponse | undefined;
      for await (const event of provider.stream(REQUEST))
        if (event.type === "response") response = event.response;
      expectFixtureMessage(response!);
      expect(response!.requestId).toBe("req_fixture");
    });
  });
});
