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
