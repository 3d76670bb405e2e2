import type {
  ModelProviderV1,
  ModelRequest,
  ModelResponse,
  ProviderError,
} from "@lattice/providers";
import { raceAbort } from "@lattice/scheduler/internal";
import { isContextOverflow, manageContext, overflowFinish } from "./context-step.js";
import { errorMessage } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import { appendGuardrail, startInputGuardrails } from "./input-guardrails.js";
import { traceFinished, traceRetry, usageOf } from "./model-call-trace.js";
import { OutputDeltas } from "./output-deltas.js";
import { isCapacityRefusal, isFallbackError, planCall } from "./plan-call.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { ENTRY_V1, ENTRY_V2, type ReplyEntry } from "./run-log-entry.js";
import { appendEntry, settleStep } from "./run-log-sink.js";
import { OUTPUT_TOOL_NAME, toolMapOf } from "./run-output.js";
import type { RunSteering } from "./run-steering.js";

/**
 * The model step: the team mail that arrived since the last reply (a `mail` entry), the tool
 * sources' current lists, then one provider call on the conversation the log gives; its reply
 * becomes a `reply` entry, stored before the next step (R6). A failed call ends the run.
 *
 * @throws the run's abort error when its signal aborts or it may start nothing more (H28).
 */
export async function takeModelStep(env: RunEnv): Promise<StepOutcome> {
  const { signal, mayStart } = env;
  if (env.placement.beforeModelCall !== undefined && env.run.lastReply !== undefined) {
    const failed = await takeMail(env);
    if (failed !== undefined) return failed;
  }
  if (env.runtime.withSources !== undefined) {
    // A source whose list changed (MCP tools/list_changed) is seen from this turn on.
    try {
      env.runtime = await env.runtime.withSources(signal);
    } catch (error) {
      if (signal.aborted) throw abortedError(env);
      return {
        type: "finish",
        subtype: "error_during_execution",
        result: "",
        errors: [errorMessage(error)],
      };
    }
  }
  if (mayStart !== undefined && !mayStart()) throw abortedError(env);
  const context = env.runtime.context;
  if (context !== undefined) {
    // The context stage (C2): a request that would pass the threshold is made smaller first.
    const failed = await manageContext(env, context, "threshold");
    if (failed !== undefined) return failed;
  }
  const steer = env.steer;
  if (steer === undefined) return takePlainCall(env, false);
  if (steer.output !== undefined && !env.runtime.toolMap.has(OUTPUT_TOOL_NAME)) {
    // A query's own outputSchema: its final_answer tool joins the tools a batch may call.
    env.runtime = { ...env.runtime, toolMap: toolMapOf(env.runtime.tools, steer.output.tool) };
  }
  return takeSteeredCall(env, steer, false);
}

/**
 * A model call of a run with no steering option: the plain path (L14). Not an async function:
 * while the call is in flight, only `streamCall`'s frame and this continuation are held, which
 * keeps the heap of many runs in flight as small as before steering.
 */
function takePlainCall(env: RunEnv, retried: boolean): Promise<StepOutcome> {
  const { runtime, trace, sessionId, runId } = env;
  const turn = env.run.numTurns + 1;
  trace?.({
    type: "model_request_started",
    time: performance.now(),
    sessionId,
    runId,
    turn,
    messageCount: env.state.messages.length,
    maxTokens: runtime.request.maxTokens,
  });
  return streamCall(
    env,
    runtime.provider,
    { ...runtime.request, messages: env.state.messages, signal: env.signal },
    turn,
    undefined,
  ).then((called) => {
    if (called.response === undefined) return callFailed(env, turn, called.error, retried);
    logReply(env, turn, called.response, undefined);
    return settleStep(env);
  });
}

/**
 * A steered model call: the stage before it (output retries, budget, `prepareStep`), input
 * guardrails beside the run's first call (L7), the call itself along the fallback chain (L10),
 * then its reply with what steered it.
 */
