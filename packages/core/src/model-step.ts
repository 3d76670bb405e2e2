import type { ContentBlock, ModelResponse } from "@lattice/providers";
import { raceAbort } from "@lattice/scheduler/internal";
import { errorMessage } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { RUN_LOG_VERSION } from "./run-log-entry.js";
import { appendEntry, settleStep } from "./run-log-sink.js";
import type { RunUsage } from "./sdk-message.js";

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
  let response: ModelResponse | undefined;
  // Under a lease, a retry's wait ends with a check of it, made just before the provider sends
  // the retry: a process frozen during the wait sends nothing when it wakes (H28).
  let retryCheck: ReturnType<typeof setTimeout> | undefined;
  try {
    for await (const event of runtime.provider.stream({
      ...runtime.request,
      messages: env.state.messages,
      signal,
    })) {
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
        trace?.({
          type: "model_retry",
          time: performance.now(),
          sessionId,
          runId,
          turn,
          attempt: event.attempt,
          delayMs: event.delayMs,
          status: event.status,
          message: event.message,
        });
      }
      if (runtime.includePartialMessages) {
        const parentToolUseId = env.placement.parentToolUseId;
        env.placement.emit({ type: "stream_event", event, sessionId, runId, parentToolUseId });
      }
    }
  } catch (error) {
    if (signal.aborted) throw abortedError(env);
    const message = errorMessage(error);
    trace?.({
      type: "model_request_failed",
      time: performance.now(),
      sessionId,
      runId,
      turn,
      message,
      status: (error as { status?: number }).status,
    });
    return {
      type: "finish",
      subtype: "error_during_execution",
      result: "",
      errors: [message],
      numTurns: turn,
    };
  } finally {
    if (retryCheck !== undefined) clearTimeout(retryCheck);
  }
  if (signal.aborted || (mayStart !== undefined && !mayStart())) throw abortedError(env);
  if (response === undefined) {
    return {
      type: "finish",
      subtype: "error_during_execution",
      result: "",
      errors: [
        `The model provider "${runtime.provider.name}" ended its stream without a response. This is a bug in the provider adapter.`,
      ],
      numTurns: turn,
    };
  }
  const content = response.message.content;
  const reported = response.usage;
  const usage: RunUsage = {
    inputTokens: reported.inputTokens,
    outputTokens: reported.outputTokens,
    cacheReadInputTokens: reported.cacheReadInputTokens ?? 0,
    cacheCreationInputTokens: reported.cacheCreationInputTokens ?? 0,
  };
  trace?.({
    type: "model_request_finished",
    time: performance.now(),
    sessionId,
    runId,
    turn,
    latencyMs: response.latencyMs,
    usage,
    retries: response.retries,
    stopReason: response.stopReason,
    responseId: response.id,
    responseModel: response.model !== "" ? response.model : undefined,
    requestId: response.requestId,
    toolCalls: countToolUses(content),
  });
  appendEntry(env, {
    v: RUN_LOG_VERSION,
    type: "reply",
    runId,
    turn,
    message: { role: "assistant", content },
    stopReason: response.stopReason,
    usage,
  });
  return settleStep(env);
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
            appendEntry(env, { v: RUN_LOG_VERSION, type: "mail", runId, texts: [...late] });
          }
        }, ignore);
        throw abortedError(env);
      }
      throw error;
    }
  }
  if (texts.length > 0) {
    appendEntry(env, { v: RUN_LOG_VERSION, type: "mail", runId, texts: [...texts] });
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

function countToolUses(content: readonly ContentBlock[]): number {
  let count = 0;
  for (const block of content) if (block.type === "tool_use") count++;
  return count;
}

function ignore(): void {}
