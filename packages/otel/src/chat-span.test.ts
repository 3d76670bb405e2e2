import { type AgentOptions, createAgent, type TraceEvent } from "@lattice/core";
import { openaiCompatible } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { otelObserver } from "./index.js";
import { memoryTracing } from "./span-tree.test-helpers.js";

let server: ScriptedModelServer;
let tracing: ReturnType<typeof memoryTracing>;
beforeEach(async () => {
  server = await createScriptedModelServer();
  tracing = memoryTracing();
});
afterEach(async () => {
  await server.close();
  await tracing.provider.shutdown();
});

const API_KEY = "sk-test-o3a";

/** One run of one model turn through `protocol`; its chat span and run span. */
async function oneTurn(
  protocol: "anthropic" | "openai",
  stream: boolean,
  reply: {
    model?: string;
    usage?: {
      inputTokens: number;
      outputTokens: number;
      cacheReadInputTokens?: number;
      cacheCreationInputTokens?: number;
    };
  },
): Promise<{ chat: ReadableSpan; run: ReadableSpan }> {
  server.enqueue({ content: [{ type: "text", text: "Hello." }], ...reply });
  const observer = otelObserver({ tracer: tracing.provider.getTracer("test") });
  const options: AgentOptions = {
    model: protocol === "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1",
    maxTurns: 2,
    stream,
    onTrace: (event: TraceEvent) => observer.onTrace(event),
    ...(protocol === "anthropic"
      ? { apiKey: API_KEY, baseURL: server.anthropicBaseURL }
      : { provider: openaiCompatible({ apiKey: API_KEY, baseURL: server.openaiBaseURL }) }),
  };
  expect((await createAgent(options).run("hi")).subtype).toBe("success");
  const spans = tracing.exporter.getFinishedSpans();
  const chat = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "chat");
  const run = spans.filter((span) => span.attributes["gen_ai.operation.name"] === "invoke_agent");
  expect(chat).toHaveLength(1);
  expect(run).toHaveLength(1);
  return { chat: chat[0]!, run: run[0]! };
}

describe("chat spans: tokens, the reply's id and model (O3a)", () => {
  it("O3a: gen_ai.usage.input_tokens counts every input token on Anthropic (input + cache read + cache write), the cache counts apart", async () => {
    // Anthropic's input_tokens leaves out the cached tokens: 40 + 7 read + 5 written = 52.
    const { chat, run } = await oneTurn("anthropic", true, {
      usage: {
        inputTokens: 40,
        outputTokens: 12,
        cacheReadInputTokens: 7,
        cacheCreationInputTokens: 5,
      },
    });
    for (const span of [chat, run]) {
      expect(span.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 52,
        "gen_ai.usage.output_tokens": 12,
        "gen_ai.usage.cache_read.input_tokens": 7,
        "gen_ai.usage.cache_creation.input_tokens": 5,
      });
    }
  });

  it("O3a: on OpenAI-compatible APIs gen_ai.usage.input_tokens is prompt_tokens, cached tokens counted once", async () => {
    // The server sends prompt_tokens 47 with prompt_tokens_details.cached_tokens 7.
    const { chat, run } = await oneTurn("openai", false, {
      usage: { inputTokens: 40, outputTokens: 12, cacheReadInputTokens: 7 },
    });
    for (const span of [chat, run]) {
      expect(span.attributes).toMatchObject({
        "gen_ai.usage.input_tokens": 47,
        "gen_ai.usage.cache_read.input_tokens": 7,
        "gen_ai.usage.cache_creation.input_tokens": 0,
      });
    }
  });

  for (const protocol of ["anthropic", "openai"] as const) {
    for (const stream of [true, false]) {
      it(`O3a: gen_ai.response.id is the reply's id, gen_ai.response.model the reply's model, the HTTP request id lattice.provider.request_id (${protocol}, ${stream ? "streamed" : "not streamed"})`, async () => {
        const model =
          protocol === "anthropic" ? "claude-sonnet-4-5-20250929" : "gpt-4.1-2025-04-14";
        const { chat } = await oneTurn(protocol, stream, { model });
        expect(chat.attributes).toMatchObject({
          "gen_ai.request.model": protocol === "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1",
          "gen_ai.response.id": protocol === "anthropic" ? "msg_scripted_1" : "chatcmpl-scripted-1",
          "gen_ai.response.model": model,
          "lattice.provider.request_id": "req_scripted_1",
        });
      });
    }
  }
});
