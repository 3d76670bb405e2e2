import type { TraceEvent } from "@lattice/core";
import { describe, expect, it } from "vitest";
import { sampleTrace } from "./fixtures/sample-trace.js";
import { buildTimeline, renderTimeline } from "./index.js";

const MARKUP = "<img src=x onerror=window.__h15=1>";

/** The sample trace with one field of the `nth` event of `type` replaced (or removed, for `undefined`). */
function withField(type: string, key: string, value: unknown, nth = 0): TraceEvent[] {
  const events = sampleTrace() as unknown as Record<string, unknown>[];
  const matching = events.filter((event) => event.type === type);
  const target = matching[nth];
  if (target === undefined) throw new Error(`the sample trace has no ${type} #${nth}`);
  if (value === undefined) delete target[key];
  else target[key] = value;
  return events as unknown as TraceEvent[];
}

const indexOf = (events: readonly TraceEvent[], type: string, nth = 0): number =>
  events.map((event, index) => [event.type, index] as const).filter(([t]) => t === type)[nth]![1];

describe("buildTimeline and renderTimeline refuse events they cannot draw", () => {
  it("H15: a turn that is a string holding markup is refused, naming the event and the field", () => {
    const events = withField("tool_call_queued", "turn", MARKUP);
    const at = indexOf(events, "tool_call_queued");
    expect(() => renderTimeline(events)).toThrow(
      expect.objectContaining({
        name: "TraceEventError",
        code: "trace_event_invalid",
        index: at,
        field: "turn",
      }),
    );
    expect(() => buildTimeline(events)).toThrow(
      new RegExp(`^Trace event ${at} \\(tool_call_queued\\): "turn" must be`),
    );
  });

  it("H16: an unknown status, a missing usage, plan or approvals name the event and the field", () => {
    const cases: [type: string, key: string, value: unknown, field: string][] = [
      ["tool_call_finished", "status", "exploded", "status"],
      ["model_request_finished", "usage", undefined, "usage"],
      ["batch_planned", "plan", undefined, "plan"],
      [
        "batch_planned",
        "plan",
        { mode: "safe", maxConcurrency: 8, runs: [{ concurrent: true, indices: ["0"] }] },
        "plan.runs[0].indices[0]",
      ],
      ["approval_requested", "approvals", undefined, "approvals"],
      ["approval_requested", "approvals", "all of them", "approvals"],
      ["tool_call_queued", "id", 42, "id"],
      ["run_started", "model", { name: MARKUP }, "model"],
      ["tool_call_started", "time", Number.NaN, "time"],
    ];
    for (const [type, key, value, field] of cases) {
      const events = withField(type, key, value);
      const index = indexOf(events, type);
      let thrown: unknown;
      try {
        renderTimeline(events);
      } catch (error) {
        thrown = error;
      }
      expect(thrown, `${type}.${key}`).toMatchObject({ name: "TraceEventError", index, field });
      expect((thrown as Error).message, `${type}.${key}`).toContain(`"${field}"`);
    }
  });

  it("H16: a list of events that is not an iterable of objects is refused, naming the event", () => {
    expect(() => renderTimeline([null as unknown as TraceEvent])).toThrow(
      expect.objectContaining({ name: "TraceEventError", index: 0 }),
    );
  });

  it("O10: the sample trace is drawn", () => {
    const timeline = buildTimeline(sampleTrace());
    expect(timeline.callCount).toBe(7);
    expect(renderTimeline(sampleTrace())).toMatch(/^<!doctype html>/);
  });
});

