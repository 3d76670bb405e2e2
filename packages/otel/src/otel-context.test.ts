import { compact, createAgent } from "@lattice/core";
import { anthropic } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { otelObserver } from "./index.js";
import { memoryTracing } from "./span-tree.test-helpers.js";

let server: ScriptedModelServer;
let tracing: ReturnType<typeof memoryTracing>;
beforeEach(async () => {
  let calls = 0;
  server = await createScriptedModelServer({
    respond: (request) => {
      if (JSON.stringify(request.body).includes("You write summaries of conversations")) {
        return { content: [{ type: "text", text: "SUMMARY" }] };
      }
      calls++;
      return calls <= 5
        ? { content: [{ type: "tool_use", name: "read", input: { path: `f${calls}` } }] }
        : { content: [{ type: "text", text: "done" }] };
    },
  });
  tracing = memoryTracing();
});
afterEach(async () => {
  await server.close();
  await tracing.provider.shutdown();
});

const read = tool("read", "Read a file", z.object({ path: z.string() }), ({ path }) => ({
  content: `${path}: ${"x".repeat(2048)}`,
}));

describe("otelObserver: compaction (C5)", () => {
  it("C5: the summary's model call is a chat span marked lattice.compaction, and the compaction a span event of the run", async () => {
    const seen = otelObserver({ tracer: tracing.provider.getTracer("test"), agentName: "reader" });
    const agent = createAgent({
      name: "reader",
      provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL }),
      model: "scripted",
      tools: [read],
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
      onTrace: seen.onTrace,
    });
    expect((await agent.run("Read five files")).subtype).toBe("success");
    const spans = tracing.exporter.getFinishedSpans();
    const chats = spans.filter((span) => span.name.startsWith("chat "));
    const marked = chats.filter((span) => span.attributes["lattice.compaction"] === true);
    expect(marked.length).toBeGreaterThan(0);
    expect(chats.length - marked.length).toBe(6);
    for (const chat of marked) {
      expect(chat.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      expect(chat.attributes["error.type"]).toBeUndefined();
    }
    const run = spans.find((span) => span.name === "invoke_agent reader")!;
    const events = run.events.filter((event) => event.name === "lattice.compaction");
    expect(events).toHaveLength(marked.length);
    expect(events[0]!.attributes).toMatchObject({
      "lattice.compaction.strategy": "compact",
      "lattice.compaction.trigger": "threshold",
      "lattice.compaction.tool_results_cleared": 0,
    });
    expect(events[0]!.attributes!["lattice.compaction.tokens_after"]).toBeLessThan(
      events[0]!.attributes!["lattice.compaction.tokens_before"] as number,
    );
  });
});
