import { UnknownOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ModelMessage } from "../content-blocks.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { anthropic } from "./anthropic.js";

const KEY = "sk-ant-test-0123456789";

async function collect(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("the last event is not a response");
  return { events, response: last.response };
}

function captureFetch(): {
  fetch: typeof fetch;
  calls: { url: string; headers: Record<string, string> }[];
} {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string> });
    return new Response(
      JSON.stringify({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
      { status: 200, headers: { "content-type": "application/json" } },
    );
  }) as unknown as typeof fetch;
  return { fetch: fetchImpl, calls };
}

describe("anthropic()", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer({ apiKey: KEY });
  });
  afterEach(async () => {
    await server.close();
    vi.unstubAllEnvs();
  });

  it("implements ModelProviderV1", () => {
    const provider = anthropic({ apiKey: KEY, baseURL: `${server.anthropicBaseURL}/` });
    expect(provider.specificationVersion).toBe("v1");
    expect(provider.name).toBe("anthropic");
    expect(provider.baseURL).toBe(server.anthropicBaseURL);
    expect(JSON.stringify(provider)).not.toContain(KEY);
  });

  it("streams text, thinking with signature and tool calls, and returns the assembled message", async () => {
    server.enqueue({
      content: [
        { type: "thinking", thinking: "The user wants weather.", signature: "sig-123" },
        { type: "text", text: "Let me check the weather." },
        {
          type: "tool_use",
          id: "toolu_a",
          name: "get_weather",
          input: { location: "Paris", days: [1, 2] },
        },
      ],
      chunkSize: 5,
      usage: { inputTokens: 40, outputTokens: 12 },
    });
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const { events, response } = await collect(
      provider.stream({
        model: "claude-sonnet-4-6",
        maxTokens: 100,
        messages: [{ role: "user", content: "Weather?" }],
      }),
    );
    expect(response.message.content).toEqual([
      { type: "thinking", thinking: "The user wants weather.", signature: "sig-123" },
      { type: "text", text: "Let me check the weather." },
      {
        type: "tool_use",
        id: "toolu_a",
        name: "get_weather",
        input: { location: "Paris", days: [1, 2] },
      },
    ]);
    expect(response).toMatchObject({
      stopReason: "tool_use",
      usage: { inputTokens: 40, outputTokens: 12 },
      model: "claude-sonnet-4-6",
      requestId: "req_scripted_1",
      retries: 0,
    });
    expect(response.latencyMs).toBeGreaterThanOrEqual(0);
    const text = events
      .filter((event) => event.type === "text_delta")
      .map((event) => (event.type === "text_delta" ? event.text : ""))
      .join("");
    expect(text).toBe("Let me check the weather.");
    expect(events).toContainEqual({ type: "signature_delta", index: 0, signature: "sig-123" });
    expect(
      events
        .filter((event) => event.type === "block_stop")
        .map((event) => (event.type === "block_stop" ? event.index : -1)),
    ).toEqual([0, 1, 2]);
    expect(events.at(-2)).toEqual({ type: "stop", stopReason: "tool_use" });
    const request = server.requests[0]!;
    expect(request.path).toBe("/v1/messages");
    expect(request.headers["anthropic-version"]).toBe("2023-06-01");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["x-api-key"]).toBe("[redacted]");
    expect(request.body).toMatchObject({
      model: "claude-sonnet-4-6",
      max_tokens: 100,
      stream: true,
    });
  });

  it("makes one non-streaming request with stream: false and yields usage, stop and response", async () => {
    server.enqueue({
      content: [
        { type: "text", text: "Hi" },
        { type: "tool_use", name: "t", input: { a: 1 } },
      ],
    });
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const { events, response } = await collect(
      provider.stream({
        model: "m",
        maxTokens: 10,
        stream: false,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(events.map((event) => event.type)).toEqual(["usage", "stop", "response"]);
    expect(response.message.content).toEqual([
      { type: "text", text: "Hi" },
      { type: "tool_use", id: "toolu_scripted_1_1", name: "t", input: { a: 1 } },
    ]);
    expect(server.requests[0]!.stream).toBe(false);
    expect(server.requests[0]!.body).not.toHaveProperty("stream");
  });

  it("passes thinking blocks back unchanged and never sends inputError on the next turn", async () => {
    server.enqueue(
      {
        content: [
          { type: "thinking", thinking: "plan", signature: "sig-x" },
          { type: "tool_use", id: "toolu_b", name: "t", inputJson: "{oops" },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const first = await collect(
      provider.stream({ model: "m", maxTokens: 10, messages: [{ role: "user", content: "go" }] }),
    );
    const toolUse = first.response.message.content[1];
    expect(toolUse).toMatchObject({ type: "tool_use", input: {}, name: "t" });
    expect(toolUse?.type === "tool_use" && toolUse.inputError).toContain('tool "t"');
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: first.response.message.content },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_b", content: "invalid input", is_error: true },
        ],
      },
    ];
    const second = await collect(provider.stream({ model: "m", maxTokens: 10, messages }));
    expect(second.response.message.content).toEqual([{ type: "text", text: "done" }]);
    const sent = (server.requests[1]!.body as { messages: { content: unknown }[] }).messages[1]!
      .content;
    expect(sent).toEqual([
      { type: "thinking", thinking: "plan", signature: "sig-x" },
      { type: "tool_use", id: "toolu_b", name: "t", input: {} },
    ]);
  });

  it.each([
    "end_turn",
    "tool_use",
    "max_tokens",
    "stop_sequence",
    "pause_turn",
    "refusal",
  ] as const)("maps stop_reason %s", async (stopReason) => {
    server.enqueue(
      { content: [{ type: "text", text: "x" }], stopReason },
      { content: [{ type: "text", text: "x" }], stopReason },
    );
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    for (const stream of [true, false]) {
      const { response } = await collect(
        provider.stream({
          model: "m",
          maxTokens: 10,
          stream,
          messages: [{ role: "user", content: "x" }],
        }),
      );
      expect(response.stopReason).toBe(stopReason);
      expect(response.rawStopReason).toBe(stopReason);
    }
  });

  it("reports a 400 from the server's validation with the API's message", async () => {
    const provider = anthropic({ apiKey: KEY, baseURL: server.anthropicBaseURL });
    const messages: ModelMessage[] = [
      { role: "user", content: "go" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_z", name: "t", input: {} }] },
      { role: "user", content: "no result" },
    ];
    let error: unknown;
    try {
      await collect(provider.stream({ model: "m", maxTokens: 10, messages }));
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).status).toBe(400);
    expect((error as ProviderError).type).toBe("invalid_request_error");
    expect((error as ProviderError).apiMessage).toContain("toolu_z");
  });

  it("sends x-api-key, or Authorization: Bearer for authToken", async () => {
    server.enqueue({ content: [{ type: "text", text: "a" }] });
    await collect(
      anthropic({ authToken: KEY, baseURL: server.anthropicBaseURL }).stream({
        model: "m",
        maxTokens: 5,
        messages: [{ role: "user", content: "x" }],
      }),
    );
    expect(server.requests[0]!.headers.authorization).toBe("[redacted]");
    expect(server.requests[0]!.headers["x-api-key"]).toBeUndefined();
    const captured = captureFetch();
    await collect(
      anthropic({ apiKey: "k1", headers: { "anthropic-beta": "x" }, fetch: captured.fetch }).stream(
        { model: "m", maxTokens: 5, stream: false, messages: [{ role: "user", content: "x" }] },
      ),
    );
    expect(captured.calls[0]!.url).toBe("https://api.anthropic.com/v1/messages");
    expect(captured.calls[0]!.headers).toMatchObject({
      "x-api-key": "k1",
      "anthropic-version": "2023-06-01",
      "anthropic-beta": "x",
      "content-type": "application/json",
    });
  });

  it("reads ANTHROPIC_API_KEY, or DEEPSEEK_API_KEY for a DeepSeek base URL", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "from-anthropic-env");
    vi.stubEnv("DEEPSEEK_API_KEY", "from-deepseek-env");
    const captured = captureFetch();
    const request = {
      model: "deepseek-v4-flash",
      maxTokens: 5,
      stream: false,
      messages: [{ role: "user" as const, content: "x" }],
    };
    await collect(anthropic({ fetch: captured.fetch }).stream(request));
    await collect(
      anthropic({ baseURL: "https://api.deepseek.com/anthropic", fetch: captured.fetch }).stream(
        request,
      ),
    );
    expect(captured.calls[0]!.headers["x-api-key"]).toBe("from-anthropic-env");
    expect(captured.calls[1]!.url).toBe("https://api.deepseek.com/anthropic/v1/messages");
    expect(captured.calls[1]!.headers["x-api-key"]).toBe("from-deepseek-env");
  });

  it("names the key variable on a 401 and never prints the key", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "sk-ant-wrong-key-999");
    let error: unknown;
    try {
      await collect(
        anthropic({ baseURL: server.anthropicBaseURL }).stream({
          model: "m",
          maxTokens: 5,
          messages: [{ role: "user", content: "x" }],
        }),
      );
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).code).toBe("provider_authentication");
    expect((error as ProviderError).message).toContain("ANTHROPIC_API_KEY");
    expect(
      JSON.stringify({ ...(error as object), message: (error as Error).message }),
    ).not.toContain("sk-ant-wrong-key-999");
  });

  it("fails with provider_missing_api_key and no request when no key is found", async () => {
    vi.stubEnv("ANTHROPIC_API_KEY", "");
    let error: unknown;
    try {
      await collect(
        anthropic({ baseURL: server.anthropicBaseURL }).stream({
          model: "m",
          maxTokens: 5,
          messages: [{ role: "user", content: "x" }],
        }),
      );
    } catch (caught) {
      error = caught;
    }
    expect((error as ProviderError).code).toBe("provider_missing_api_key");
    expect((error as ProviderError).message).toContain("ANTHROPIC_API_KEY");
    expect(server.requests).toHaveLength(0);
  });

  it("checks its options strictly", () => {
    expect(() => anthropic({ apiKey: KEY, bogus: 1 } as never)).toThrow(UnknownOptionError);
    expect(() => anthropic({ apiKey: KEY, bogus: 1 } as never)).toThrow(
      'anthropic(): unknown option "bogus"',
    );
    expect(() => anthropic({ baseURL: "ftp://x" })).toThrow(/baseURL/);
    expect(() => anthropic({ maxRetries: -1 })).toThrow(/maxRetries/);
  });
});
