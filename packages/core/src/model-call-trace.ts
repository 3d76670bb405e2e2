import type { ContentBlock, ModelResponse, ModelStreamEvent } from "@lattice/providers";
import type { RunEnv } from "./run-env.js";
import type { RunUsage } from "./sdk-message.js";

/** A response's usage as a run counts it (cache counts 0 when the API reported none). Internal. */
export function usageOf(response: ModelResponse): RunUsage {
  const reported = response.usage;
  return {
    inputTokens: reported.inputTokens,
    outputTokens: reported.outputTokens,
    cacheReadInputTokens: reported.cacheReadInputTokens ?? 0,
    cacheCreationInputTokens: reported.cacheCreationInputTokens ?? 0,
  };
}

/** Traces a provider's retry of a model call of `turn`. Internal. */
export function traceRetry(
  env: RunEnv,
  turn: number,
  event: Extract<ModelStreamEvent, { type: "retry" }>,
): void {
  env.trace?.({
    type: "model_retry",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    turn,
    attempt: event.attempt,
    delayMs: event.delayMs,
    status: event.status,
    message: event.message,
  });
}

/**
 * Traces a model call of `turn` that answered: the run's own, or a compaction's summary
 * (`purpose`, C5). Internal.
 */
export function traceFinished(
  env: RunEnv,
  turn: number,
  response: ModelResponse,
  usage: RunUsage,
  purpose?: "compaction",
): void {
  env.trace?.({
    type: "model_request_finished",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    turn,
    latencyMs: response.latencyMs,
    usage,
    retries: response.retries,
    stopReason: response.stopReason,
    responseId: response.id,
    responseModel: response.model !== "" ? response.model : undefined,
    requestId: response.requestId,
    toolCalls: countToolUses(response.message.content),
    ...(purpose !== undefined ? { purpose } : {}),
  });
}

function countToolUses(content: readonly ContentBlock[]): number {
  let count = 0;
  for (const block of content) if (block.type === "tool_use") count++;
  return count;
}
