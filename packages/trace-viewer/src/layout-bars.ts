/**
 * The true times of one bar of the chart, on the trace's clock (milliseconds): a model request
 * (`from` → `to`), or a tool call (`from` = queued, `started`, `to` = finished, `late`).
 */
export interface BarTimes {
  /** Where the bar starts: the request sent, or the call queued. */
  readonly from: number;
  /** When the call's handler started; absent for model requests and calls that never ran. */
  readonly started?: number | undefined;
  /** When it ended (its result known); equal to `from` or `started` when the trace ends first. */
  readonly to: number;
  /** When a handler the batch gave up on settled after all. */
  readonly late?: number | undefined;
  /**
   * The calls of one batch share a key: a call that started after another of its batch had
   * finished is drawn after it. `undefined` for model requests.
   */
  readonly batch?: object | undefined;
  /** The call's position in its batch, to order calls that start at the same instant. */
  readonly order?: number | undefined;
}

/** Where a bar is drawn, in percent of the track: its box, its wait and its running part. */
export interface BarBox {
  /** The bar's left edge: its true start (queued, or sent). */
  readonly left: number;
  /**
   * Where its wait in the queue ends: the call's true start. For a call drawn later than it
   * ran (to keep its batch's order), the part from here to `runLeft` is that move, not a wait.
   * Equal to `left` for a model request; to `right` for a call that never ran.
   */
  readonly waitRight: number;
  /** Where its running part starts (for a call that never ran: its right edge). */
  readonly runLeft: number;
  /** Where its running part ends. */
  readonly runRight: number;
  /** The bar's right edge (past the running part when a handler settled late). */
  readonly right: number;
}

/** The window of time a view shows: the track's left and right edges. */
export interface TimeWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * The narrowest part a bar is drawn with, in percent of the track: 0.9 % is about 4.3 px on the
 * narrowest track the page keeps (480 px), 7 px on an 800 px one. A call or a model request
 * shorter than that is drawn this wide (but see {@link MAX_BATCH_SHIFT_PERCENT}).
 */
export const MIN_BAR_PERCENT = 0.9;

/**
 * How far, in percent of the track, the calls of one batch may be drawn past their true ends
 * by the minimum widths and the order kept between them. A long chain of very short calls
 * (120 calls of 0.3 ms, one after another) would otherwise push the last ones a whole track
 * later: for such a batch the minimum width shrinks, as little as needed, so that no call of it
 * is drawn more than this much later than it ended. Zoom into the batch to read its calls.
 */
export const MAX_BATCH_SHIFT_PERCENT = 5;

/**
 * Places bars on a track showing `window`: every bar starts at its true start; its running
 * part (or, for a call that never ran, the whole mark) is at least {@link MIN_BAR_PERCENT}
 * wide; and a call that started after another call of its batch had finished is drawn after
 * that call's drawn end, so calls that ran one after another never look simultaneous, however
 * short they were. Such a call is drawn later than it ran, by at most
 * {@link MAX_BATCH_SHIFT_PERCENT} of the track (the batch's minimum width shrinks when its chain
 * is too long for that); bars of other batches and model requests are never moved. When bars
 * reach past the right edge, the window is widened so that they fit: no box ends past 100 %.
 *
 * @param bars - The bars, in the order of the rows.
 * @param window - The time the track shows.
 * @returns Each bar's box, in the same order, and the window finally used.
 */
export function layoutBars(
  bars: readonly BarTimes[],
  window: TimeWindow,
): { boxes: BarBox[]; window: TimeWindow } {
  let current = window;
  let boxes = placeBars(bars, current);
  for (let round = 0; round < 3; round++) {
    const right = reach(boxes);
    if (right <= 100.05) break;
    const span = Math.max(current.to - current.from, 1e-9);
    current = { from: current.from, to: current.from + (span * right) / 100 };
    boxes = placeBars(bars, current);
  }
  // Still past the edge after three rounds (minimum widths at the very end): scale the whole
  // drawing down, as a window that much wider would draw it.
  const right = reach(boxes);
  if (right > 100) {
    const scale = 100 / right;
    const span = Math.max(current.to - current.from, 1e-9);
    current = { from: current.from, to: current.from + span / scale };
    boxes = boxes.map((box) => ({
      left: box.left * scale,
      waitRight: box.waitRight * scale,
      runLeft: box.runLeft * scale,
      runRight: box.runRight * scale,
      right: box.right * scale,
    }));
  }
  return { boxes, window: current };
}

