import type { TimelineModelCall } from "./build-timeline.js";
import { type BarTimes, layoutBars } from "./layout-bars.js";
import type { TimelineRow, ZoomBlock } from "./timeline-rows.js";
import { formatDuration, formatOffset } from "./timeline-text.js";
import { axisTicks, callGeometry, modelGeometry, round, type View } from "./timeline-view.js";

/** One zoomed view, for the page's script: what it shows and where each bar goes. */
export interface ZoomView {
  /** `"turn"` or `"calls"` (see {@link ZoomBlock}). */
  readonly kind: ZoomBlock["kind"];
  /** The caption. */
  readonly title: string;
  /** The rows shown, as ranges: first, one past the last, ... */
  readonly rows: readonly number[];
  /** The bars shown, as ranges like `rows`. */
  readonly bars: readonly number[];
  /** The axis: each tick's place (percent) and label. */
  readonly ticks: readonly [number, string][];
  /** The grid's step, in percent of the track. */
  readonly grid: string;
  /** Per bar shown, in order: left and width (percent of the track), then its parts (see callGeometry, modelGeometry). */
  readonly boxes: readonly number[][];
}

/**
 * Each block's zoomed view: the same layout (minimum widths, calls of a batch one after
 * another) over the block's own time, from its first bar's start to its last bar's end. Each
 * bar is in two blocks at most, so the views' total size grows with the bars.
 */
export function zoomViews(
  blocks: readonly ZoomBlock[],
  bars: readonly BarTimes[],
  rows: readonly TimelineRow[],
  start: number,
): ZoomView[] {
  const modelOf = new Map<number, TimelineModelCall>();
  for (const row of rows) if (row.kind === "model") modelOf.set(row.bar, row.model);
  return blocks.map((block) => {
    const shown: number[] = [];
    for (let index = 0; index < block.bars.length; index += 2) {
      for (let bar = block.bars[index]!; bar < block.bars[index + 1]!; bar++) shown.push(bar);
    }
    const own = shown.map((bar) => bars[bar]!);
    let from = Number.POSITIVE_INFINITY;
    let to = Number.NEGATIVE_INFINITY;
    for (const bar of own) {
      from = Math.min(from, bar.from);
      to = Math.max(to, bar.late ?? bar.to, bar.to);
    }
    const laid = layoutBars(own, { from, to: Math.max(to, from + 1e-3) });
    const view: View = { window: laid.window, boxes: laid.boxes, origin: from };
    const axis = axisTicks(laid.window, from);
    const what =
      block.kind === "calls"
        ? `The calls of turn ${block.turn}, ${block.nested ? "child run" : "run"} ${block.runId}`
        : `${block.nested ? "Child run" : "Run"} ${block.runId}, turn ${block.turn}`;
    const children = block.hasChildren
      ? " Child runs are not shown here: zoom into their own turns."
      : "";
    return {
      kind: block.kind,
      title: `${what}: ${formatOffset(from - start)} to ${formatOffset(to - start)} (${formatDuration(to - from)}; the axis counts from ${block.kind === "calls" ? "the first call's queueing" : "the turn's start"}).${children}`,
      rows: block.rows,
      bars: block.bars,
      ticks: axis.ticks,
      grid: axis.grid,
      boxes: laid.boxes.map((box, index) => {
        const model = modelOf.get(shown[index]!);
        const geometry = model !== undefined ? modelGeometry(model, box, view) : callGeometry(box);
        return geometry.map((value) => round(value, 2));
      }),
    };
  });
}
