import { type AgentOptions, createAgent, type TraceEvent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
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

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A tool that waits `ms`, stopping early when its call is aborted. */
const waitTool = (name: string, safe: boolean) =>
  tool(
    name,
    "Waits",
    z.object({ ms: z.number() }),
    async ({ ms }, { signal }) => {
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      return { content: `${name} waited ${ms} ms` };
    },
    safe ? { isConcurrencySafe: () => true } : {},
  );

const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "tool_use" as const,
  id,
  name,
  input,
});

/** Runs an agent whose first reply asks for `calls`, then answers "done". */
async function traced(
  calls: ReturnType<typeof call>[],
  extra: Partial<AgentOptions>,
  during?: (events: TraceEvent[], controller: AbortController) => Promise<void>,
): Promise<{ events: TraceEvent[]; tools: ReadableSpan[] }> {
  server.enqueue({ content: calls }, { content: [{ type: "text", text: "done" }] });
  const observer = otelObserver({ tracer: tracing.provider.getTracer("test"), agentName: "lead" });
  const events: TraceEvent[] = [];
  const controller = new AbortController();
  const agent = createAgent({
    apiKey: "sk-test-o2a",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    maxTurns: 4,
    onTrace: (event) => {
      events.push(event);
      observer.onTrace(event);
    },
    ...extra,
  });
  const running = agent.run("go", { signal: controller.signal });
  if (during !== undefined) {
    await during(events, controller);
    await running.catch(() => undefined);
  } else {
    expect((await running).subtype).toBe("success");
  }
  const byId = new Map(
    tracing.exporter
      .getFinishedSpans()
      .filter((span) => span.attributes["gen_ai.operation.name"] === "execute_tool")
      .map((span) => [String(span.attributes["gen_ai.tool.call.id"]), span]),
  );
  const tools = calls.map((one) => byId.get(one.id));
  expect(tools.every((span) => span !== undefined)).toBe(true);
  return { events, tools: tools as ReadableSpan[] };
}

/** The trace event of this type for this call. */
function eventOf(events: TraceEvent[], type: TraceEvent["type"], id: string): { time: number } {
  const found = events.find(
    (event) => event.type === type && "id" in event && (event as { id: string }).id === id,
  );
  expect(found, `${type} of ${id}`).toBeDefined();
  return found as { time: number };
}

const epoch = (time: number) => performance.timeOrigin + time;

/** Asserts that each span starts when (or after) the one before it ended. */
function expectOneAfterAnother(tools: readonly ReadableSpan[]): void {
  for (let index = 1; index < tools.length; index++) {
    expect(millis(tools[index]!.startTime)).toBeGreaterThanOrEqual(
      millis(tools[index - 1]!.endTime),
    );
  }
}

/** Asserts what every call's span says about its wait: the attribute and the event. */
function expectQueueFacts(events: TraceEvent[], span: ReadableSpan, id: string): void {
  const queuedAt = eventOf(events, "tool_call_queued", id).time;
  expect(span.attributes["lattice.tool.queued_ms"]).toBeCloseTo(
    millis(span.startTime) - epoch(queuedAt),
    2,
  );
  const queued = span.events.find((event) => event.name === "lattice.tool.queued");
  expect(queued, `the queued event of ${id}`).toBeDefined();
  expect(millis(queued!.time)).toBeCloseTo(epoch(queuedAt), 2);
}