/**
 * How far right the bars reach, in percent: a box's right edge, or a minimum width past its
 * running part's start (the page draws no part narrower than a few pixels).
 */
function reach(boxes: readonly BarBox[]): number {
  let right = 100;
  for (const box of boxes) {
    const end = Math.max(box.right, box.runLeft + MIN_BAR_PERCENT);
    if (end > right) right = end;
  }
  return right;
}

function placeBars(bars: readonly BarTimes[], window: TimeWindow): BarBox[] {
  const span = Math.max(window.to - window.from, 1e-9);
  const at = (time: number) => ((time - window.from) / span) * 100;
  const boxes: BarBox[] = new Array(bars.length);
  /** The bars that ran a handler, by batch: they are ordered after each other. */
  const batches = new Map<object, number[]>();
  for (let index = 0; index < bars.length; index++) {
    const bar = bars[index]!;
    const left = at(bar.from);
    if (bar.started !== undefined && bar.batch !== undefined) {
      let members = batches.get(bar.batch);
      if (members === undefined) {
        members = [];
        batches.set(bar.batch, members);
      }
      members.push(index);
      continue;
    }
    // A model request (no batch: all of it runs), or a call that never ran (all of it is its
    // wait): one part, at least the minimum wide.
    const right = left + Math.max(at(bar.to) - left, MIN_BAR_PERCENT);
    const edge = bar.batch === undefined ? left : right;
    boxes[index] = { left, waitRight: edge, runLeft: edge, runRight: right, right };
  }
  for (const members of batches.values()) placeBatch(bars, members, at, boxes);
  return boxes;
}

/**
 * The calls of one batch that ran, in the order they started: each one's running part starts
 * no earlier than the drawn end of every call that had finished when it started. The minimum
 * width is {@link MIN_BAR_PERCENT}, or less when that would draw a call more than
 * {@link MAX_BATCH_SHIFT_PERCENT} past its true end: then the largest that keeps within it
 * (found by bisection; a width of 0 moves nothing).
 */
function placeBatch(
  bars: readonly BarTimes[],
  members: number[],
  at: (time: number) => number,
  boxes: BarBox[],
): void {
  const startOf = (index: number) => bars[index]!.started as number;
  const byStart = [...members].sort(
    (a, b) =>
      startOf(a) - startOf(b) ||
      bars[a]!.to - bars[b]!.to ||
      (bars[a]!.order ?? 0) - (bars[b]!.order ?? 0),
  );
  const position = new Map(byStart.map((index, at) => [index, at]));
  // The same calls by end, in the same order where ends are equal: a call placed before
  // another never comes after it here.
  const byEnd = [...byStart].sort((a, b) => bars[a]!.to - bars[b]!.to);
  /** Places the calls with this minimum width; returns how far past its true end a call went. */
  const place = (minimum: number): number => {
    let done = 0;
    let after = Number.NEGATIVE_INFINITY;
    let shift = 0;
    for (let order = 0; order < byStart.length; order++) {
      const index = byStart[order]!;
      const bar = bars[index]!;
      const started = at(bar.started as number);
      while (done < byEnd.length) {
        const previous = byEnd[done]!;
        if (bars[previous]!.to > (bar.started as number) || position.get(previous)! >= order) break;
        after = Math.max(after, boxes[previous]!.runRight);
        done++;
      }
      const end = at(bar.to);
      const runLeft = Math.max(started, after);
      const runRight = runLeft + Math.max(end - started, minimum);
      const late = bar.late === undefined ? 0 : Math.max(at(bar.late) - end, 0);
      boxes[index] = {
        left: at(bar.from),
        waitRight: started,
        runLeft,
        runRight,
        right: runRight + late,
      };
      if (runRight - end > shift) shift = runRight - end;
    }
    return shift;
  };
  if (place(MIN_BAR_PERCENT) <= MAX_BATCH_SHIFT_PERCENT) return;
  let low = 0;
  let high = MIN_BAR_PERCENT;
  for (let step = 0; step < 20; step++) {
    const middle = (low + high) / 2;
    if (place(middle) <= MAX_BATCH_SHIFT_PERCENT) low = middle;
    else high = middle;
  }
  place(low);
}
