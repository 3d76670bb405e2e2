import type { AgentRuntime } from "./agent-runtime.js";
import { takeBatchStep } from "./batch-step.js";
import { openParentRun } from "./child-runs.js";
import { errorMessage } from "./error-message.js";
import { abortedError, finishRun } from "./finish-run.js";
import { finishStage, stopStage } from "./finish-stage.js";
import { interruptRun } from "./interrupt-step.js";
import { storeFailure } from "./load-session.js";
import { takeModelStep } from "./model-step.js";
import { nextStep, type RunStep, stepNumberOf } from "./next-step.js";
import { openRun } from "./open-run.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { appendEntry, settleStep } from "./run-log-sink.js";
import type { RunPlacement } from "./run-placement.js";
import type { RunStart, StepYield } from "./run-start.js";
import { tracedBeforeCall } from "./run-trace.js";
import type { SDKResultMessage } from "./sdk-message.js";

/**
 * Runs the agent loop as a step function over the run log (R1–R3): each step reads what the
 * log says comes next — a model call, the latest reply's tool calls, or the end — takes it,
 * and appends its outcome; with a session, every entry is appended to the store before the
 * next step starts (R6). Messages, trace events and hooks observe the steps. Returns the
 * result message (also emitted). Internal.
 *
 * @throws an error named `"AbortError"` when `signal` aborts, after every started handler
 *   settled; `SessionConflictError` when another run holds the session (R8); `SessionError`
 *   for a resume of an unknown or finished session or a log this release cannot read.
 */
