import { type AgentOptions, createAgent, memorySessionStore, type TraceEvent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import type { Span } from "@opentelemetry/api";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { otelObserver } from "./index.js";
import { memoryTracing, millis } from "./span-tree.test-helpers.js";

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

const base = { sessionId: "s1", runId: "r1" } as const;
const started = (time: number, resumed = false): TraceEvent => ({
  type: "run_started",
  time,
  ...base,
  parentToolUseId: null,
  agentName: "lead",
  model: "scripted",
  provider: "anthropic",
  tools: ["echo"],
  ...(resumed ? { resumed: true } : {}),
});
const queued = (time: number, index: number, id: string): TraceEvent => ({
  type: "tool_call_queued",
  time,
  ...base,
  turn: 1,
  index,
  id,
  name: "echo",
  kind: "tool",
});
const finishedRun = (time: number): TraceEvent => ({
  type: "run_finished",
  time,
  ...base,
  subtype: "success",
  numTurns: 1,
  durationMs: time,
  usage: { inputTokens: 1, outputTokens: 1, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 },
});

function observer() {
  return otelObserver({ tracer: tracing.provider.getTracer("test"), agentName: "lead" });
}
function spans(): ReadableSpan[] {
  return tracing.exporter.getFinishedSpans();
}

describe("otelObserver: stepped runs and odd traces (O2, O3)", () => {
  it("O2: each agent.step() ends its span of the run when the step returns, and the next step's span links to it", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "c1", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const seen = observer();
    const options: AgentOptions = {
      name: "lead",
      apiKey: "sk-test-otel-steps",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      sessionStore: memorySessionStore(),
      tools: [
        tool("echo", "Echo", z.object({ text: z.string() }), ({ text }) => ({ content: text })),
      ],
      onTrace: seen.onTrace,
    };
    const agent = createAgent(options);
    const first = await agent.step("s1", { prompt: "go" });
    expect(first).toMatchObject({ status: "continue", step: 0, nextStep: 1 });
    // At once, no flush: what a worker exporting before its next job sees.
    expect(
      spans()
        .map((span) => span.name)
        .sort(),
    ).toEqual(["chat scripted", "invoke_agent lead"]);
    const stepSpan = spans().find((span) => span.name === "invoke_agent lead")!;
    expect(stepSpan.attributes).toMatchObject({
      "lattice.run.step": 0,
      "lattice.run.next_step": 1,
    });
    expect(stepSpan.attributes["lattice.run.subtype"]).toBeUndefined();
    await agent.step("s1", { expectedStep: 1 });
    expect(spans().filter((span) => span.name === "execute_tool echo")).toHaveLength(1);
    const last = await agent.step("s1", { expectedStep: 2 });
    expect(last.status).toBe("ended");
    const runSpans = spans()
      .filter((span) => span.name === "invoke_agent lead")
      .sort((a, b) => millis(a.startTime) - millis(b.startTime));
    expect(runSpans).toHaveLength(3);
    for (let index = 1; index < 3; index++) {
      expect(runSpans[index]!.attributes["lattice.run.resumed"]).toBe(true);
      expect(runSpans[index]!.links.map((link) => link.context.spanId)).toEqual([
        runSpans[index - 1]!.spanContext().spanId,
      ]);
    }
    expect(runSpans[2]!.attributes["lattice.run.subtype"]).toBe("success");
  });

  it("O2: a run started again while this observer still had it open links to the span it ends", () => {
    const seen = observer();
    seen.onTrace(started(1));
    seen.onTrace(started(5, true));
    seen.onTrace(finishedRun(9));
    const [first, second] = spans().sort((a, b) => millis(a.startTime) - millis(b.startTime));
    expect(first!.attributes["lattice.run.subtype"]).toBe("unfinished");
    expect(second!.links.map((link) => link.context.spanId)).toEqual([first!.spanContext().spanId]);
  });

  it("O3: a call's own end stands when its finished event names another index; the run's end does not overwrite it", () => {
    const seen = observer();
    seen.onTrace(started(1));
    seen.onTrace(queued(2, 0, "q0"));
    seen.onTrace(queued(2, 1, "q1"));
    seen.onTrace({
      type: "tool_call_finished",
      time: 4,
      ...base,
      turn: 1,
      index: 0,
      id: "q1",
      name: "echo",
      kind: "tool",
      status: "completed",
      isError: false,
      durationMs: 1,
    } as TraceEvent);
    seen.onTrace(finishedRun(9));
    const byId = new Map(spans().map((span) => [span.attributes["gen_ai.tool.call.id"], span]));
    expect(byId.get("q1")?.attributes["lattice.tool.status"]).toBe("completed");
    expect(byId.get("q0")?.attributes["lattice.tool.status"]).toBe("unfinished");
  });

  it("O3: a span processor that throws as the run's span ends costs that span only: the run is not kept open", () => {
    const exporter = new InMemorySpanExporter();
    const inner = new SimpleSpanProcessor(exporter);
    const throwing: SpanProcessor = {
      onStart: (span: Span, context) => inner.onStart(span as never, context),
      onEnd: (span) => {
        if (span.name.startsWith("invoke_agent")) throw new Error("exporter down");
        inner.onEnd(span);
      },
      forceFlush: () => inner.forceFlush(),
      shutdown: () => inner.shutdown(),
    };
    const provider = new BasicTracerProvider({ spanProcessors: [throwing] });
    const seen = otelObserver({ tracer: provider.getTracer("test"), agentName: "lead" });
    seen.onTrace(started(1));
    expect(() => seen.onTrace(finishedRun(2))).not.toThrow();
    // Later events of the ended run start nothing.
    seen.onTrace(queued(3, 0, "late"));
    seen.endOpenSpans();
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("O2: a stepped run the sampler dropped is forgotten when its step ends: a later run of its session is traced", () => {
    const exporter = new InMemorySpanExporter();
    let decisions = 0;
    const provider = new BasicTracerProvider({
      // Drops the first run's span, records every later one.
      sampler: {
        shouldSample: () => ({ decision: decisions++ === 0 ? 0 : 2 }),
        toString: () => "first-dropped",
      },
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
    const seen = otelObserver({ tracer: provider.getTracer("test"), agentName: "lead" });
    seen.onTrace(started(0));
    seen.onTrace({ type: "run_step_finished", time: 1, ...base, step: 0, nextStep: 1 });
    // A run of the same session whose parent call this observer never saw (it ran elsewhere).
    const child = { sessionId: "s1", runId: "r2" } as const;
    seen.onTrace({
      ...(started(2) as Extract<TraceEvent, { type: "run_started" }>),
      ...child,
      parentToolUseId: "toolu_elsewhere",
    });
    seen.onTrace({
      ...(finishedRun(3) as Extract<TraceEvent, { type: "run_finished" }>),
      ...child,
    });
    expect(exporter.getFinishedSpans().map((span) => span.attributes["lattice.run.id"])).toEqual([
      "r2",
    ]);
  });
});