async function takeSteeredCall(
  env: RunEnv,
  steer: RunSteering,
  retried: boolean,
): Promise<StepOutcome> {
  const { trace, sessionId, runId, signal } = env;
  const turn = env.run.numTurns + 1;
  const plan = await planCall(env, steer, turn);
  if ("type" in plan) return plan;
  const guarding =
    steer.guardrails !== undefined && env.run.lastReply === undefined && !retried
      ? startInputGuardrails(env, steer.guardrails)
      : undefined;
  const callSignal = guarding === undefined ? signal : AbortSignal.any([signal, guarding.tripped]);
  let index = plan.index;
  let choice = plan.chain[index]!;
  let called: CallResult;
  let overBudget: string | undefined;
  for (;;) {
    const request = plan.request(choice);
    const outputMode = plan.outputMode(choice);
    trace?.({
      type: "model_request_started",
      time: performance.now(),
      sessionId,
      runId,
      turn,
      messageCount: plan.messages.length,
      maxTokens: request.maxTokens,
      ...(choice.model !== env.runtime.model ? { model: choice.model } : {}),
      ...(outputMode !== undefined ? { outputMode } : {}),
    });
    const deltas =
      outputMode !== undefined && request.stream !== false
        ? new OutputDeltas(env, outputMode)
        : undefined;
    called = await streamCall(
      env,
      choice.provider,
      { ...request, messages: plan.messages, signal: callSignal },
      turn,
      deltas,
    );
    if (signal.aborted || guarding?.tripped.aborted === true) break;
    if (index + 1 >= plan.chain.length) break;
    // A failure after the provider's retries, or a refusal that names capacity, moves on.
    const capacity = called.response !== undefined && isCapacityRefusal(called.response);
    if (called.response !== undefined ? !capacity : !isFallbackError(called.error)) break;
    const next = plan.chain[index + 1]!;
    // The budget is checked before every call, a fallback's too (L11).
    overBudget = plan.budget(next);
    if (overBudget !== undefined) break;
    trace?.({
      type: "model_fallback",
      time: performance.now(),
      sessionId,
      runId,
      turn,
      fromModel: choice.model,
      fromProvider: choice.provider.name,
      toModel: next.model,
      toProvider: next.provider.name,
      fallback: index + 1,
      message: capacity ? "the model refused for lack of capacity" : errorMessage(called.error),
      status: capacity ? undefined : (called.error as { status?: number }).status,
    });
    index++;
    choice = next;
  }
  if (guarding !== undefined) {
    const outcomes = await guarding.settled;
    if (signal.aborted) throw abortedError(env);
    for (const outcome of outcomes) appendGuardrail(env, "input", turn, outcome);
    if (env.run.tripped !== undefined) return settleStep(env);
  }
  if (overBudget !== undefined) {
    const failure =
      called.response !== undefined
        ? "refused for lack of capacity"
        : `failed (${errorMessage(called.error)})`;
    return {
      type: "finish",
      subtype: "error_budget",
      result: "",
      errors: [
        `The model call to ${choice.model} ${failure}, and its fallback was not tried: ${overBudget}`,
      ],
    };
  }
  if (called.response === undefined) return callFailed(env, turn, called.error, retried);
  logReply(env, turn, called.response, {
    ...(choice.model !== env.runtime.model ? { model: choice.model } : {}),
    ...(index > 0 ? { fallback: index } : {}),
    ...(plan.overrides !== undefined ? { overrides: plan.overrides } : {}),
    ...(plan.outputMode(choice) !== undefined ? { outputMode: plan.outputMode(choice)! } : {}),
  });
  return settleStep(env);
}

/** What one provider call came to: its response, or what it failed with. */
type CallResult =
  | { readonly response: ModelResponse; readonly error?: undefined }
  | { readonly response?: undefined; readonly error: unknown };

/**
 * Streams one provider call (with the provider's own retries), tracing retries and emitting
 * partial messages; under a lease, a retry's wait ends with a check of it (H28).
 *
 * @throws the run's abort error when it aborts or may start nothing more.
 */
async function streamCall(
  env: RunEnv,
  provider: ModelProviderV1,
  request: ModelRequest,
  turn: number,
  deltas: OutputDeltas | undefined,
): Promise<CallResult> {
  const { runtime, sessionId, runId, signal, mayStart } = env;
  let response: ModelResponse | undefined;
  // Under a lease, a retry's wait ends with a check of it, made just before the provider sends
  // the retry: a process frozen during the wait sends nothing when it wakes (H28).
  let retryCheck: ReturnType<typeof setTimeout> | undefined;
  try {
    for await (const event of provider.stream(request)) {
      if (event.type === "response") {
        response = event.response;
        continue;
      }
      if (event.type === "retry") {
        if (mayStart !== undefined) {
          clearTimeout(retryCheck);
          // No retry once the run may start nothing more: the check below stops it.
          if (!mayStart()) break;
          retryCheck = checkBeforeRetry(mayStart, event.delayMs);
        }
        traceRetry(env, turn, event);
      }
      if (runtime.includePartialMessages) {
        const parentToolUseId = env.placement.parentToolUseId;
        env.placement.emit({ type: "stream_event", event, sessionId, runId, parentToolUseId });
      }
      if (deltas !== undefined) deltas.on(event);
    }
  } catch (error) {
    if (signal.aborted) throw abortedError(env);
    return { error };
  } finally {
    if (retryCheck !== undefined) clearTimeout(retryCheck);
  }
  if (signal.aborted || (mayStart !== undefined && !mayStart())) throw abortedError(env);
  if (response === undefined) {
    return {
      error: new Error(
        `The model provider "${provider.name}" ended its stream without a response. This is a bug in the provider adapter.`,
      ),
    };
  }
  return { response };
}

