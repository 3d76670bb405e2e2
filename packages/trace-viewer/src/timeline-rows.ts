import type {
  Timeline,
  TimelineBatch,
  TimelineCall,
  TimelineModelCall,
  TimelineRun,
  TimelineTurn,
} from "./build-timeline.js";
import type { BarTimes } from "./layout-bars.js";

/**
 * One row of the page, in page order, with its run's nesting depth (0 for a top-level run).
 * Bars are numbered in row order (`bar`).
 */
export type TimelineRow =
  | { readonly kind: "run"; readonly run: TimelineRun; readonly depth: number }
  | {
      readonly kind: "model";
      readonly model: TimelineModelCall;
      readonly depth: number;
      readonly bar: number;
    }
  | { readonly kind: "batch"; readonly batch: TimelineBatch; readonly depth: number }
  | {
      readonly kind: "call";
      readonly call: TimelineCall;
      readonly depth: number;
      readonly bar: number;
    };

/**
 * Something the page can zoom into: a turn (its model requests and calls) or the calls of a
 * turn's batch alone, each on its own time. Only the turn's own rows: the child runs of its
 * calls are zoomed into by their own turns, so each row is in two zoomed views at most and
 * their total size grows with the rows, however deep runs nest.
 */
export interface ZoomBlock {
  /** `"turn"`: the turn's model requests and calls; `"calls"`: its calls alone (two or more, after a model request). */
  readonly kind: "turn" | "calls";
  /** The run the turn belongs to. */
  readonly runId: string;
  /** The turn number. */
  readonly turn: number;
  /** Whether the run is a child run of an agent tool. */
  readonly nested: boolean;
  /** Whether calls of the turn started child runs (not shown in the zoomed view). */
  readonly hasChildren: boolean;
  /** The rows shown, as ranges: first, one past the last, first, one past the last, ... */
  readonly rows: readonly number[];
  /** The bars shown, as ranges like `rows`. */
  readonly bars: readonly number[];
  /** The row that holds its zoom button. */
  readonly buttonRow: number;
}

/** The page's rows, the true times of its bars (indexed by bar number), and its zoom blocks. */
export interface TimelineRows {
  readonly rows: readonly TimelineRow[];
  readonly bars: readonly BarTimes[];
  readonly blocks: readonly ZoomBlock[];
  /** The deepest nesting of a run (0 when no run is nested). */
  readonly maxDepth: number;
}

/** What one run's walk hands the loop of {@link timelineRows}: a row, a child run, or a turn's end. */
type Step =
  | { readonly kind: "row"; readonly row: TimelineRow; readonly times?: BarTimes }
  | { readonly kind: "child"; readonly run: TimelineRun }
  | { readonly kind: "turn"; readonly turn: TimelineTurn; readonly end: boolean };

/** A run's rows in page order, with its calls' child runs in between (the loop descends into them). */
function* walkRun(run: TimelineRun, depth: number, end: number): Generator<Step> {
  yield { kind: "row", row: { kind: "run", run, depth } };
  for (const turn of run.turns) {
    yield { kind: "turn", turn, end: false };
    for (const model of turn.models) {
      yield {
        kind: "row",
        row: { kind: "model", model, depth, bar: -1 },
        times: { from: model.startedAt, to: model.finishedAt ?? model.startedAt },
      };
    }
    const batch = turn.batch;
    if (batch !== undefined) {
      if (
        (batch.policy !== undefined && !batch.policy.allowed) ||
        (batch.plan !== undefined && (batch.plan.runs.length > 0 || batch.plan.ignoredIndices > 0))
      ) {
        yield { kind: "row", row: { kind: "batch", batch, depth } };
      }
      for (const call of batch.calls) {
        yield {
          kind: "row",
          row: { kind: "call", call, depth, bar: -1 },
          times: callTimes(call, batch, end),
        };
        for (const child of call.children) yield { kind: "child", run: child };
      }
    }
    yield { kind: "turn", turn, end: true };
  }
}

/** Ranges of consecutive numbers, grown one number at a time. */
class Ranges {
  readonly list: number[] = [];
  add(value: number): void {
    const last = this.list.length - 1;
    if (last > 0 && this.list[last] === value) this.list[last] = value + 1;
    else this.list.push(value, value + 1);
  }
  get empty(): boolean {
    return this.list.length === 0;
  }
}

/** The turn a run's walk is in: its rows and bars so far. */
interface OpenTurn {
  readonly turn: TimelineTurn;
  readonly rows: Ranges;
  readonly modelBars: Ranges;
  readonly callRows: Ranges;
  readonly callBars: Ranges;
  firstModelRow: number;
  firstCallRow: number;
  hasChildren: boolean;
}

