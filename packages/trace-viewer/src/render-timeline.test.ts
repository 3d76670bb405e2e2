import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { HOSTILE_MARKUP, hostileTrace } from "./fixtures/hostile-trace.js";
import { runInChild } from "./fixtures/run-in-child.js";
import { sampleTrace } from "./fixtures/sample-trace.js";
import { chainTrace, repeatedPlanTrace, tangledParentTraces } from "./fixtures/stress-traces.js";
import { buildTimeline, renderTimeline } from "./index.js";

describe("renderTimeline's page", () => {
  it("H15: every string from the trace reaches the page as text, never as markup", () => {
    const html = renderTimeline(hostileTrace(), { title: HOSTILE_MARKUP, notes: [HOSTILE_MARKUP] });
    expect(html).not.toContain("<img");
    expect(html).toContain("&quot;&#39;&gt;&lt;img src=x onerror=window.__h15=1&gt;");
    // Every copy (whole, or cut short in a summary) is escaped: as text in the markup, and
    // with "<" written \u003c in the details' JSON. Take those out: no handler is left.
    const escaped = /(?:&lt;|\\u003c)img src=x onerror/g;
    expect(html.match(escaped)?.length).toBeGreaterThan(10);
    expect(html.replace(escaped, "")).not.toContain("onerror");
  });

  it("H15: the page's policy allows no inline handler and no script but its own (by hash)", () => {
    const html = renderTimeline(sampleTrace());
    const policy = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(html)?.[1];
    expect(policy).toBeDefined();
    const scriptSource = /script-src ([^;]+)/.exec(policy ?? "")?.[1]?.trim();
    expect(scriptSource).toMatch(/^'sha256-[A-Za-z0-9+/]+={0,2}'$/);
    expect(policy).not.toMatch(/script-src[^;]*unsafe/);
    expect(policy).toContain("default-src 'none'");
    // The hash is the hash of the page's one executable script.
    const scripts = [...html.matchAll(/<script(?: [^>]*)?>([\s\S]*?)<\/script>/g)];
    const executable = scripts.filter(
      (match) => !match[0].startsWith('<script type="application/json"'),
    );
    expect(executable).toHaveLength(1);
    const digest = createHash("sha256").update(executable[0]![1]!).digest("base64");
    expect(scriptSource).toBe(`'sha256-${digest}'`);
  });

  it("H16: times of ±1e308 end in a clear error, in bounded time and memory (in a child process)", async () => {
    const events = sampleTrace();
    const huge = events.map((event, index) =>
      index === 1 ? { ...event, time: -1e308 } : index === 2 ? { ...event, time: 1e308 } : event,
    );
    const outcome = await runInChild(
      `import { renderTimeline } from "@lattice/trace-viewer";
       try { renderTimeline(${JSON.stringify(huge)}); console.log("rendered"); }
       catch (error) { console.log(JSON.stringify({ name: error.name, index: error.index, field: error.field, message: error.message })); }`,
      { timeoutMs: 30_000, heapMb: 96 },
    );
    expect(outcome, outcome.stderr.slice(0, 400)).toMatchObject({ code: 0, timedOut: false });
    const result = JSON.parse(outcome.stdout.trim()) as Record<string, unknown>;
    expect(result).toMatchObject({ name: "TraceEventError", index: 1, field: "time" });
    expect(result.message).toMatch(/"time" must be a finite number of milliseconds within ±1e15/);
  }, 40_000);

  it("H16: notes are shown above the chart, as text", () => {
    const html = renderTimeline(sampleTrace(), { notes: ["The last line was cut <b>."] });
    expect(html).toMatch(/<p class="note"[^>]*>[^<]*The last line was cut &lt;b&gt;\./);
  });

  it("O10: an unknown option is refused", () => {
    expect(() => renderTimeline(sampleTrace(), { titel: "x" } as never)).toThrow(/titel/);
  });

  it("O10: options of the wrong type are refused with InvalidOptionError, naming the option", () => {
    const cases: [options: unknown, option: string][] = [
      [{ notes: "the last line was cut" }, "notes"],
      [{ notes: ["fine", 7] }, "notes"],
      [{ title: ["a", "b"] }, "title"],
      [{ title: 42 }, "title"],
    ];
    for (const [options, option] of cases) {
      expect(() => renderTimeline(sampleTrace(), options as never), option).toThrow(
        expect.objectContaining({ name: "InvalidOptionError", code: "invalid_option", option }),
      );
    }
    expect(renderTimeline(sampleTrace(), { title: undefined, notes: undefined })).toMatch(
      /^<!doctype html>/,
    );
  });

  it("H16: a plan that repeats one index thousands of times, with a long name, renders in bounded time and memory (in a child, 96 MB heap)", async () => {
    const outcome = await runInChild(
      `import { renderTimeline } from "@lattice/trace-viewer";
       import { repeatedPlanTrace } from "./src/fixtures/stress-traces.ts";
       const results = [];
       for (const shape of [
         { calls: 60, repeats: 1000, nameLength: 10000 },
         { calls: 1, repeats: 3000, nameLength: 1000, secondRunRepeats: 3000 },
       ]) {
         const events = repeatedPlanTrace(shape);
         const input = events.map((event) => JSON.stringify(event)).join("\\n").length;
         const before = performance.now();
         const html = renderTimeline(events);
         results.push({ input, html: html.length, ms: Math.round(performance.now() - before) });
       }
       console.log(JSON.stringify(results));`,
      { timeoutMs: 30_000, heapMb: 96 },
    );
    expect(outcome, outcome.stderr.slice(-600)).toMatchObject({ code: 0, timedOut: false });
    const results = JSON.parse(outcome.stdout.trim()) as {
      input: number;
      html: number;
      ms: number;
    }[];
    for (const result of results) {
      // Generous bounds: the fixed page is ~20 KB, and each input byte is drawn a few times.
      expect(result.html, JSON.stringify(result)).toBeLessThan(40_000 + 10 * result.input);
      expect(result.ms, JSON.stringify(result)).toBeLessThan(5_000);
    }
  }, 40_000);

  it("H16: a plan's repeated and unknown indices are ignored, with a note, and each wait reason stays short", () => {
    const events = repeatedPlanTrace({
      calls: 50,
      repeats: 1000,
      nameLength: 10_000,
      secondRunRepeats: 2,
      unknown: 3,
    });
    const batch = buildTimeline(events).runs[0]!.turns[0]!.batch!;
    expect(batch.plan!.runs.map((run) => run.indices)).toEqual([
      [0],
      Array.from({ length: 50 }, (_, index) => index + 1),
    ]);
    expect(batch.plan!.ignoredIndices).toBe(999 + 50 + 3);
    for (const call of batch.calls.slice(1)) {
      expect(call.waitReason).toMatch(/^waited for the calls before it: n+… \(c0\)$/);
      expect(call.waitReason!.length).toBeLessThan(200);
    }
    const html = renderTimeline(events);
    expect(html).toContain(
      "the plan names 1052 indices that are repeated or name no call of this batch: ignored",
    );
    // The plan's line names call 0 once.
    expect(html.match(/n{10000}/g)?.length).toBeLessThanOrEqual(4);
  });

  it("H16: runs nested thousands deep are drawn without a stack overflow, and the page's size grows with the events only (in a child)", async () => {
    const outcome = await runInChild(
      `import { renderTimeline } from "@lattice/trace-viewer";
       import { syntheticTrace } from "./bench/synthetic-trace.mjs";
       import { chainTrace, nestedTrace } from "./src/fixtures/stress-traces.ts";
       const shapes = {
         nested300: nestedTrace(300),
         nested3000: nestedTrace(3000),
         nested6000: nestedTrace(6000),
         wide: syntheticTrace(2000),
         chain: chainTrace(2000),
       };
       const results = {};
       for (const [name, events] of Object.entries(shapes)) {
         try {
           const before = performance.now();
           const html = renderTimeline(events);
           results[name] = { perEvent: html.length / events.length, ms: Math.round(performance.now() - before) };
         } catch (error) {
           results[name] = { error: String(error.message).slice(0, 200) };
         }
       }
       console.log(JSON.stringify(results));`,
      { timeoutMs: 60_000, heapMb: 128 },
    );
    expect(outcome, outcome.stderr.slice(-600)).toMatchObject({ code: 0, timedOut: false });
    const results = JSON.parse(outcome.stdout.trim()) as Record<
      string,
      { perEvent?: number; ms?: number; error?: string }
    >;
    for (const [name, result] of Object.entries(results)) {
      expect(result.error, name).toBeUndefined();
      // A page of a few kilobytes per event at most, whatever the shape.
      expect(result.perEvent, name).toBeLessThan(2_000);
      expect(result.ms, name).toBeLessThan(10_000);
    }
    // Ten times as deep: about the same size per event (it was ten times as large).
    expect(results.nested3000!.perEvent!).toBeLessThan(results.nested300!.perEvent! * 1.25);
    expect(results.nested6000!.perEvent!).toBeLessThan(results.nested300!.perEvent! * 1.25);
  }, 70_000);

  it("H16: a run whose parents form a cycle, name its own call or a call not in the trace is drawn at top level, with a note: no call is hidden", () => {
    for (const [shape, events] of Object.entries(tangledParentTraces())) {
      const timeline = buildTimeline(events);
      const html = renderTimeline(events);
      const calls = events.filter((event) => event.type === "tool_call_queued").length;
      const runs = new Set(events.map((event) => event.runId)).size;
      expect(timeline.callCount, shape).toBe(calls);
      expect(html.match(/class="bar call /g)?.length ?? 0, shape).toBe(calls);
      expect(html.match(/class="row run-head/g)?.length ?? 0, shape).toBe(runs);
      expect(html, shape).toMatch(/drawn at top level/);
    }
  });

  it("O8: the summary counts are written with the right plural", () => {
    const events = sampleTrace();
    const html = renderTimeline(events);
    expect(html).toContain("1 ↻ retry");
    expect(html).not.toContain("1 ↻ retries");
    const chain = renderTimeline(chainTrace(3));
    expect(chain).toContain("3 tool calls · 1 model request");
  });
});