describe("a run that fell back to another model (L10)", () => {
  it("L10: the call that failed ends at the switch, and the next call names its model", () => {
    const base = { sessionId: "s1", runId: "r1" } as const;
    const usage = {
      inputTokens: 3,
      outputTokens: 2,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
    const events: TraceEvent[] = [
      {
        type: "run_started",
        time: 0,
        ...base,
        parentToolUseId: null,
        agentName: "desk",
        model: "claude-sonnet-4-6",
        provider: "anthropic",
        tools: [],
      },
      { type: "model_request_started", time: 1, ...base, turn: 1, messageCount: 1, maxTokens: 64 },
      {
        type: "model_fallback",
        time: 5,
        ...base,
        turn: 1,
        fromModel: "claude-sonnet-4-6",
        fromProvider: "anthropic",
        toModel: "claude-haiku-4-5",
        toProvider: "anthropic",
        fallback: 1,
        message: "overloaded (529)",
        status: 529,
      },
      {
        type: "model_request_started",
        time: 6,
        ...base,
        turn: 1,
        messageCount: 1,
        maxTokens: 64,
        model: "claude-haiku-4-5",
      },
      {
        type: "model_request_finished",
        time: 9,
        ...base,
        turn: 1,
        usage,
        stopReason: "end_turn",
        toolCalls: 0,
        latencyMs: 3,
        retries: 0,
      },
      {
        type: "run_finished",
        time: 10,
        ...base,
        subtype: "success",
        numTurns: 1,
        durationMs: 10,
        usage,
      },
    ];
    const models = buildTimeline(events).runs[0]!.turns[0]!.models;
    expect(models).toEqual([
      {
        turn: 1,
        startedAt: 1,
        finishedAt: 5,
        failure: "overloaded (529) — fell back to claude-haiku-4-5",
        retries: [],
      },
      {
        turn: 1,
        startedAt: 6,
        model: "claude-haiku-4-5",
        finishedAt: 9,
        stopReason: "end_turn",
        toolCalls: 0,
        tokens: { input: 3, output: 2 },
        retries: [],
      },
    ]);
    const html = renderTimeline(events);
    expect(html).toContain("turn 1 · model claude-haiku-4-5 · ");
    expect(html).toContain("fell back to claude-haiku-4-5");
  });
});

describe("a run whose conversation was compacted (C3, C5)", () => {
  it("C5: the summary's call is a model bar of its turn, and the compaction a marker naming the tokens", () => {
    const base = { sessionId: "s1", runId: "r1" } as const;
    const usage = {
      inputTokens: 3,
      outputTokens: 2,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
    const events: TraceEvent[] = [
      {
        type: "run_started",
        time: 0,
        ...base,
        parentToolUseId: null,
        agentName: "a",
        model: "m",
        provider: "anthropic",
        tools: [],
      },
      {
        type: "model_request_started",
        time: 1,
        ...base,
        turn: 1,
        messageCount: 1,
        maxTokens: 64,
        purpose: "compaction",
      },
      {
        type: "model_request_finished",
        time: 3,
        ...base,
        turn: 1,
        usage,
        stopReason: "end_turn",
        toolCalls: 0,
        latencyMs: 2,
        retries: 0,
        purpose: "compaction",
      },
      {
        type: "compaction",
        time: 3,
        ...base,
        turn: 1,
        strategy: "compact",
        trigger: "threshold",
        messagesReplaced: 42,
        toolResultsCleared: 0,
        tokensBefore: 31204,
        tokensAfter: 2310,
      },
      { type: "model_request_started", time: 4, ...base, turn: 1, messageCount: 3, maxTokens: 64 },
      {
        type: "model_request_finished",
        time: 6,
        ...base,
        turn: 1,
        usage,
        stopReason: "end_turn",
        toolCalls: 0,
        latencyMs: 2,
        retries: 0,
      },
      {
        type: "run_finished",
        time: 7,
        ...base,
        subtype: "success",
        numTurns: 1,
        durationMs: 7,
        usage,
      },
    ];
    const timeline = buildTimeline(events);
    const run = timeline.runs[0]!;
    expect(run.markers).toEqual([
      {
        time: 3,
        label: "compacted 42 messages into a summary: 31204 → 2310 tokens",
        kind: "compaction",
      },
    ]);
    expect(run.turns[0]!.models).toHaveLength(2);
    expect(renderTimeline(events)).toContain("compacted 42 messages into a summary");
  });
});
