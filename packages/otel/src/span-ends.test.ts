import { describe, expect, it } from "vitest";
import { planJson } from "./run-spans.js";
import { SpanEnds } from "./span-ends.js";

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("SpanEnds: spans end together, once the event loop's turn is done (O6)", () => {
  it("O6: ends what finished in a turn after the turn, in the order it finished", async () => {
    const ended: string[] = [];
    const ends = new SpanEnds();
    ends.add({ end: () => ended.push("chat") });
    ends.add({ end: () => ended.push("tool") });
    expect(ended).toEqual([]);
    await nextTurn();
    expect(ended).toEqual(["chat", "tool"]);
  });

  it("O6: flush() ends everything waiting at once, and nothing twice", async () => {
    const ended: string[] = [];
    const ends = new SpanEnds();
    ends.add({ end: () => ended.push("a") });
    ends.flush();
    expect(ended).toEqual(["a"]);
    await nextTurn();
    expect(ended).toEqual(["a"]);
  });

  it("a span processor that throws costs its own span only", async () => {
    const ended: string[] = [];
    const ends = new SpanEnds();
    ends.add({
      end: () => {
        throw new Error("exporter down");
      },
    });
    ends.add({ end: () => ended.push("next") });
    await nextTurn();
    expect(ended).toEqual(["next"]);
  });

  it("the plan's JSON is JSON.stringify's, for every mode", () => {
    const plans = [
      { mode: "safe", maxConcurrency: 10, runs: [{ concurrent: true, indices: [0, 1, 2] }] },
      {
        mode: "safe",
        maxConcurrency: 3,
        runs: [
          { concurrent: true, indices: [0, 1] },
          { concurrent: false, indices: [2] },
          { concurrent: true, indices: [3] },
        ],
      },
      { mode: "sequential", maxConcurrency: 1, runs: [{ concurrent: false, indices: [0] }] },
      { mode: "all", maxConcurrency: 10, runs: [] },
    ] as const;
    for (const plan of plans) expect(planJson(plan)).toBe(JSON.stringify(plan));
  });
});
