import {
  type AgentOptions,
  agentTool,
  createAgent,
  defineAgent,
  type TraceEvent,
} from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { SpanKind, SpanStatusCode } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { otelObserver } from "./index.js";
import { exportedText, memoryTracing, millis, spanTree } from "./span-tree.test-helpers.js";

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

const API_KEY = "sk-test-secret-key-otel-123";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function agentOptions(
  extra: Partial<AgentOptions> = {},
  observe: { recordContent?: boolean; events?: TraceEvent[] } = {},
): AgentOptions {
  const observer = otelObserver({
    tracer: tracing.provider.getTracer("test"),
    agentName: "lead",
    providerName: "anthropic",
    maxTokens: 1024,
    ...(observe.recordContent !== undefined ? { recordContent: observe.recordContent } : {}),
  });
  return {
    name: "lead",
    apiKey: API_KEY,
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    maxTurns: 10,
    maxTokens: 1024,
    onTrace: (event) => {
      observe.events?.push(event);
      observer.onTrace(event);
    },
    ...extra,
  };
}

function spans(): ReadableSpan[] {
  return tracing.exporter.getFinishedSpans();
}
function named(name: string): ReadableSpan[] {
  return spans().filter((span) => span.name === name);
}
function one(name: string): ReadableSpan {
  const found = named(name);
  expect(found, `one span named ${name}`).toHaveLength(1);
  return found[0]!;
}

const waitTool = (name: string, log: string[] = []) =>
  tool(
    name,
    "Waits",
    z.object({ ms: z.number() }),
    async ({ ms }, { signal }) => {
      log.push(name);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          reject(signal.reason);
        });
      });
      return { content: `${name} waited ${ms} ms` };
    },
    { isConcurrencySafe: () => true },
  );

const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "tool_use" as const,
  id,
  name,
  input,
});

