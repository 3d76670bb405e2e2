import type { ToolResultBlock } from "@lattice/providers";
import {
  runToolBatch,
  type ToolBatchCall,
  type ToolBatchResult,
  type ToolCallOutcome,
  type ToolCallStatus,
} from "@lattice/scheduler";
import { raceAbort } from "@lattice/scheduler/internal";
import type { ToolContext } from "@lattice/tools";
import { takeChildUsage } from "./child-runs.js";
import { errorMessage, toJson } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import type { RunStep } from "./next-step.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { ENTRY_V1, type ToolResultEntry } from "./run-log-entry.js";
import { appendEntry, settleStep } from "./run-log-sink.js";
import { toToolBatchTraceEvent } from "./trace-event.js";

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/**
 * The batch step: the latest reply's calls that have no logged result yet go to the scheduler,
 * and each call's result is appended as a `tool_result` entry as it settles (R18: a crash loses
 * only the calls in flight). Calls that need approval pause the run (an `interrupt` outcome);
 * then the `onToolResult` hooks run, and the entries are stored before the next step (R6).
 *
 * @throws the run's abort error when the batch was aborted.
 */
export async function takeBatchStep(
  env: RunEnv,
  step: Extract<RunStep, { type: "batch" }>,
): Promise<StepOutcome> {
  const { runtime, signal, trace, sessionId, runId } = env;
  const turn = env.run.numTurns;
  const context = env.placement.context;
  const toolRun = env.toolRun;
  const batch = await runToolBatch({
    calls: step.calls.map((block) =>
      block.inputError === undefined
        ? { id: block.id, name: block.name, input: block.input }
        : { id: block.id, name: block.name, input: block.input, inputError: block.inputError },
    ),
    tools: runtime.toolMap,
    concurrency: runtime.concurrency,
    // A batch cut by a crash after its first result had been accepted by the policy (R18).
    policy: step.whole ? runtime.policy : undefined,
    signal,
    abortGraceMs: runtime.abortGraceMs,
    beforeCall: env.beforeCall,
    // Asked as each call would start: a run whose lease lapsed starts no handler (H28).
    mayStartCall: env.mayStart,
    createContext: (call: ToolBatchCall, _definition, callSignal): ToolContext => {
      const base: Mutable<ToolContext> = {
        signal: callSignal,
        toolUseId: call.id,
        toolName: call.name,
        run: toolRun,
      };
      if (context !== undefined) base.context = context;
      if (trace !== undefined) {
        base.reportProgress = (progress) =>
          trace({
            type: "tool_progress",
            time: performance.now(),
            sessionId,
            runId,
            toolUseId: call.id,
            toolName: call.name,
            progress: progress.progress,
            total: progress.total,
            message: progress.message,
          });
      }
      return base;
    },
    onCallSettled: (outcome) => logResult(env, outcome),
    ...(runtime.toolTimeoutMs !== undefined ? { toolTimeoutMs: runtime.toolTimeoutMs } : {}),
    ...(step.decisions !== undefined ? { approvalDecisions: step.decisions } : {}),
    ...(trace !== undefined
      ? { onEvent: (event) => trace(toToolBatchTraceEvent(event, sessionId, runId, turn)) }
      : {}),
  });
  if (batch.pendingApprovals !== undefined && !signal.aborted) {
    return { type: "interrupt", calls: batch.pendingApprovals };
  }
  const hookErrors =
    runtime.hooks.onToolResult !== undefined && !batch.aborted
      ? await runToolResultHooks(env, batch)
      : [];
  const failed = await settleStep(env);
  if (batch.aborted || signal.aborted) throw abortedError(env);
  if (failed !== undefined) return failed;
  if (hookErrors.length > 0) {
    return { type: "finish", subtype: "error_during_execution", result: "", errors: hookErrors };
  }
  return undefined;
}

/** Statuses whose result is final: logged, never run again on resume (R18). */
function isLoggable(status: ToolCallStatus, aborted: boolean): boolean {
  if (status === "cancelled" || status === "abandoned") return false;
  // A handler that failed once the query was aborted may have failed because of the abort.
  return !(aborted && status === "failed");
}

/** Appends a settled call's `tool_result` entry, with the usage of the child runs it started. */
function logResult(env: RunEnv, outcome: ToolCallOutcome): void {
  if (!isLoggable(outcome.status, env.signal.aborted)) return;
  const result = outcome.result;
  const block: ToolResultBlock = result.isError
    ? {
        type: "tool_result",
        tool_use_id: outcome.id,
        content: [...result.content],
        is_error: true,
      }
    : { type: "tool_result", tool_use_id: outcome.id, content: [...result.content] };
  const entry: Mutable<ToolResultEntry> = {
    v: ENTRY_V1,
    type: "tool_result",
    runId: env.runId,
    toolUseId: outcome.id,
    toolName: outcome.name,
    status: outcome.status,
    block,
  };
  if (result.endTurn) {
    entry.endTurn = true;
    if (result.structuredResult !== undefined) {
      entry.structuredResult = toJson(result.structuredResult);
    }
  }
  const usage = takeChildUsage(env, outcome.id);
  if (usage !== undefined) entry.usage = usage;
  appendEntry(env, entry);
}

/**
 * Runs the `onToolResult` hook once per result of the batch, in tool_use order, each raced
 * against the run's signal; a hook that throws is traced and its error returned (the run then
 * ends with it), the others still run.
 */
async function runToolResultHooks(env: RunEnv, batch: ToolBatchResult): Promise<string[]> {
  const { signal, trace, sessionId, runId } = env;
  const onToolResult = env.runtime.hooks.onToolResult!;
  const hookErrors: string[] = [];
  for (const outcome of batch.results) {
    if (signal.aborted) break;
    const hookStarted = performance.now();
    let hookError: string | undefined;
    try {
      // Raced against the signal: a hook that never settles must not keep an aborted query
      // from ending (T22).
      await raceAbort(
        onToolResult({
          toolUseId: outcome.id,
          toolName: outcome.name,
          kind: outcome.kind,
          input: outcome.input,
          result: outcome.result,
          status: outcome.status,
          durationMs: outcome.startedAt === undefined ? 0 : outcome.finishedAt - outcome.startedAt,
          sessionId,
          runId,
          signal,
        }),
        signal,
      );
    } catch (error) {
      // Aborted while the hook was pending: no hook error, the run rejects after.
      if (signal.aborted) continue;
      hookError = errorMessage(error);
      hookErrors.push(
        `The onToolResult hook threw for tool call "${outcome.name}" (${outcome.id}): ${hookError}`,
      );
    }
    trace?.({
      type: "hook",
      time: performance.now(),
      sessionId,
      runId,
      hook: "onToolResult",
      toolUseId: outcome.id,
      durationMs: performance.now() - hookStarted,
      error: hookError,
    });
  }
  return hookErrors;
}
