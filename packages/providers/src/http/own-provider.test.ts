// The README's "Write your own provider" walkthrough: its code is readme-example/acme.ts and
// readme-example/main.ts verbatim, and acme() keeps the provider contract against the scripted
// model server, with no agent involved.
import { readFileSync } from "node:fs";
import { ProviderError as ProviderErrorFromRoot } from "@lattice/providers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ModelMessage } from "../content-blocks.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { ProviderError } from "./index.js";
import { acme } from "./readme-example/acme.js";

const KEY = "sk-acme-test-0123456789";
const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");
const weather = {
  name: "get_weather",
  description: "The weather in a city",
  inputSchema: {
    type: "object",
    properties: { city: { type: "string" } },
    required: ["city"],
  },
};

/** The fenced code blocks of the README section that starts with `heading`. */
function codeBlocks(heading: string): string[] {
  const start = readme.indexOf(heading);
  const end = readme.indexOf("\n## ", start + heading.length);
  const section = readme.slice(start, end === -1 ? undefined : end);
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
}

async function collect(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("the last event is not a response");
  return { events, response: last.response };
}

async function failure(iterable: AsyncIterable<ModelStreamEvent>): Promise<unknown> {
  try {
    for await (const _ of iterable) {
      // drain
    }
  } catch (error) {
    return error;
  }
  throw new Error("the call did not fail");
}

describe("README: write your own provider", () => {
  it("shows readme-example/acme.ts and readme-example/main.ts verbatim", () => {
    expect(readme).toContain("## Write your own provider");
    const blocks = codeBlocks("## Write your own provider");
    const read = (name: string) =>
      readFileSync(new URL(`./readme-example/${name}`, import.meta.url), "utf8");
    expect(blocks).toEqual([read("acme.ts"), read("main.ts")]);
  });

  it("runs main.ts: a tool call answered with a tool_result, then streamed text", async () => {
    const lines: string[] = [];
    const log = vi.spyOn(console, "log").mockImplementation((...parts: unknown[]) => {
      lines.push(parts.map(String).join(" "));
    });
    try {
      await import("./readme-example/main.js");
    } finally {
      log.mockRestore();
    }
    expect(lines[0]).toMatch(/^stop: tool_use usage: \d+ \d+$/);
    expect(lines.slice(1)).toEqual([
      'call: get_weather {"city":"Paris"}',
      "text: Sunny in Paris.",
      expect.stringMatching(/^stop: end_turn usage: 42 \d+$/),
    ]);
  });
});