export async function runAgent(
  runtime: AgentRuntime,
  start: RunStart,
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<SDKResultMessage> {
  const outcome = await driveRun(runtime, start, signal, placement);
  if (outcome.type !== "result") throw new Error("runAgent(): a step start needs driveRun()");
  return outcome;
}

/**
 * The driver: opens the run ({@link openRun}), begins it, then takes the step the log says
 * comes next until the run finishes, pauses, or — with a `step` start — has taken its one step
 * and returns a {@link StepYield}. Each step kind is its own module; the driver holds no run
 * state of its own (it is all in the run's `RunEnv`). Internal.
 */
export async function driveRun(
  runtime: AgentRuntime,
  start: RunStart,
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<SDKResultMessage | StepYield> {
  const opened = await openRun(runtime, start, signal, placement);
  if (opened.env === undefined) return opened.ended;
  const env = opened.env;
  const begun = await beginRun(env);
  if (begun !== undefined) return endStep(env, begun);
  for (;;) {
    if ((env.mayStart !== undefined && !env.mayStart()) || signal.aborted) throw abortedError(env);
    const step = nextStep(env.run, env.runtime.maxTurns);
    if (step.type !== "finish" && env.stepping !== undefined) {
      const yielded = await gateStep(env, step);
      if (yielded !== undefined) return yielded;
    }
    let outcome: StepOutcome;
    const steer = env.steer;
    switch (step.type) {
      case "finish":
        if (steer === undefined || step.subtype !== "success") return finishRun(env, step);
        // The answer's stage (L3, L8): it finishes, or sends feedback and the run goes on.
        outcome = await finishStage(env, steer, step, true);
        break;
      case "model":
        if (steer?.stopWhen !== undefined && env.run.batch?.complete === true) {
          const stopped = await stopStage(env, steer);
          if (stopped !== undefined) {
            outcome = await finishStage(env, steer, stopped, false);
            if (outcome === undefined) continue;
            break;
          }
        }
        outcome = await takeModelStep(env);
        break;
      case "batch":
        outcome = await takeBatchStep(env, step);
        break;
    }
    if (outcome !== undefined) return endStep(env, outcome);
  }
}

/** Ends the run as a step's outcome says: paused for approvals, or finished. */
function endStep(env: RunEnv, outcome: Exclude<StepOutcome, undefined>): Promise<SDKResultMessage> {
  return outcome.type === "interrupt" ? interruptRun(env, outcome.calls) : finishRun(env, outcome);
}

/**
 * Begins an opened run: appends its opening entries and stores them before anything runs
 * (write-ahead: losing the race for the session ends here, R8), resolves the tool sources,
 * traces the start and introduces the run with its `system` message (a run taken step by step
 * does so on its first step only).
 *
 * @returns A finish outcome when the tool sources failed; otherwise nothing.
 */
async function beginRun(env: RunEnv): Promise<StepOutcome> {
  const { signal, writer, sessionId, runId, trace, placement } = env;
  for (const entry of env.opening) appendEntry(env, entry);
  env.run = env.state.run!;
  if (writer !== undefined && env.opening.length > 0) {
    const failure = await writer.flush();
    if (failure !== undefined) {
      throw storeFailure(failure, writer, env.resumed ? "resume the run" : "start the run");
    }
  }
  // Tool sources (MCP servers and the like) are resolved before the run's first step.
  let sourceFailure: string | undefined;
  if (env.runtime.withSources !== undefined) {
    try {
      env.runtime = await env.runtime.withSources(signal);
    } catch (error) {
      if (signal.aborted) throw abortedError(env);
      sourceFailure = errorMessage(error);
    }
  }
  const { runtime } = env;
  const toolNames = runtime.tools.map((definition) => definition.name);
  const decided = env.decided;
  if (decided !== undefined) {
    trace?.({
      type: "approval_decided",
      time: performance.now(),
      sessionId,
      runId,
      decisions: Object.entries(decided).map(([approvalId, decision]) => ({
        approvalId,
        approved: decision.approved,
        ...(decision.approved && decision.input !== undefined ? { edited: true } : {}),
      })),
    });
  }
  const agentName = placement.agentName ?? "agent";
  const parentToolUseId = placement.parentToolUseId;
  trace?.({
    type: "run_started",
    time: env.startedAt,
    sessionId,
    runId,
    agentName,
    provider: runtime.provider.name,
    model: runtime.model,
    tools: toolNames,
    parentToolUseId,
    ...(env.resumed ? { resumed: true } : {}),
  });
  if (!env.continuing) {
    const model = runtime.model;
    const contextTokens = env.state.contextTokens;
    const contextWindow = runtime.contextWindow;
    placement.emit({
      type: "system",
      subtype: "init",
      model,
      tools: toolNames,
      sessionId,
      runId,
      parentToolUseId,
      ...(contextTokens !== undefined ? { contextTokens } : {}),
      ...(contextWindow !== undefined ? { contextWindow } : {}),
    });
  }
  env.toolRun = openParentRun(env, agentName);
  env.beforeCall = tracedBeforeCall(runtime.hooks, trace, sessionId, runId);
  if (sourceFailure === undefined) return undefined;
  return { type: "finish", subtype: "error_during_execution", result: "", errors: [sourceFailure] };
}

/**
 * Before a step of a run taken one step at a time: the step runs only when it is the one the
 * caller expects and none was taken yet; otherwise the run yields (the next step is the
 * caller's: a worker's next job). Under a lease, the step's fence reaches the store before
 * anything runs: from then on a holder of an older lease can log nothing (H28).
 */
async function gateStep(env: RunEnv, step: RunStep): Promise<StepYield | undefined> {
  const stepping = env.stepping!;
  const number = stepNumberOf(step, env.run);
  const expected = stepping.expected;
  if (stepping.taken !== undefined || (expected !== undefined && number !== expected)) {
    const { sessionId, runId } = env;
    env.trace?.({
      type: "run_step_finished",
      time: performance.now(),
      sessionId,
      runId,
      step: stepping.taken,
      nextStep: number,
    });
    const taken = stepping.taken;
    return {
      type: "step_yield",
      sessionId,
      runId,
      step: taken,
      nextStep: number,
      stale: taken === undefined,
    };
  }
  stepping.taken = number;
  stepping.onStepStart?.(number);
  if (env.fencing !== undefined) {
    env.writer!.raiseFence();
    await settleStep(env);
    if (!env.mayStart!() || env.signal.aborted) throw abortedError(env);
  }
  return undefined;
}
