import { createAbortError } from "@lattice/scheduler/internal";
import { takeAllChildUsage } from "./child-runs.js";
import { toJson } from "./error-message.js";
import { storeFailure } from "./load-session.js";
import { reportedUsage } from "./run-cost.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { ENTRY_V1, ENTRY_V2, ENTRY_V3, type RunFinishedEntry } from "./run-log-entry.js";
import { appendEntry } from "./run-log-sink.js";
import { durationSinceStart, runResult } from "./run-result.js";
import type { RunUsage, SDKResultMessage, SDKResultSubtype } from "./sdk-message.js";
import { SessionConflictError } from "./session-store.js";
import { addUsage } from "./usage-totals.js";

/** The subtypes a version 1 `run_finished` entry may hold. */
const V1_SUBTYPES: ReadonlySet<SDKResultSubtype> = new Set([
  "success",
  "error_max_turns",
  "error_during_execution",
  "interrupted",
]);

/**
 * The finish step: appends the run's `run_finished` entry and stores it, or, for a run paused
 * for approvals (its log ends with the interrupt, R14), appends nothing; then builds the result
 * from the log ({@link runResult}), traces and emits it. A run whose end could not be stored
 * says so in its result, unless its caller must see the failure: a conflict (R8), a step.
 *
 * @returns The result message (also emitted).
 */
export async function finishRun(
  env: RunEnv,
  ending: Exclude<StepOutcome, undefined | { type: "interrupt" }> | { type: "interrupted" },
): Promise<SDKResultMessage> {
  const { run, writer } = env;
  const extra = takeAllChildUsage(env);
  let storeError: string | undefined;
  if (ending.type === "finish") {
    const totals = { ...run.usage };
    if (extra !== undefined) addUsage(totals, extra);
    const usage = withContextSize(
      reportedUsage(run, totals, env.runtime.model, env.runtime.pricing),
      env,
    );
    const base = {
      // Subtypes version 1 did not know need a reader of version 2 (3 for the context's, C4).
      v: V1_SUBTYPES.has(ending.subtype)
        ? ENTRY_V1
        : ending.subtype === "error_context_overflow"
          ? ENTRY_V3
          : ENTRY_V2,
      type: "run_finished",
      runId: env.runId,
      subtype: ending.subtype,
      result: ending.result,
    } as const;
    const rest = {
      errors: ending.errors,
      // A model call that failed counts as a turn, though no reply was logged.
      numTurns: ending.numTurns ?? run.numTurns,
      usage,
    };
    let entry: RunFinishedEntry =
      ending.structuredResult !== undefined
        ? { ...base, structuredResult: toJson(ending.structuredResult), ...rest }
        : { ...base, ...rest };
    if (ending.output !== undefined) entry = { ...entry, v: 2, output: toJson(ending.output) };
    if (ending.guardrail !== undefined) entry = { ...entry, v: 2, guardrail: ending.guardrail };
    if (writer === undefined || writer.failure !== undefined) {
      // Not stored, but the result's messages are the conversation as the log would give it
      // once the run ended (calls left without results answered or left out, H24), so that
      // they can be sent again with query(prompt, { messages }).
      env.state.apply(entry);
    } else {
      appendEntry(env, entry);
      const failure = await writer.flush();
      if (failure !== undefined) {
        if (failure instanceof SessionConflictError) {
          throw storeFailure(failure, writer, "finish");
        }
        // A step's caller retries the step: an end that is not in the log is no end.
        if (env.stepping !== undefined) throw storeFailure(failure, writer, "finish the run");
        storeError = storeFailure(failure, writer, "finish the run").message;
      } else if (writer.store.checkpoints === true) {
        await saveCheckpoint(env);
      }
    }
  }
  const message = runResult(run, env.state, {
    sessionId: env.sessionId,
    parentToolUseId: env.placement.parentToolUseId,
    // A run taken step by step (by workers) lasts from its first step, not this one's start.
    durationMs:
      env.stepping !== undefined ? durationSinceStart(run) : performance.now() - env.startedAt,
    storeError,
    extraUsage: ending.type === "finish" ? undefined : extra,
    // The live result carries the answer as validated; the log keeps its JSON form.
    output: ending.type === "finish" ? ending.output : undefined,
  });
  env.trace?.({
    type: "run_finished",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    subtype: message.subtype,
    numTurns: message.numTurns,
    durationMs: message.durationMs,
    usage: message.usage,
  });
  const traceErrors = env.traceFailures();
  const final = traceErrors > 0 ? { ...message, traceErrors } : message;
  env.placement.emit(final);
  return final;
}

/** Entries after which a session gets a checkpoint even without a compaction (C8). */
export const CHECKPOINT_EVERY = 500;

/**
 * Writes the session's checkpoint once its run ended (C8), when a compaction happened since
 * the last one or {@link CHECKPOINT_EVERY} entries were appended since: the next load then
 * folds only what came after. A checkpoint that cannot be written is no failure of the run
 * (the next load folds more of the log), so its error is dropped. Internal.
 */
export async function saveCheckpoint(env: RunEnv): Promise<void> {
  const { state, writer } = env;
  if (!state.compactedSinceCheckpoint && state.size - state.checkpointVersion < CHECKPOINT_EVERY) {
    return;
  }
  const checkpoint = state.toCheckpoint();
  const store = writer!.store;
  if (checkpoint === undefined || store.saveCheckpoint === undefined) return;
  try {
    const saved = await store.saveCheckpoint(env.sessionId, {
      version: state.size,
      state: checkpoint,
    });
    if (saved) {
      state.checkpointVersion = state.size;
      state.compactedSinceCheckpoint = false;
    }
  } catch {
    // The log is whole; only the next load's speed is lost.
  }
}

/** The run's usage with the conversation's size and the model's window, when known (C1). */
function withContextSize(usage: RunUsage, env: RunEnv): RunUsage {
  const contextTokens = env.state.contextTokens;
  const contextWindow = env.runtime.contextWindow;
  if (contextTokens === undefined && contextWindow === undefined) return usage;
  return {
    ...usage,
    ...(contextTokens !== undefined ? { contextTokens } : {}),
    ...(contextWindow !== undefined ? { contextWindow } : {}),
  };
}

/**
 * Traces the run's abort and gives the error it rejects with: an `AbortError`, or, for a step
 * stopped because its lease no longer holds, the fence's error (H28).
 */
export function abortedError(env: RunEnv): Error {
  env.trace?.({
    type: "run_aborted",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    numTurns: env.run.numTurns,
    durationMs: performance.now() - env.startedAt,
  });
  const stopped = env.fencing?.stop.signal;
  return stopped?.aborted === true
    ? (stopped.reason as Error)
    : createAbortError(env.signal.reason);
}
