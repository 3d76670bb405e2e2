import { describe, expect, it } from "vitest";
import {
  type BarTimes,
  layoutBars,
  MAX_BATCH_SHIFT_PERCENT,
  MIN_BAR_PERCENT,
} from "./layout-bars.js";

const window = { from: 0, to: 10_000 };

describe("layoutBars", () => {
  it("O8: a bar shorter than the minimum is drawn the minimum wide, from its true start", () => {
    const { boxes } = layoutBars([{ from: 1000, to: 1000.3 }], window);
    expect(boxes[0]!.left).toBeCloseTo(10);
    expect(boxes[0]!.right - boxes[0]!.left).toBeCloseTo(MIN_BAR_PERCENT);
  });

  it("O8: calls of a batch that ran one after another are drawn one after another", () => {
    const batch = {};
    const bars: BarTimes[] = [
      { from: 3000, started: 3000.05, to: 3000.35, batch, order: 0 },
      { from: 3000, started: 3000.4, to: 3000.7, batch, order: 1 },
      { from: 3000, started: 3000.75, to: 3001.2, batch, order: 2 },
    ];
    const { boxes } = layoutBars(bars, window);
    for (const [index, box] of boxes.entries()) {
      expect(box.left, `bar ${index} starts where it was queued`).toBeCloseTo(30);
      expect(box.runRight - box.runLeft).toBeGreaterThanOrEqual(MIN_BAR_PERCENT - 1e-9);
      if (index > 0) expect(box.runLeft).toBeGreaterThanOrEqual(boxes[index - 1]!.runRight - 1e-9);
    }
    // Moved by no more than a minimum width per call before it.
    expect(boxes[2]!.runLeft - 30.0075).toBeLessThanOrEqual(2 * MIN_BAR_PERCENT + 1e-9);
  });

  it("O8: calls that overlapped stay overlapping, and other batches are not moved", () => {
    const batch = {};
    const other = {};
    const bars: BarTimes[] = [
      { from: 0, started: 0, to: 2000, batch, order: 0 },
      { from: 0, started: 1000, to: 3000, batch, order: 1 },
      { from: 100, started: 100.1, to: 100.2, batch: other, order: 0 },
      { from: 100, started: 100.3, to: 100.4, batch: other, order: 1 },
      { from: 1999, to: 2000 },
    ];
    const { boxes } = layoutBars(bars, window);
    expect(boxes[1]!.runLeft).toBeCloseTo(10);
    expect(boxes[1]!.runLeft).toBeLessThan(boxes[0]!.runRight);
    expect(boxes[2]!.runLeft).toBeCloseTo(1.001);
    expect(boxes[3]!.runLeft).toBeGreaterThanOrEqual(boxes[2]!.runRight - 1e-9);
    expect(boxes[4]!.left).toBeCloseTo(19.99);
  });

  it("O8: the window widens so that bars at the very end fit", () => {
    const batch = {};
    const bars: BarTimes[] = Array.from({ length: 5 }, (_, index) => ({
      from: 9999,
      started: 9999 + index * 0.2,
      to: 9999 + index * 0.2 + 0.1,
      batch,
      order: index,
    }));
    const laid = layoutBars(bars, window);
    expect(laid.window.to).toBeGreaterThan(window.to);
    expect(Math.max(...laid.boxes.map((box) => box.right))).toBeLessThanOrEqual(100.5);
  });

  it("O8: a long chain of sub-millisecond calls stays near its true place: the axis ends near the trace's end and no bar goes past it", () => {
    // A 10 s model request, then 120 calls of 0.3 ms one after another; the trace ends at 10.1 s.
    const batch = {};
    const bars: BarTimes[] = [
      { from: 0, to: 10_000 },
      ...Array.from({ length: 120 }, (_, index) => ({
        from: 10_000,
        started: 10_000 + index * 0.5,
        to: 10_000 + index * 0.5 + 0.3,
        batch,
        order: index,
      })),
    ];
    const laid = layoutBars(bars, { from: 0, to: 10_100 });
    expect(laid.window.to).toBeLessThanOrEqual(10_100 * 1.1);
    for (const box of laid.boxes) expect(box.right).toBeLessThanOrEqual(100 + 1e-9);
    // The model request keeps (nearly) its true width: 10 s of 10.1 s.
    const model = laid.boxes[0]!;
    expect(model.right - model.left).toBeGreaterThan(90);
    // Every call is drawn within the bound of its true place, and still in order.
    const at = (time: number) =>
      ((time - laid.window.from) / (laid.window.to - laid.window.from)) * 100;
    for (const [index, box] of laid.boxes.slice(1).entries()) {
      const bar = bars[index + 1]!;
      expect(box.runLeft).toBeGreaterThanOrEqual(at(bar.started!) - 1e-9);
      expect(box.runRight - at(bar.to)).toBeLessThanOrEqual(MAX_BATCH_SHIFT_PERCENT + 1e-9);
      if (index > 0) expect(box.runLeft).toBeGreaterThanOrEqual(laid.boxes[index]!.runRight - 1e-9);
    }
  });

  it("O8: a bar's wait part ends where the call really started; the rest of a moved bar is not a wait", () => {
    const batch = {};
    const bars: BarTimes[] = [
      { from: 1000, started: 1000, to: 1000.3, batch, order: 0 },
      { from: 1000, started: 1000.5, to: 1000.8, batch, order: 1 },
    ];
    const { boxes } = layoutBars(bars, window);
    const second = boxes[1]!;
    // Moved right, past the first call's drawn end, but its wait is the true 0.5 ms.
    expect(second.runLeft).toBeGreaterThanOrEqual(boxes[0]!.runRight - 1e-9);
    expect(second.waitRight - second.left).toBeCloseTo(0.005, 6);
  });
});