/**
 * A model call that failed. A request the API refused as longer than the window (C4) is made
 * smaller by the strategies once and sent again once; without strategies, or when it is still
 * too long, the run ends `error_context_overflow`. Any other failure ends the run.
 */
function callFailed(
  env: RunEnv,
  turn: number,
  error: unknown,
  retried: boolean,
): StepOutcome | Promise<StepOutcome> {
  if (!isContextOverflow(error)) return failedCall(env, turn, error);
  traceFailure(env, turn, error);
  return afterOverflow(env, error, retried);
}

async function afterOverflow(
  env: RunEnv,
  error: ProviderError,
  retried: boolean,
): Promise<StepOutcome> {
  const context = env.runtime.context;
  if (retried || context === undefined || context.strategies.length === 0) {
    return overflowFinish(env, error, retried);
  }
  const size = env.state.size;
  const failed = await manageContext(env, context, "overflow", error);
  if (failed !== undefined) return failed;
  // Nothing could be made smaller: sending it again would be refused again.
  if (env.state.size === size) return overflowFinish(env, error, false);
  const steer = env.steer;
  return steer === undefined ? takePlainCall(env, true) : takeSteeredCall(env, steer, true);
}

/** Traces a failed model call. */
function traceFailure(env: RunEnv, turn: number, error: unknown): string {
  const message = errorMessage(error);
  env.trace?.({
    type: "model_request_failed",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    turn,
    message,
    status: (error as { status?: number }).status,
  });
  return message;
}

/** A model call that failed: traced, and the run ends with its error. */
function failedCall(env: RunEnv, turn: number, error: unknown): StepOutcome {
  const message = traceFailure(env, turn, error);
  return {
    type: "finish",
    subtype: "error_during_execution",
    result: "",
    errors: [message],
    numTurns: turn,
  };
}

/** What steered a call, as its reply entry records it (L2, L5, L10). */
type ReplyExtras = Pick<ReplyEntry, "model" | "fallback" | "overrides" | "outputMode">;

/** Traces a call's response and appends its `reply` entry (R6: stored before the next step). */
function logReply(
  env: RunEnv,
  turn: number,
  response: ModelResponse,
  extras: ReplyExtras | undefined,
): void {
  const { runId } = env;
  const content = response.message.content;
  const usage = usageOf(response);
  // Not built when nobody listens (the plain path's hot loop).
  if (env.trace !== undefined) traceFinished(env, turn, response, usage);
  const entry: ReplyEntry = {
    v: ENTRY_V1,
    type: "reply",
    runId,
    turn,
    message: { role: "assistant", content },
    stopReason: response.stopReason,
    usage,
  };
  // A reply that records steering needs a reader of version 2 (an older one would drop it).
  const steered =
    extras !== undefined &&
    (extras.model !== undefined ||
      extras.fallback !== undefined ||
      extras.overrides !== undefined ||
      extras.outputMode !== undefined);
  appendEntry(env, steered ? { ...entry, ...extras, v: ENTRY_V2 } : entry);
}

/**
 * A team member's mail (its before-step hook's texts), appended as a `mail` entry before
 * anything else, so that an abort now leaves it for the resumed run.
 */
async function takeMail(env: RunEnv): Promise<StepOutcome> {
  const { signal, runId } = env;
  const taken = env.placement.beforeModelCall!();
  let texts: readonly string[];
  if (Array.isArray(taken)) texts = taken;
  else {
    try {
      texts = await raceAbort(taken, signal);
    } catch (error) {
      if (signal.aborted) {
        // Mail taken from the mailbox after the abort still goes to the log, for resume().
        Promise.resolve(taken).then((late) => {
          if (late.length > 0) {
            appendEntry(env, { v: ENTRY_V1, type: "mail", runId, texts: [...late] });
          }
        }, ignore);
        throw abortedError(env);
      }
      throw error;
    }
  }
  if (texts.length > 0) {
    appendEntry(env, { v: ENTRY_V1, type: "mail", runId, texts: [...texts] });
    const failed = await settleStep(env);
    if (failed !== undefined) return failed;
  }
  if (signal.aborted) throw abortedError(env);
  return undefined;
}

/**
 * A check of `mayStart` due 1 ms before a provider's retry wait of `delayMs` ends, so that it
 * runs before the provider's own timer even when both are overdue (a process frozen during
 * the wait): when the run may start nothing more, `mayStart` stops it (a step's lease check
 * aborts the step's signal), and the provider's wait ends with the abort instead of a retry
 * (H28). Does not keep the process alive.
 */
function checkBeforeRetry(mayStart: () => boolean, delayMs: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(mayStart, Math.max(0, delayMs - 1));
  timer.unref?.();
  return timer;
}

function ignore(): void {}
