import { createAgent } from "@lattice/core";
import { anthropic } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { otelObserver } from "./index.js";
import { memoryTracing } from "./span-tree.test-helpers.js";

let server: ScriptedModelServer;
let backup: ScriptedModelServer;
let tracing: ReturnType<typeof memoryTracing>;
beforeEach(async () => {
  server = await createScriptedModelServer();
  backup = await createScriptedModelServer();
  tracing = memoryTracing();
});
afterEach(async () => {
  await server.close();
  await backup.close();
  await tracing.provider.shutdown();
});

describe("otelObserver: steering a run (L9, L10, L2, L11)", () => {
  it("L9, L10: guardrails and a fallback are span events; each model call's span names its model and output mode; the run's span carries its cost", async () => {
    server.enqueue({ status: 529 });
    backup.enqueue(
      {
        content: [{ type: "text", text: '{"answer":"too short"}' }],
        usage: { inputTokens: 100, outputTokens: 10 },
      },
      {
        content: [{ type: "text", text: '{"answer":"long enough now"}' }],
        usage: { inputTokens: 120, outputTokens: 12 },
      },
    );
    const seen = otelObserver({ tracer: tracing.provider.getTracer("test"), agentName: "desk" });
    const agent = createAgent({
      name: "desk",
      provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
      model: "claude-sonnet-4-6",
      fallback: [
        {
          provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }),
          model: "claude-haiku-4-5",
        },
      ],
      outputSchema: z.object({ answer: z.string() }),
      guardrails: {
        input: [
          function polite() {
            return { tripwire: false };
          },
        ],
        output: [
          function longEnough({ output }) {
            return (output as { answer: string }).answer.length < 10
              ? { retry: "Write at least ten characters." }
              : { tripwire: false };
          },
        ],
      },
      onTrace: seen.onTrace,
    });
    const result = await agent.run("help");
    expect(result.subtype).toBe("success");
    const spans = tracing.exporter.getFinishedSpans();
    const run = spans.find((span) => span.name === "invoke_agent desk")!;
    const events = run.events.map((event) => [event.name, event.attributes]);
    expect(events).toEqual([
      [
        "lattice.model.fallback",
        {
          "lattice.turn": 1,
          "lattice.fallback.from_model": "claude-sonnet-4-6",
          "lattice.fallback.from_provider": "anthropic",
          "lattice.fallback.to_model": "claude-haiku-4-5",
          "lattice.fallback.to_provider": "anthropic",
          "lattice.fallback.index": 1,
          "lattice.fallback.reason": expect.stringContaining("529"),
          "http.response.status_code": 529,
        },
      ],
      [
        "lattice.guardrail",
        {
          "lattice.turn": 1,
          "lattice.guardrail.kind": "input",
          "lattice.guardrail.name": "polite",
          "lattice.guardrail.tripwire": false,
          "lattice.guardrail.duration_ms": expect.any(Number),
        },
      ],
      [
        "lattice.guardrail",
        {
          "lattice.turn": 1,
          "lattice.guardrail.kind": "output",
          "lattice.guardrail.name": "longEnough",
          "lattice.guardrail.tripwire": false,
          "lattice.guardrail.retry": true,
          "lattice.guardrail.duration_ms": expect.any(Number),
        },
      ],
      [
        "lattice.guardrail",
        {
          "lattice.turn": 2,
          "lattice.guardrail.kind": "output",
          "lattice.guardrail.name": "longEnough",
          "lattice.guardrail.tripwire": false,
          "lattice.guardrail.duration_ms": expect.any(Number),
        },
      ],
    ]);
    // Haiku 4.5: $1 in, $5 out per million tokens.
    expect(run.attributes["lattice.usage.cost_usd"]).toBeCloseTo((220 * 1 + 22 * 5) / 1e6, 12);
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    expect(chats.map((span) => [span.name, span.attributes["error.type"]])).toEqual([
      ["chat claude-sonnet-4-6", expect.any(String)],
      ["chat claude-haiku-4-5", undefined],
      ["chat claude-haiku-4-5", undefined],
    ]);
    for (const chat of chats) {
      expect(chat.attributes["gen_ai.output.type"]).toBe("json");
      // The scripted provider here is an Anthropic adapter with native output by default.
      expect(chat.attributes["lattice.output.mode"]).toMatch(/^(native_json_schema|forced_tool)$/);
    }
    expect(chats[1]!.attributes["gen_ai.request.model"]).toBe("claude-haiku-4-5");
  });
});