describe("otelObserver: spans of a run (O2, O3)", () => {
  it("O2, O3: a parallel batch: invoke_agent > chat + overlapping execute_tool siblings, with GenAI and lattice attributes", async () => {
    server.enqueue(
      {
        content: [
          call("t1", "fetch_a", { ms: 150 }),
          call("t2", "fetch_b", { ms: 150 }),
          call("t3", "fetch_c", { ms: 150 }),
        ],
        usage: { inputTokens: 40, outputTokens: 12, cacheReadInputTokens: 7 },
      },
      {
        content: [{ type: "text", text: "All fetched." }],
        usage: { inputTokens: 60, outputTokens: 5 },
      },
    );
    const agent = createAgent(
      agentOptions({ tools: [waitTool("fetch_a"), waitTool("fetch_b"), waitTool("fetch_c")] }),
    );
    const result = await agent.run("Fetch everything.");
    expect(result.subtype).toBe("success");

    expect(spanTree(spans())).toBe(
      [
        "invoke_agent lead",
        "  chat scripted",
        "  execute_tool fetch_a",
        "  execute_tool fetch_b",
        "  execute_tool fetch_c",
        "  chat scripted",
      ].join("\n"),
    );
    const run = one("invoke_agent lead");
    expect(run.kind).toBe(SpanKind.INTERNAL);
    expect(run.status.code).toBe(SpanStatusCode.UNSET);
    expect(run.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.name": "lead",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "scripted",
      "gen_ai.conversation.id": result.sessionId,
      "lattice.run.id": result.runId,
      "lattice.run.subtype": "success",
      "lattice.run.num_turns": 2,
      // Every input token, the cached ones included (O3a): 40 + 7 + 60.
      "gen_ai.usage.input_tokens": 107,
      "gen_ai.usage.output_tokens": 17,
      "gen_ai.usage.cache_read.input_tokens": 7,
    });

    const [first, second] = named("chat scripted").sort(
      (a, b) => millis(a.startTime) - millis(b.startTime),
    );
    expect(first!.kind).toBe(SpanKind.CLIENT);
    expect(first!.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(first!.attributes).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": "anthropic",
      "gen_ai.request.model": "scripted",
      "gen_ai.request.max_tokens": 1024,
      "gen_ai.conversation.id": result.sessionId,
      "gen_ai.response.finish_reasons": ["tool_use"],
      "gen_ai.usage.input_tokens": 47,
      "gen_ai.usage.output_tokens": 12,
      "gen_ai.usage.cache_read.input_tokens": 7,
      "gen_ai.usage.cache_creation.input_tokens": 0,
      "lattice.turn": 1,
      "lattice.model.retries": 0,
      "lattice.model.tool_calls": 3,
    });
    expect(first!.attributes["gen_ai.response.id"]).toMatch(/^msg_/);
    expect(first!.attributes["gen_ai.response.model"]).toBe("scripted");
    expect(first!.attributes["lattice.provider.request_id"]).toMatch(/^req_/);
    expect(second!.attributes["gen_ai.response.finish_reasons"]).toEqual(["end_turn"]);

    const tools = ["fetch_a", "fetch_b", "fetch_c"].map((name) => one(`execute_tool ${name}`));
    const plan = JSON.stringify({
      mode: "safe",
      maxConcurrency: 10,
      runs: [{ concurrent: true, indices: [0, 1, 2] }],
    });
    tools.forEach((span, index) => {
      expect(span.kind).toBe(SpanKind.INTERNAL);
      expect(span.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
      expect(span.status.code).toBe(SpanStatusCode.UNSET);
      expect(span.attributes).toMatchObject({
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": ["fetch_a", "fetch_b", "fetch_c"][index],
        "gen_ai.tool.call.id": `t${index + 1}`,
        "gen_ai.tool.type": "function",
        "lattice.tool.kind": "tool",
        "lattice.turn": 1,
        "lattice.batch.index": index,
        "lattice.batch.run_index": 0,
        "lattice.batch.plan": plan,
        "lattice.tool.concurrency_safe": true,
        "lattice.tool.status": "completed",
        "lattice.tool.is_error": false,
      });
      expect(span.attributes["lattice.tool.queued_ms"]).toBeGreaterThanOrEqual(0);
      expect(span.attributes["lattice.tool.duration_ms"]).toBeGreaterThanOrEqual(140);
      // The span starts with the handler (O2a); the queue time is an event before it.
      expect(span.events.map((event) => event.name)).toEqual(["lattice.tool.queued"]);
    });
    // Real overlap on the wall clock: every tool span overlaps every other one, and the three
    // together take well under three handlers' time.
    for (const a of tools) {
      for (const b of tools) {
        expect(millis(a.startTime)).toBeLessThan(millis(b.endTime));
      }
    }
    const makespan =
      Math.max(...tools.map((span) => millis(span.endTime))) -
      Math.min(...tools.map((span) => millis(span.startTime)));
    expect(makespan).toBeLessThan(400);
    // Siblings in time order: the chat span ends before the tools start; the run covers all.
    expect(millis(first!.endTime)).toBeLessThanOrEqual(millis(tools[0]!.startTime));
    expect(millis(run.startTime)).toBeLessThanOrEqual(millis(first!.startTime));
    expect(millis(run.endTime)).toBeGreaterThanOrEqual(millis(second!.endTime));
    expect(Math.abs(millis(run.startTime) - Date.now())).toBeLessThan(60_000);
    // The plan is on every call's span; the run's span has no event for it.
    expect(run.events).toEqual([]);
  });

  it("O6: a finished call's span reaches the processor while the run goes on, ended at its own time", async () => {
    const seen: string[] = [];
    const check = tool("check", "Looks at the spans so far", z.object({}), async () => {
      await sleep(20);
      seen.push(...spans().map((span) => span.name));
      return { content: "ok" };
    });
    server.enqueue(
      { content: [call("c1", "check", {})] },
      { content: [{ type: "text", text: "done" }] },
    );
    const events: TraceEvent[] = [];
    await createAgent(agentOptions({ tools: [check] }, { events })).run("go");
    // Ended once the event loop's turn was done, not when the run ended.
    expect(seen).toEqual(["chat scripted"]);
    const finished = events.find((event) => event.type === "model_request_finished")!;
    const [first] = named("chat scripted").sort(
      (a, b) => millis(a.startTime) - millis(b.startTime),
    );
    expect(millis(first!.endTime)).toBeCloseTo(performance.timeOrigin + finished.time, 3);
  });

  it("O3: an unsafe call runs alone: concurrency_safe false, and the plan shows why the next one waited", async () => {
    const log: string[] = [];
    const write = tool("write", "Writes", z.object({ ms: z.number() }), async ({ ms }) => {
      log.push("write");
      await sleep(ms);
      return { content: "written" };
    });
    server.enqueue(
      { content: [call("w1", "write", { ms: 60 }), call("r1", "read", { ms: 10 })] },
      { content: [{ type: "text", text: "done" }] },
    );
    await createAgent(agentOptions({ tools: [write, waitTool("read", log)] })).run("go");
    const writeSpan = one("execute_tool write");
    const readSpan = one("execute_tool read");
    expect(writeSpan.attributes["lattice.tool.concurrency_safe"]).toBe(false);
    expect(readSpan.attributes["lattice.tool.concurrency_safe"]).toBe(true);
    expect(readSpan.attributes["lattice.batch.run_index"]).toBe(1);
    expect(readSpan.attributes["lattice.tool.queued_ms"]).toBeGreaterThanOrEqual(50);
  });
});

