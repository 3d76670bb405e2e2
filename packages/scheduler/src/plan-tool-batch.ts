import type { AnyToolDefinition } from "@lattice/tools";
import { isThenable } from "./race-abort.js";
import {
  DEFAULT_TOOL_CONCURRENCY,
  type ResolvedToolConcurrency,
  type ToolConcurrencyMode,
} from "./resolve-tool-concurrency.js";

/**
 * One call of a batch as the planner needs it: its tool and validated input, or why it will
 * not run. A call runs only when it has a `definition` and no `error`.
 */
export interface ToolBatchPlanCall {
  /** The called tool; absent when the model named a tool the agent does not have. */
  readonly definition?: AnyToolDefinition | undefined;
  /** The input validated by the tool's schema; what `isConcurrencySafe` is asked about (T13). */
  readonly input?: unknown;
  /**
   * Why the call will not run (its input failed validation, or it was denied); any value
   * other than `undefined` makes the call unsafe (T15).
   */
  readonly error?: unknown;
}

/** A run of calls: the calls of a run may overlap; the next run starts after it finishes. */
export interface ToolBatchRun {
  /**
   * Whether the calls of this run may overlap (up to `maxConcurrency`). `false` runs them one
   * at a time: an unsafe call alone in `"safe"` mode, every call in `"sequential"` mode.
   */
  readonly concurrent: boolean;
  /** Indices into the batch, in tool_use order. */
  readonly indices: readonly number[];
}

/** How a batch will run: its runs, in order, each finished before the next starts (T15, T18). */
export interface ToolBatchPlan {
  /** The mode the plan was made for. */
  readonly mode: ToolConcurrencyMode;
  /** The most handlers running at the same time within a concurrent run. */
  readonly maxConcurrency: number;
  /**
   * The runs, in tool_use order; together they hold every index of the batch exactly once.
   * Empty when nothing was scheduled (an empty batch, a refused batch, an abort before
   * planning).
   */
  readonly runs: readonly ToolBatchRun[];
}

/**
 * Plans a batch (T15, T18): a pure function from the calls and the settings to runs of call
 * indices. `"safe"` makes maximal runs of consecutive safe calls and puts every unsafe call
 * in a run of its own; `"all"` makes one concurrent run; `"sequential"` one run per call.
 *
 * A call is safe when it has a definition, no `error`, and its tool's
 * `isConcurrencySafe(input)` returns exactly `true`. No rule, a rule returning anything else,
 * a rule that throws, invalid input, an unknown tool or a denied call all make it unsafe.
 * The rule is only consulted in `"safe"` mode.
 *
 * @param calls - The batch, in tool_use order.
 * @param settings - The resolved concurrency settings. Default `{ mode: "safe", maxConcurrency: 10 }`.
 * @returns The plan; never throws.
 */
export function planToolBatch(
  calls: readonly ToolBatchPlanCall[],
  settings: ResolvedToolConcurrency = DEFAULT_TOOL_CONCURRENCY,
): ToolBatchPlan {
  const { mode, maxConcurrency } = settings;
  const runs: ToolBatchRun[] = [];
  const count = calls.length;
  if (count === 0) return { mode, maxConcurrency, runs };
  if (mode === "all") {
    const indices = new Array<number>(count);
    for (let index = 0; index < count; index++) indices[index] = index;
    runs.push({ concurrent: true, indices });
  } else if (mode === "sequential") {
    for (let index = 0; index < count; index++) runs.push({ concurrent: false, indices: [index] });
  } else {
    let current: number[] | undefined;
    for (let index = 0; index < count; index++) {
      if (isConcurrencySafeCall(calls[index]!)) {
        if (current === undefined) {
          current = [];
          runs.push({ concurrent: true, indices: current });
        }
        current.push(index);
      } else {
        current = undefined;
        runs.push({ concurrent: false, indices: [index] });
      }
    }
  }
  return { mode, maxConcurrency, runs };
}

/**
 * Whether one call may overlap others in `"safe"` mode (T13, T15). Never throws.
 *
 * @param call - The call: its definition, validated input and error, if any.
 * @returns `true` only when the call will run and its tool's rule returns exactly `true`.
 */
export function isConcurrencySafeCall(call: ToolBatchPlanCall): boolean {
  const { definition } = call;
  if (definition === undefined || call.error !== undefined) return false;
  if (typeof definition.isConcurrencySafe !== "function") return false;
  try {
    const answer: unknown = definition.isConcurrencySafe(call.input);
    // A promise is not `true`: the call is unsafe, and a rejection is never unhandled (H1).
    if (isThenable(answer)) Promise.resolve(answer).then(undefined, () => {});
    return answer === true;
  } catch {
    return false;
  }
}
