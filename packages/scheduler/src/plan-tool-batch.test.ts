import { type AnyToolDefinition, tool } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { isConcurrencySafeCall, planToolBatch, type ToolBatchPlanCall } from "./plan-tool-batch.js";

const schema = z.object({ path: z.string() });
const handler = async () => ({ content: "ok" });
const read = tool("read", "Read", schema, handler, { isConcurrencySafe: () => true });
const write = tool("write", "Write", schema, handler);
const maybe = tool("maybe", "Maybe", schema, handler, {
  isConcurrencySafe: (input) => !input.path.startsWith("/etc"),
});
const throwing = tool("throwing", "Throws", schema, handler, {
  isConcurrencySafe: () => {
    throw new Error("rule failed");
  },
});
const truthy = tool("truthy", "Truthy", schema, handler, {
  isConcurrencySafe: (() => 1) as unknown as () => boolean,
});

const call = (definition: AnyToolDefinition, path = "/a"): ToolBatchPlanCall => ({
  definition,
  input: { path },
});

const runsOf = (calls: ToolBatchPlanCall[], mode: "safe" | "all" | "sequential" = "safe") =>
  planToolBatch(calls, { mode, maxConcurrency: 10 }).runs.map((run) => [
    run.concurrent ? "concurrent" : "alone",
    run.indices,
  ]);

describe("planToolBatch", () => {
  it("T15: splits a batch into maximal runs of safe calls, each unsafe call alone", () => {
    expect(
      runsOf([call(read), call(read), call(write), call(read), call(write), call(write)]),
    ).toEqual([
      ["concurrent", [0, 1]],
      ["alone", [2]],
      ["concurrent", [3]],
      ["alone", [4]],
      ["alone", [5]],
    ]);
  });

  it("T15: no rule, a false rule, a throwing rule, a non-true value, invalid input, an unknown tool are unsafe", () => {
    const cases: ToolBatchPlanCall[] = [
      call(write),
      call(maybe, "/etc/passwd"),
      call(throwing),
      call(truthy),
      { definition: read, input: { path: 1 }, error: new Error("invalid") },
      { input: { path: "/a" }, error: new Error("unknown") },
      {},
    ];
    for (const unsafe of cases) {
      expect(isConcurrencySafeCall(unsafe)).toBe(false);
      expect(runsOf([call(read), unsafe, call(read)])).toEqual([
        ["concurrent", [0]],
        ["alone", [1]],
        ["concurrent", [2]],
      ]);
    }
  });

  it("T13: the rule is evaluated on each call's validated input", () => {
    const seen: unknown[] = [];
    const spy = tool("spy", "Spy", schema, handler, {
      isConcurrencySafe: (input) => {
        seen.push(input);
        return input.path !== "/unsafe";
      },
    });
    expect(runsOf([call(spy, "/a"), call(spy, "/b"), call(spy, "/unsafe")])).toEqual([
      ["concurrent", [0, 1]],
      ["alone", [2]],
    ]);
    expect(seen).toEqual([{ path: "/a" }, { path: "/b" }, { path: "/unsafe" }]);
  });

  it('T18: "all" makes one concurrent run, "sequential" one run per call', () => {
    const calls = [call(read), call(write), call(throwing), {}];
    expect(runsOf(calls, "all")).toEqual([["concurrent", [0, 1, 2, 3]]]);
    expect(runsOf(calls, "sequential")).toEqual([
      ["alone", [0]],
      ["alone", [1]],
      ["alone", [2]],
      ["alone", [3]],
    ]);
  });

  it("T18: the rule is only consulted in safe mode", () => {
    let asked = 0;
    const counted = tool("counted", "Counted", schema, handler, {
      isConcurrencySafe: () => {
        asked++;
        return true;
      },
    });
    planToolBatch([call(counted)], { mode: "all", maxConcurrency: 2 });
    planToolBatch([call(counted)], { mode: "sequential", maxConcurrency: 2 });
    expect(asked).toBe(0);
  });

  it("T12: an empty batch has no runs; the plan carries the settings", () => {
    expect(planToolBatch([], { mode: "all", maxConcurrency: 3 })).toEqual({
      mode: "all",
      maxConcurrency: 3,
      runs: [],
    });
    expect(planToolBatch([call(read)]).maxConcurrency).toBe(10);
  });
});