describe("execute_tool spans cover the handler's run (O2a)", () => {
  it("O2a: three sequential calls (an unsafe tool) never overlap; each span starts when its handler started", async () => {
    const calls = ["w1", "w2", "w3"].map((id) => call(id, "write", { ms: 30 }));
    const { events, tools } = await traced(calls, { tools: [waitTool("write", false)] });
    expectOneAfterAnother(tools);
    tools.forEach((span, index) => {
      const id = calls[index]!.id;
      expect(millis(span.startTime)).toBeCloseTo(
        epoch(eventOf(events, "tool_call_started", id).time),
        2,
      );
      expect(millis(span.endTime)).toBeCloseTo(
        epoch(eventOf(events, "tool_call_finished", id).time),
        2,
      );
      expect(millis(span.endTime) - millis(span.startTime)).toBeGreaterThanOrEqual(25);
      expectQueueFacts(events, span, id);
    });
    // The later calls waited for the earlier ones: the wait is in queued_ms, not in the span.
    expect(tools[2]!.attributes["lattice.tool.queued_ms"]).toBeGreaterThanOrEqual(50);
  });

  it("O2a: three safe calls at concurrency 1 never overlap either", async () => {
    const calls = ["r1", "r2", "r3"].map((id) => call(id, "read", { ms: 30 }));
    const { events, tools } = await traced(calls, {
      tools: [waitTool("read", true)],
      toolConcurrency: { mode: "safe", maxConcurrency: 1 },
    });
    expectOneAfterAnother(tools);
    for (const [index, span] of tools.entries()) expectQueueFacts(events, span, calls[index]!.id);
  });

  it("O2a: three concurrent safe calls overlap", async () => {
    const calls = ["c1", "c2", "c3"].map((id) => call(id, "read", { ms: 120 }));
    const { events, tools } = await traced(calls, { tools: [waitTool("read", true)] });
    for (const a of tools) {
      for (const b of tools) expect(millis(a.startTime)).toBeLessThan(millis(b.endTime));
    }
    tools.forEach((span, index) => {
      expect(span.attributes["lattice.tool.in_flight"]).toBe(index + 1);
      expectQueueFacts(events, span, calls[index]!.id);
    });
  });

  it("O2a: calls a policy refused never started: zero-length spans at the refusal, ERROR, with their wait", async () => {
    const calls = ["p1", "p2"].map((id) => call(id, "read", { ms: 5 }));
    const { events, tools } = await traced(calls, {
      tools: [waitTool("read", true)],
      toolBatchPolicy: {
        validate: async () => {
          await sleep(20);
          return { allowed: false, code: "no", message: "Not now." };
        },
      },
    });
    tools.forEach((span, index) => {
      const id = calls[index]!.id;
      const settled = epoch(eventOf(events, "tool_call_finished", id).time);
      expect(millis(span.startTime)).toBeCloseTo(settled, 2);
      expect(millis(span.endTime)).toBeCloseTo(settled, 2);
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes["lattice.tool.status"]).toBe("refused");
      expect(span.attributes["lattice.tool.queued_ms"]).toBeGreaterThanOrEqual(15);
      expect(span.attributes["lattice.tool.in_flight"]).toBeUndefined();
      expectQueueFacts(events, span, id);
    });
  });

  it("O2a: an unknown tool, an invalid input and a hook denial: zero-length spans at the decision, the hook's event kept", async () => {
    const calls = [
      call("u1", "nowhere", {}),
      call("i1", "read", { ms: "not a number" }),
      call("d1", "write", { ms: 5 }),
      call("ok", "read", { ms: 5 }),
    ];
    const { events, tools } = await traced(calls, {
      tools: [waitTool("read", true), waitTool("write", false)],
      hooks: {
        beforeToolCall: (toolCall) => (toolCall.name === "write" ? { deny: "No." } : undefined),
      },
    });
    const statuses = tools.map((span) => span.attributes["lattice.tool.status"]);
    expect(statuses).toEqual(["unknown_tool", "invalid_input", "denied", "completed"]);
    for (const span of tools.slice(0, 3)) {
      expect(millis(span.endTime)).toBe(millis(span.startTime));
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
    }
    for (const [index, span] of tools.entries()) expectQueueFacts(events, span, calls[index]!.id);
    // The beforeToolCall hook ran before the span's start: its event is on the span all the same.
    expect(tools[2]!.events.map((event) => event.name)).toEqual([
      "lattice.tool.queued",
      "lattice.hook",
    ]);
  });

  it("O2a: calls cancelled before they started (an abort) get zero-length spans at the abort", async () => {
    const calls = ["a1", "a2", "a3"].map((id) => call(id, "write", { ms: 5000 }));
    const { events, tools } = await traced(
      calls,
      { tools: [waitTool("write", false)] },
      async (seen, controller) => {
        while (!seen.some((event) => event.type === "tool_call_started")) await sleep(5);
        controller.abort();
      },
    );
    const abortedAt = events.find((event) => event.type === "run_aborted")!.time;
    for (const span of tools.slice(1)) {
      expect(millis(span.endTime)).toBe(millis(span.startTime));
      expect(millis(span.startTime)).toBeLessThanOrEqual(epoch(abortedAt) + 0.01);
      expect(span.status.code).toBe(SpanStatusCode.ERROR);
      expect(span.attributes["lattice.tool.in_flight"]).toBeUndefined();
    }
    // The call that was running covers its handler's run up to the abort.
    expect(millis(tools[0]!.startTime)).toBeCloseTo(
      epoch(eventOf(events, "tool_call_started", "a1").time),
      2,
    );
    expectOneAfterAnother(tools);
    for (const [index, span] of tools.entries()) expectQueueFacts(events, span, calls[index]!.id);
  });
});