/**
 * Lays a timeline out as the page's rows: each run's header, then per turn its model requests,
 * its plan line (and a batch refusal) and its calls, each call followed by the child runs it
 * started, one level deeper. Numbers the bars in row order and records what each turn's zoom
 * buttons show. Walks the runs with a stack of its own, not by recursion: runs nested
 * thousands deep are laid out like any other.
 *
 * @param timeline - From {@link buildTimeline}.
 */
export function timelineRows(timeline: Timeline): TimelineRows {
  const rows: TimelineRow[] = [];
  const bars: BarTimes[] = [];
  const blocks: ZoomBlock[] = [];
  let maxDepth = 0;
  for (const root of timeline.runs) {
    const walks = [{ steps: walkRun(root, 0, timeline.end), run: root, depth: 0 }];
    const open: (OpenTurn | undefined)[] = [undefined];
    while (walks.length > 0) {
      const level = walks.length - 1;
      const walk = walks[level]!;
      const next = walk.steps.next();
      if (next.done) {
        walks.pop();
        open.pop();
        continue;
      }
      const step = next.value;
      if (step.kind === "child") {
        open[level]!.hasChildren = true;
        const depth = walk.depth + 1;
        if (depth > maxDepth) maxDepth = depth;
        walks.push({ steps: walkRun(step.run, depth, timeline.end), run: step.run, depth });
        open.push(undefined);
      } else if (step.kind === "turn") {
        if (!step.end) {
          open[level] = {
            turn: step.turn,
            rows: new Ranges(),
            modelBars: new Ranges(),
            callRows: new Ranges(),
            callBars: new Ranges(),
            firstModelRow: -1,
            firstCallRow: -1,
            hasChildren: false,
          };
        } else {
          closeTurn(open[level]!, walk.run, walk.depth, blocks);
          open[level] = undefined;
        }
      } else {
        const at = rows.length;
        let row = step.row;
        const turn = open[level];
        if (step.times !== undefined) {
          row = { ...row, bar: bars.length } as TimelineRow;
          if (row.kind === "model") {
            turn?.modelBars.add(bars.length);
            if (turn !== undefined && turn.firstModelRow < 0) turn.firstModelRow = at;
          } else {
            turn?.callBars.add(bars.length);
            turn?.callRows.add(at);
            if (turn !== undefined && turn.firstCallRow < 0) turn.firstCallRow = at;
          }
          bars.push(step.times);
        } else if (row.kind === "batch" && turn !== undefined) {
          turn.callRows.add(at);
          turn.firstCallRow = at;
        }
        if (row.kind !== "run") turn?.rows.add(at);
        rows.push(row);
      }
    }
  }
  return { rows, bars, blocks, maxDepth };
}

/**
 * The zoom blocks of a turn that ended: the whole turn (its button on its first model row),
 * and, when it has model requests and more than one call, its calls alone (the button on the
 * plan line, or on the first call).
 */
function closeTurn(open: OpenTurn, run: TimelineRun, depth: number, blocks: ZoomBlock[]): void {
  const common = {
    runId: run.runId,
    turn: open.turn.turn,
    nested: depth > 0,
    hasChildren: open.hasChildren,
  };
  const hasModels = !open.modelBars.empty;
  const hasCalls = !open.callBars.empty;
  if (!hasModels && !hasCalls) return;
  const bars = new Ranges();
  for (const list of [open.modelBars.list, open.callBars.list]) {
    for (let index = 0; index < list.length; index += 2) {
      for (let bar = list[index]!; bar < list[index + 1]!; bar++) bars.add(bar);
    }
  }
  blocks.push({
    ...common,
    kind: "turn",
    rows: open.rows.list,
    bars: bars.list,
    buttonRow: hasModels ? open.firstModelRow : open.firstCallRow,
  });
  if (hasModels && count(open.callBars.list) > 1) {
    blocks.push({
      ...common,
      kind: "calls",
      rows: open.callRows.list,
      bars: open.callBars.list,
      buttonRow: open.firstCallRow,
    });
  }
}

/** How many numbers a list of ranges holds. */
function count(ranges: readonly number[]): number {
  let total = 0;
  for (let index = 0; index < ranges.length; index += 2)
    total += ranges[index + 1]! - ranges[index]!;
  return total;
}

/** A call's true times; a call still running when the trace ends runs to the trace's end. */
function callTimes(call: TimelineCall, batch: TimelineBatch, end: number): BarTimes {
  const to =
    call.finishedAt ??
    (call.startedAt === undefined ? call.queuedAt : Math.max(end, call.startedAt));
  return {
    from: call.queuedAt,
    started: call.startedAt,
    to,
    late: call.settledLateAt,
    batch,
    order: call.index,
  };
}
