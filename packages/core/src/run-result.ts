import type { LoggedRun } from "./logged-run.js";
import type { RunLogState } from "./run-log-state.js";
import type {
  RunUsage,
  SDKResultFields,
  SDKResultMessage,
  SDKResultSubtype,
} from "./sdk-message.js";
import { addUsage } from "./usage-totals.js";

/** What a result says beyond the log: how long the run took, and a failure to finish. */
export interface RunResultOptions {
  readonly sessionId: string;
  readonly parentToolUseId: string | null;
  readonly durationMs: number;
  /**
   * The run could not store its end: the result says `error_during_execution` with this error
   * added, whatever the unstored entry said.
   */
  readonly storeError?: string | undefined;
  /** Usage beyond what the log counts (child runs of calls whose results were not logged). */
  readonly extraUsage?: RunUsage | undefined;
  /** The typed answer as validated, for the live result (the log keeps its JSON form). */
  readonly output?: unknown;
}

/**
 * The result message of a run that ended, from its log alone: from its `run_finished` entry,
 * or, for a run paused for approvals, the `interrupted` result with its pending approvals. The
 * one place a result is built, whether the run just ended or its result is given again from a
 * stored log (a step taken again, `endRun()`). Internal.
 *
 * @param run - The run, finished or interrupted.
 * @param state - The log it belongs to: the result's `messages` are its conversation.
 */
export function runResult(
  run: LoggedRun,
  state: RunLogState,
  options: RunResultOptions,
): SDKResultMessage {
  const entry = run.finishedEntry;
  let subtype: SDKResultSubtype = entry?.subtype ?? "interrupted";
  let errors = entry?.errors ?? [];
  if (options.storeError !== undefined) {
    subtype = "error_during_execution";
    errors = [...errors, options.storeError];
  }
  let usage: RunUsage = entry?.usage ?? { ...run.usage };
  if (options.extraUsage !== undefined) {
    const totals = { ...usage };
    addUsage(totals, options.extraUsage);
    usage = totals;
  }
  const message: SDKResultFields = {
    type: "result",
    subtype,
    result: entry?.result ?? "",
    structuredResult: entry?.structuredResult,
    isError: subtype !== "success" && subtype !== "interrupted",
    numTurns: entry?.numTurns ?? run.numTurns,
    durationMs: options.durationMs,
    usage,
    errors,
    sessionId: options.sessionId,
    runId: run.runId,
    parentToolUseId: options.parentToolUseId,
    messages: state.messages.slice(),
  };
  // The subtype and the output agree by construction (an output is logged on success only), so
  // the fields are the union's, as the casts below say.
  if (entry === undefined) {
    return { ...message, pendingApprovals: run.pending ?? [] } as SDKResultMessage;
  }
  const output = options.output ?? entry.output;
  if (output === undefined && entry.guardrail === undefined) return message as SDKResultMessage;
  return {
    ...message,
    ...(output !== undefined ? { output } : {}),
    ...(entry.guardrail !== undefined ? { guardrail: entry.guardrail } : {}),
  } as SDKResultMessage;
}

/** How long a run taken step by step (or rebuilt from its log) lasted: from its first step. */
export function durationSinceStart(run: LoggedRun): number {
  return Math.max(0, Date.now() - Date.parse(run.startedTime));
}