describe("otelObserver: failures and decisions (O4)", () => {
  it("O4: a policy refusal: every tool span ERROR refused; the run span has the policy event", async () => {
    server.enqueue(
      { content: [call("a1", "fetch_a", { ms: 5 }), call("b1", "fetch_b", { ms: 5 })] },
      { content: [{ type: "text", text: "I will ask one at a time." }] },
    );
    const log: string[] = [];
    await createAgent(
      agentOptions({
        tools: [waitTool("fetch_a", log), waitTool("fetch_b", log)],
        toolBatchPolicy: {
          validate: ({ toolCalls }) => ({
            allowed: false,
            code: "one_at_a_time",
            message: "Call one tool per reply.",
            conflictingToolCallIds: toolCalls.map((toolCall) => toolCall.id),
          }),
        },
      }),
    ).run("go");
    expect(log).toEqual([]);
    expect(spanTree(spans())).toBe(
      [
        "invoke_agent lead",
        "  chat scripted",
        "  execute_tool fetch_a !refused",
        "  execute_tool fetch_b !refused",
        "  chat scripted",
      ].join("\n"),
    );
    const refused = one("execute_tool fetch_a");
    expect(refused.status).toEqual({
      code: SpanStatusCode.ERROR,
      message: "the batch policy refused the batch",
    });
    expect(refused.attributes).toMatchObject({
      "error.type": "refused",
      "lattice.tool.status": "refused",
      "lattice.tool.is_error": true,
      "lattice.tool.duration_ms": 0,
    });
    // It never ran: a span of no length when the policy refused it, its wait until then (O2a).
    expect(refused.attributes["lattice.tool.queued_ms"]).toBeGreaterThanOrEqual(0);
    expect(millis(refused.endTime)).toBe(millis(refused.startTime));
    const policy = one("invoke_agent lead").events.find(
      (event) => event.name === "lattice.batch.policy",
    );
    expect(policy?.attributes).toEqual({
      "lattice.turn": 1,
      "lattice.policy.allowed": false,
      "lattice.policy.code": "one_at_a_time",
      "lattice.policy.message": "Call one tool per reply.",
      "lattice.policy.conflicting_tool_call_ids": ["a1", "b1"],
    });
  });

  it("O4: a retried model call: one chat span with a retry event and its HTTP status", async () => {
    server.enqueue(
      { status: 529, headers: { "retry-after-ms": "5" } },
      { content: [{ type: "text", text: "Hello." }] },
    );
    const result = await createAgent(agentOptions()).run("hi");
    expect(result.subtype).toBe("success");
    expect(spanTree(spans())).toBe(["invoke_agent lead", "  chat scripted"].join("\n"));
    const chat = one("chat scripted");
    expect(chat.status.code).toBe(SpanStatusCode.UNSET);
    expect(chat.attributes["lattice.model.retries"]).toBe(1);
    expect(chat.events).toHaveLength(1);
    expect(chat.events[0]!.name).toBe("lattice.model.retry");
    expect(chat.events[0]!.attributes).toMatchObject({
      "lattice.retry.attempt": 1,
      "http.response.status_code": 529,
    });
  });

  it("O4: a model call that fails for good: chat ERROR with the status as error.type; run ERROR", async () => {
    server.enqueue({ status: 400 });
    const result = await createAgent(agentOptions()).run("hi");
    expect(result.subtype).toBe("error_during_execution");
    expect(spanTree(spans())).toBe(
      ["invoke_agent lead !error_during_execution", "  chat scripted !400"].join("\n"),
    );
    expect(one("chat scripted").attributes["http.response.status_code"]).toBe(400);
  });

  it("O4: a hook denial and a timeout are tool statuses; hooks are events on the tool span", async () => {
    server.enqueue(
      { content: [call("d1", "fetch_a", { ms: 5 }), call("s1", "slow", { ms: 2000 })] },
      { content: [{ type: "text", text: "ok" }] },
    );
    await createAgent(
      agentOptions({
        tools: [waitTool("fetch_a"), waitTool("slow")],
        toolTimeoutMs: 50,
        hooks: {
          beforeToolCall: (toolCall) =>
            toolCall.name === "fetch_a" ? { deny: "Not today." } : undefined,
        },
      }),
    ).run("go");
    const denied = one("execute_tool fetch_a");
    expect(denied.attributes).toMatchObject({
      "error.type": "denied",
      "lattice.tool.status": "denied",
    });
    expect(denied.events.map((event) => event.name)).toEqual([
      "lattice.tool.queued",
      "lattice.hook",
    ]);
    expect(denied.events[1]!.attributes).toMatchObject({
      "lattice.hook.name": "beforeToolCall",
      "gen_ai.tool.call.id": "d1",
    });
    const slow = one("execute_tool slow");
    expect(slow.status.code).toBe(SpanStatusCode.ERROR);
    expect(slow.attributes["error.type"]).toBe("timed_out");
  });

  it("O4: an abort: the run span ERROR aborted with its event; the running call's span ends too", async () => {
    server.enqueue({ content: [call("w1", "slow", { ms: 5000 })] });
    const controller = new AbortController();
    const events: TraceEvent[] = [];
    const agent = createAgent(agentOptions({ tools: [waitTool("slow")] }, { events }));
    const running = agent.run("go", { signal: controller.signal });
    while (!events.some((event) => event.type === "tool_call_started")) await sleep(5);
    controller.abort();
    await expect(running).rejects.toMatchObject({ name: "AbortError" });
    const tree = spanTree(spans());
    expect(tree).toMatch(
      /^invoke_agent lead !aborted\n {2}chat scripted\n {2}execute_tool slow !\w+$/,
    );
    const run = one("invoke_agent lead");
    expect(run.attributes["lattice.run.subtype"]).toBe("aborted");
    expect(run.events.map((event) => event.name)).toContain("lattice.run.aborted");
    expect(tracing.exporter.getFinishedSpans().every((span) => span.ended)).toBe(true);
  });
});

