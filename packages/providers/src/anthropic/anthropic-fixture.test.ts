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
import { anthropic } from "./anthropic.js";

const FIXTURE = readFileSync(
  new URL("../../fixtures/anthropic-tool-use-stream.sse", import.meta.url),
);
const REQUEST = {
  model: "claude-sonnet-4-5",
  maxTokens: 1024,
  messages: [{ role: "user" as const, content: "Weather in SF?" }],
};

async function run(
  chunks: readonly Uint8Array[],
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const provider = anthropic({
    apiKey: "sk-ant-fixture",
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
    { type: "text", text: "Okay, let's check the weather for San Francisco, CA:" },
    {
      type: "tool_use",
      id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6",
      name: "get_weather",
      input: { location: "San Francisco, CA", unit: "fahrenheit" },
    },
  ]);
  expect(response.stopReason).toBe("tool_use");
  expect(response.usage).toEqual({ inputTokens: 472, outputTokens: 89 });
  expect(response.id).toBe("msg_014p7gG3wDgGV9EUtLvnow3U");
  expect(response.model).toBe("claude-sonnet-4-5-20250929");
}

describe("anthropic(): recorded stream fixture", () => {
  it("parses the whole recorded stream to the expected message and events", async () => {
    const { events, response } = await run([FIXTURE]);
    expectFixtureMessage(response);
    const types = events.map((event) => event.type);
    expect(types[0]).toBe("message_start");
    expect(types.at(-1)).toBe("response");
    expect(events.filter((event) => event.type === "tool_input_delta")).toHaveLength(8);
    expect(events).toContainEqual({
      type: "block_start",
      index: 1,
      block: { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "get_weather" },
    });
    expect(events).toContainEqual({ type: "stop", stopReason: "tool_use" });
  });

  it("parses the same message when cut in two at every byte boundary", async () => {
    for (let cut = 1; cut < FIXTURE.length; cut++) {
      const { response } = await run([FIXTURE.subarray(0, cut), FIXTURE.subarray(cut)]);
      expectFixtureMessage(response);
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
    for (let end = 0; end < FIXTURE.length; end++) {
      const provider = anthropic({
        apiKey: "sk-ant-fixture",
        fetch: fetchChunks([FIXTURE.subarray(0, end)]),
        maxRetries: 0,
      });
      const { events, failure } = await drain(provider, REQUEST);
      expect(failure, `truncated at byte ${end}`).toBeInstanceOf(ProviderError);
      expect((failure as ProviderError).code).toBe("provider_stream_truncated");
      expect(events.some((event) => event.type === "response")).toBe(false);
    }
  });

  it("parses the recorded stream served over real HTTP on 127.0.0.1", async () => {
    await serveOnce(FIXTURE, { "request-id": "req_fixture" }, async (origin) => {
      const provider = anthropic({ apiKey: "sk-ant-fixture", baseURL: `${origin}` });
      let response: ModelResponse | undefined;
      for await (const event of provider.stream(REQUEST))
        if (event.type === "response") response = event.response;
      expectFixtureMessage(response!);
      expect(response!.requestId).toBe("req_fixture");
    });
  });
});
