import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { WaitSignals } from "./wait-signals.js";

describe("the signals of a queue's waits (D3)", () => {
  it("D3: 20,000 waits opened and settled leave no wait open and no listener on the caller's signal", () => {
    const waits = new WaitSignals();
    const caller = new AbortController().signal;
    for (let n = 0; n < 20_000; n++) {
      const wait = waits.open(n % 2 === 0 ? caller : undefined);
      expect(wait.signal.aborted).toBe(false);
      wait.release();
    }
    expect(waits.size).toBe(0);
    expect(getEventListeners(caller, "abort")).toHaveLength(0);
  });

  it("D3: closeAll() aborts every open wait with its reason, and a wait opened afterwards at once; the caller's signal aborts its own wait only", () => {
    const waits = new WaitSignals();
    const caller = new AbortController();
    const mine = waits.open(caller.signal);
    const others = Array.from({ length: 30 }, () => waits.open(undefined));
    expect(waits.size).toBe(31);
    caller.abort(new Error("caller"));
    expect(mine.signal.aborted).toBe(true);
    expect(others.some((wait) => wait.signal.aborted)).toBe(false);
    const reason = new Error("closed");
    waits.closeAll(reason);
    expect(others.every((wait) => wait.signal.reason === reason)).toBe(true);
    expect(waits.size).toBe(0);
    expect(waits.open(undefined).signal.reason).toBe(reason);
    expect(waits.size).toBe(0);
  });
});
