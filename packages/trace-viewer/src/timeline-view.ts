import type { TimelineModelCall } from "./build-timeline.js";
import type { BarBox, TimeWindow } from "./layout-bars.js";
import { escapeHtml, formatTick } from "./timeline-text.js";

/** What one view of the chart draws with: its window, the bars' boxes, and the time 0 of its labels. */
export interface View {
  /** The time the track shows. */
  readonly window: TimeWindow;
  /** Each bar's box in this view, by bar number. */
  readonly boxes: readonly BarBox[];
  /** The time the view's labels count from. */
  readonly origin: number;
}

/** Maps a time to a percentage of the view's track. */
export function at(view: View, time: number): number {
  const span = Math.max(view.window.to - view.window.from, 1e-9);
  return ((time - view.window.from) / span) * 100;
}

/** The axis of a window: tick labels (time since `origin`) and the grid's step, in percent. */
export function axisTicks(
  window: TimeWindow,
  origin: number,
): { html: string; grid: string; ticks: [number, string][] } {
  const span = Math.max(window.to - window.from, 1e-9);
  const rough = span / 10;
  const power = 10 ** Math.floor(Math.log10(rough));
  const step = ([1, 2, 5, 10].find((factor) => factor * power >= rough) ?? 10) * power;
  const count = Math.min(Math.floor(span / step + 1e-9), 50);
  const ticks: [number, string][] = [];
  for (let k = 0; k <= count; k++) {
    ticks.push([
      round((k * step * 100) / span, 3),
      formatTick(k * step + window.from - origin, step),
    ]);
  }
  return {
    html: ticks
      .map(
        ([left, label]) => `<span class="tick" style="left:${left}%">${escapeHtml(label)}</span>`,
      )
      .join(""),
    grid: ((step / span) * 100).toFixed(4),
    ticks,
  };
}

/** A number rounded to `decimals` decimals, for compact JSON. */
export function round(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

/** A model bar in a view: its left edge and width, then each retry's place in the bar (percent). */
export function modelGeometry(
  model: TimelineModelCall,
  box: BarBox,
  view: View,
): [number, number, ...number[]] {
  const width = Math.max(box.right - box.left, 1e-9);
  return [
    box.left,
    box.right - box.left,
    ...model.retries.map((retry) => ((at(view, retry.time) - box.left) / width) * 100),
  ];
}

/**
 * A call bar in a view: left edge and width (percent of the track), then its wait's width, its
 * run part's left and width and its late part's left and width, in percent of the bar (a
 * wait's left is always 0). Between the wait's end and the run part's start lies the stretch
 * a call is drawn later than it ran, to keep its batch's order: no part, not a wait.
 */
export function callGeometry(
  box: BarBox,
): [number, number, number, number, number, number, number] {
  const width = Math.max(box.right - box.left, 1e-9);
  const rel = (value: number) => ((value - box.left) / width) * 100;
  return [
    box.left,
    box.right - box.left,
    rel(box.waitRight),
    rel(box.runLeft),
    rel(box.runRight) - rel(box.runLeft),
    rel(box.runRight),
    rel(box.right) - rel(box.runRight),
  ];
}