describe("acme(): a provider built on @lattice/providers/http", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await server.close();
  });

  it("streams text deltas at their content positions, then usage, stop and the response", async () => {
    server.enqueue({
      content: [{ type: "text", text: "Hello from Acme" }],
      chunkSize: 4,
      usage: { inputTokens: 12, outputTokens: 5 },
      model: "acme-large",
    });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    expect(provider.specificationVersion).toBe("v1");
    const { events, response } = await collect(
      provider.stream({
        model: "acme-1",
        maxTokens: 64,
        system: "Be brief.",
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(events.map((event) => event.type)).toEqual([
      "message_start",
      "block_start",
      "text_delta",
      "text_delta",
      "text_delta",
      "text_delta",
      "block_stop",
      "usage",
      "stop",
      "response",
    ]);
    const deltas = events.filter((event) => event.type === "text_delta");
    expect(deltas.map((event) => event.text).join("")).toBe("Hello from Acme");
    expect(deltas.every((event) => event.index === 0)).toBe(true);
    expect(response).toMatchObject({
      model: "acme-large",
      message: { role: "assistant", content: [{ type: "text", text: "Hello from Acme" }] },
      stopReason: "end_turn",
      rawStopReason: "end_turn",
      usage: { inputTokens: 12, outputTokens: 5 },
      retries: 0,
    });
    expect(response.id).toMatch(/./);
    expect(response.requestId).toMatch(/./);
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    expect(server.requests[0]!.body).toMatchObject({
      model: "acme-1",
      max_tokens: 64,
      system: "Be brief.",
      stream: true,
    });
  });

  it("assembles a tool call from input deltas and sends its result back without inputError", async () => {
    server.enqueue(
      {
        content: [
          { type: "text", text: "Looking." },
          { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
        ],
        chunkSize: 5,
      },
      { content: [{ type: "text", text: "Sunny." }] },
    );
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const messages: ModelMessage[] = [{ role: "user", content: "Weather in Paris?" }];
    const first = await collect(
      provider.stream({ model: "acme-1", maxTokens: 64, messages, tools: [weather] }),
    );
    expect(first.events).toContainEqual({
      type: "block_start",
      index: 1,
      block: { type: "tool_use", id: "toolu_1", name: "get_weather" },
    });
    const json = first.events
      .filter((event) => event.type === "tool_input_delta")
      .map((event) => (event.index === 1 ? event.partialJson : "?"))
      .join("");
    expect(JSON.parse(json)).toEqual({ city: "Paris" });
    expect(first.response.stopReason).toBe("tool_use");
    expect(first.response.message.content).toEqual([
      { type: "text", text: "Looking." },
      { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } },
    ]);
    expect(server.requests[0]!.body).toMatchObject({
      tools: [
        {
          name: "get_weather",
          description: weather.description,
          input_schema: weather.inputSchema,
        },
      ],
    });
    // A history whose tool_use carries an inputError: the server refuses unknown block keys.
    messages.push(
      {
        role: "assistant",
        content: [
          ...first.response.message.content,
          { type: "tool_use", id: "toolu_2", name: "get_weather", input: {}, inputError: "bad" },
        ],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_1", content: "sunny" },
          { type: "tool_result", tool_use_id: "toolu_2", content: "bad input", is_error: true },
        ],
      },
    );
    const second = await collect(
      provider.stream({ model: "acme-1", maxTokens: 64, messages, tools: [weather] }),
    );
    expect(second.response.message.content).toEqual([{ type: "text", text: "Sunny." }]);
    expect(JSON.stringify(server.requests[1]!.body)).not.toContain("inputError");
  });

  it("makes one non-streaming request with stream: false and yields usage, stop and response", async () => {
    server.enqueue({
      content: [{ type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" } }],
      usage: { inputTokens: 7, outputTokens: 3 },
    });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const { events, response } = await collect(
      provider.stream({
        model: "acme-1",
        maxTokens: 64,
        messages: [{ role: "user", content: "Weather in Oslo?" }],
        tools: [weather],
        stream: false,
      }),
    );
    expect(events.map((event) => event.type)).toEqual(["usage", "stop", "response"]);
    expect(server.requests[0]!.stream).toBe(false);
    expect(response).toMatchObject({
      message: {
        content: [
          { type: "tool_use", id: "toolu_9", name: "get_weather", input: { city: "Oslo" } },
        ],
      },
      stopReason: "tool_use",
      usage: { inputTokens: 7, outputTokens: 3 },
    });
  });

  it("turns tool input JSON that does not parse into input {} with an inputError", async () => {
    server.enqueue({ fault: "malformed_json", name: "get_weather", id: "toolu_bad" });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const { response } = await collect(
      provider.stream({
        model: "acme-1",
        maxTokens: 64,
        messages: [{ role: "user", content: "Weather?" }],
        tools: [weather],
      }),
    );
    const call = response.message.content.find((block) => block.type === "tool_use");
    expect(call).toMatchObject({ id: "toolu_bad", name: "get_weather", input: {} });
    expect(call).toHaveProperty("inputError", expect.stringContaining('tool "get_weather"'));
  });

  it("retries a 429 after a retry event, honouring retry-after-ms", async () => {
    server.enqueue(
      { status: 429, headers: { "retry-after-ms": "20" } },
      { content: [{ type: "text", text: "ok" }] },
    );
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const { events, response } = await collect(
      provider.stream({
        model: "acme-1",
        maxTokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(events[0]).toMatchObject({ type: "retry", attempt: 1, delayMs: 20, status: 429 });
    expect(response.retries).toBe(1);
    expect(server.requests).toHaveLength(2);
  });

  it("aborts the HTTP request at once when request.signal aborts mid-stream", async () => {
    server.enqueue({
      content: [{ type: "text", text: "a long, slow answer that never gets to its end" }],
      chunkSize: 1,
      chunkDelayMs: 400,
    });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const controller = new AbortController();
    const seen: string[] = [];
    let abortedAt = 0;
    let caught: unknown;
    try {
      for await (const event of provider.stream({
        model: "acme-1",
        maxTokens: 64,
        messages: [{ role: "user", content: "Hi" }],
        signal: controller.signal,
      })) {
        seen.push(event.type);
        if (event.type === "text_delta") {
          abortedAt = Date.now();
          controller.abort();
        }
      }
    } catch (error) {
      caught = error;
    }
    expect(caught).toMatchObject({ name: "AbortError" });
    expect(seen.filter((type) => type === "text_delta")).toHaveLength(1);
    expect(seen).not.toContain("response");
    // The rest of the reply would take about 20 s; the abort ends the call without waiting for
    // the next event (400 ms away).
    expect(Date.now() - abortedAt).toBeLessThan(300);
  });

  it("fails a 401 with a ProviderError naming where the key is set, never the key", async () => {
    const wrong = "sk-acme-wrong-9876543210";
    const provider = acme({ apiKey: wrong, baseURL: server.anthropicBaseURL, maxRetries: 0 });
    const error = await failure(
      provider.stream({
        model: "acme-1",
        maxTokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect(error).toBeInstanceOf(ProviderErrorFromRoot);
    expect(error).toMatchObject({ code: "provider_authentication", status: 401, retryable: false });
    expect((error as Error).message).toContain("the apiKey option of acme()");
    expect((error as Error).message).toContain("Acme API at ");
    expect(JSON.stringify(error)).not.toContain(wrong);
    expect((error as Error).message).not.toContain(wrong);
  });

  it("ends a stream with an event its decoder cannot read as provider_malformed_response", async () => {
    server.enqueue({ fault: "malformed_event", afterEvents: 0 });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL, maxRetries: 0 });
    const error = await failure(
      provider.stream({
        model: "acme-1",
        maxTokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(error).toMatchObject({ code: "provider_malformed_response", retryable: true });
    expect((error as Error).message).toContain("decoder could not read (SyntaxError");
  });

  it("ends a stream with an error event as the decoder's provider_stream_error", async () => {
    server.enqueue({
      fault: "error_event",
      errorType: "invalid_request_error",
      message: "prompt is too long",
    });
    const provider = acme({ apiKey: KEY, baseURL: server.anthropicBaseURL, maxRetries: 0 });
    const error = await failure(
      provider.stream({
        model: "acme-1",
        maxTokens: 8,
        messages: [{ role: "user", content: "Hi" }],
      }),
    );
    expect(error).toMatchObject({
      code: "provider_stream_error",
      type: "invalid_request_error",
      retryable: false,
    });
    expect((error as Error).message).toContain("prompt is too long");
  });
});