describe("otelObserver: runs within runs (O2)", () => {
  it("O2: an agent tool's child run is a child of its execute_tool span, named after the tool", async () => {
    const researcher = defineAgent({
      name: "researcher",
      description: "Finds facts.",
      systemPrompt: "You research.",
      maxTurns: 3,
    });
    server.enqueue(
      { content: [call("toolu_call", "researcher", { task: "Find the capital of France" })] },
      { content: [{ type: "text", text: "Paris." }] },
      { content: [{ type: "text", text: "The capital is Paris." }] },
    );
    const result = await createAgent(agentOptions({ tools: [agentTool(researcher)] })).run("go");
    expect(result.subtype).toBe("success");
    expect(spanTree(spans())).toBe(
      [
        "invoke_agent lead",
        "  chat scripted",
        "  execute_tool researcher",
        "    invoke_agent researcher",
        "      chat scripted",
        "  chat scripted",
      ].join("\n"),
    );
    const toolSpan = one("execute_tool researcher");
    const child = one("invoke_agent researcher");
    expect(toolSpan.attributes["lattice.tool.kind"]).toBe("agent_tool");
    expect(child.parentSpanContext?.spanId).toBe(toolSpan.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(toolSpan.spanContext().traceId);
    expect(child.attributes).toMatchObject({
      "gen_ai.agent.name": "researcher",
      "lattice.run.parent_tool_call_id": "toolu_call",
      "lattice.run.subtype": "success",
    });
    expect(child.attributes["lattice.run.id"]).not.toBe(result.runId);
    const childChat = spans().find(
      (span) => span.parentSpanContext?.spanId === child.spanContext().spanId,
    );
    // Every model request says its max_tokens (the trace event carries it), child runs' too.
    expect(childChat?.attributes["gen_ai.request.max_tokens"]).toBe(4096);
  });
});

describe("otelObserver: approvals, resume and content (O2, O4, O5)", () => {
  const deploy = tool(
    "deploy",
    "Deploys a service",
    z.object({ service: z.string(), version: z.string() }),
    async ({ service, version }) => ({ content: `deployed ${service}@${version}` }),
    { needsApproval: true },
  );

  async function pauseAndResume(recordContent: boolean) {
    server.enqueue(
      { content: [call("d1", "deploy", { service: "api", version: "2.1" })] },
      { content: [{ type: "text", text: "Deployed." }] },
    );
    const agent = createAgent(agentOptions({ tools: [deploy] }, { recordContent }));
    const paused = await agent.run("Ship api 2.1");
    expect(paused.subtype).toBe("interrupted");
    const [pending] = paused.pendingApprovals!;
    const resumed = await agent
      .resume(paused.sessionId, { decisions: { [pending!.approvalId]: { approved: true } } })
      .finalResult();
    expect(resumed.subtype).toBe("success");
    return { paused, approvalId: pending!.approvalId };
  }

  it("O2, O4: a paused run waits for approval; the resumed run links to it and records the decision", async () => {
    const { paused, approvalId } = await pauseAndResume(false);
    const [first, second] = named("invoke_agent lead").sort(
      (a, b) => millis(a.startTime) - millis(b.startTime),
    );
    expect(first!.attributes["lattice.run.subtype"]).toBe("interrupted");
    expect(first!.status.code).toBe(SpanStatusCode.UNSET);
    const waiting = spans().find(
      (span) =>
        span.name === "execute_tool deploy" &&
        span.parentSpanContext?.spanId === first!.spanContext().spanId,
    );
    expect(waiting?.attributes["lattice.tool.status"]).toBe("awaiting_approval");
    expect(waiting?.events.map((event) => event.name)).toEqual([
      "lattice.tool.queued",
      "lattice.approval.requested",
    ]);
    expect(waiting?.events[1]?.attributes).toEqual({
      "gen_ai.tool.call.id": "d1",
      "gen_ai.tool.name": "deploy",
    });

    expect(second!.attributes).toMatchObject({
      "lattice.run.resumed": true,
      "lattice.run.id": paused.runId,
      "gen_ai.conversation.id": paused.sessionId,
    });
    expect(second!.links).toHaveLength(1);
    expect(second!.links[0]!.context.spanId).toBe(first!.spanContext().spanId);
    expect(second!.links[0]!.attributes).toEqual({ "lattice.link.type": "resumes" });
    const decided = second!.events.find((event) => event.name === "lattice.approval.decided");
    expect(decided?.attributes).toEqual({
      "lattice.approval.approved_count": 1,
      "lattice.approval.denied_count": 0,
      "lattice.approval.edited_count": 0,
    });
    // The approval id lets whoever holds it decide: it is never exported.
    expect(exportedText(spans())).not.toContain(approvalId);
  });

  it("O5: no content without recordContent; never the API key, in either mode", async () => {
    await pauseAndResume(false);
    const without = exportedText(spans());
    expect(without).not.toContain("2.1");
    expect(without).not.toContain("Ship api");
    expect(without).not.toContain("Deployed.");
    expect(without).not.toContain(API_KEY);
    expect(without).not.toContain("gen_ai.tool.call.arguments");
    tracing.exporter.reset();

    await pauseAndResume(true);
    const withContent = exportedText(spans());
    expect(withContent).toContain("gen_ai.tool.call.arguments");
    expect(withContent).toContain(
      JSON.stringify(JSON.stringify({ service: "api", version: "2.1" })),
    );
    expect(withContent).not.toContain(API_KEY);
  });
});
