import type {
  ContentBlock,
  ModelMessage,
  ModelProviderV1,
  ModelResponse,
} from "@lattice/providers";
import type { CompactStrategy } from "./context-options.js";
import { estimateFrom, estimateTokens } from "./context-size.js";
import { errorMessage } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import { traceFinished, traceRetry, usageOf } from "./model-call-trace.js";
import { textOf } from "./reply-content.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { type CompactionEntry, ENTRY_V3 } from "./run-log-entry.js";

type Finish = Exclude<StepOutcome, undefined | { type: "interrupt" }>;

/** Why a context stage runs: the threshold, or the API's refusal of a request as too long. */
export type ContextTrigger = "threshold" | "overflow" | "manual";

/** The words before a `compact` summary in the conversation. Internal. */
export const SUMMARY_PREFIX =
  "This conversation continues from an earlier part that was compacted to save context. Summary of the earlier part:\n\n";

/** The characters of one tool result or tool input a compaction's transcript keeps. */
const TRANSCRIPT_BLOCK_CHARS = 4000;

/**
 * Where a compaction may cut the conversation so that the latest `keep` turns stay: the index
 * of the assistant message that begins them, or `undefined` when there is nothing before it to
 * replace. A turn is a model reply and what follows it, so the cut never separates a
 * `tool_use` from its `tool_result` (C3).
 */
function cutIndex(messages: readonly ModelMessage[], keep: number): number | undefined {
  let seen = 0;
  for (let at = messages.length - 1; at > 0; at--) {
    if (messages[at]!.role !== "assistant") continue;
    seen++;
    if (seen === keep) return at >= 2 ? at : undefined;
  }
  return undefined;
}

/**
 * `compact`: the turns before the latest `keepLastTurns` become one summary, written by a model
 * call on a transcript of them. The call counts in the run's usage and budgets (C5) and is
 * traced as a `chat` span marked `lattice.compaction`.
 */
export async function summarize(
  env: RunEnv,
  strategy: CompactStrategy,
  instructions: string,
  tokens: number,
  trigger: ContextTrigger,
): Promise<CompactionEntry | Finish | undefined> {
  const { state, runtime, trace, sessionId, runId, signal } = env;
  const messages = state.messages;
  const cut = cutIndex(messages, strategy.keepLastTurns);
  if (cut === undefined) return undefined;
  const provider: ModelProviderV1 = strategy.provider ?? runtime.provider;
  const model = strategy.model ?? runtime.model;
  const prompt = `${transcript(messages, cut)}\n\n---\n\n${instructions}`;
  const budget = compactionBudget(env, Math.ceil(prompt.length / 4) + strategy.maxTokens);
  if (budget !== undefined) return budget;
  const turn = env.run.numTurns + 1;
  trace?.({
    type: "model_request_started",
    time: performance.now(),
    sessionId,
    runId,
    turn,
    messageCount: 1,
    maxTokens: strategy.maxTokens,
    ...(model !== runtime.model ? { model } : {}),
    purpose: "compaction",
  });
  let response: ModelResponse | undefined;
  try {
    for await (const event of provider.stream({
      model,
      system:
        "You write summaries of conversations between a user and an AI agent that uses tools, so that the agent can continue the work from the summary alone.",
      messages: [{ role: "user", content: [{ type: "text", text: prompt }] }],
      maxTokens: strategy.maxTokens,
      stream: false,
      signal,
    })) {
      if (event.type === "response") response = event.response;
      else if (event.type === "retry") traceRetry(env, turn, event);
    }
  } catch (error) {
    if (signal.aborted) throw abortedError(env);
    trace?.({
      type: "model_request_failed",
      time: performance.now(),
      sessionId,
      runId,
      turn,
      message: errorMessage(error),
      status: (error as { status?: number }).status,
      purpose: "compaction",
    });
    return compactionFailed(
      env,
      `The compaction's model call (${model}) failed: ${errorMessage(error)}`,
    );
  }
  if (signal.aborted) throw abortedError(env);
  const summary = response === undefined ? "" : textOf(response.message.content).trim();
  const usage = response === undefined ? undefined : usageOf(response);
  if (response !== undefined) traceFinished(env, turn, response, usage!, "compaction");
  if (summary === "") {
    return compactionFailed(
      env,
      `The compaction's model call (${model}) gave no summary text (stop reason ${response?.stopReason ?? "none"}). Nothing was replaced.`,
    );
  }
  const replacement: ModelMessage = {
    role: "user",
    content: [{ type: "text", text: `${SUMMARY_PREFIX}${summary}` }],
  };
  const removed = estimateFrom(messages.slice(0, cut), 0);
  return {
    v: ENTRY_V3,
    type: "compaction",
    runId,
    strategy: "compact",
    trigger,
    entries: { from: state.originOf(0), to: state.originOf(cut - 1) },
    replaced: cut,
    messages: [replacement],
    tokensBefore: tokens,
    tokensAfter: Math.max(0, tokens - removed + estimateTokens([replacement])),
    ...(usage !== undefined ? { usage } : {}),
    ...(model !== runtime.model ? { model } : {}),
  };
}

/** A budget (L11) the compaction's call could pass, as a finish outcome; `undefined` if none. */
function compactionBudget(env: RunEnv, worstTokens: number): Finish | undefined {
  const maxTotal = env.steer?.maxTotalTokens;
  if (maxTotal === undefined) return undefined;
  const usage = env.run.usage;
  const spent =
    usage.inputTokens +
    usage.outputTokens +
    usage.cacheReadInputTokens +
    usage.cacheCreationInputTokens;
  if (spent + worstTokens <= maxTotal) return undefined;
  return {
    type: "finish",
    subtype: "error_budget",
    result: "",
    errors: [
      `The run would pass its token budget (maxTotalTokens ${maxTotal}) with the compaction's model call: it used ${spent} tokens, and the summary's call could use up to ${worstTokens} more, so it was not made. Raise maxTotalTokens.`,
    ],
  };
}

/** A plain transcript of the first `end` messages, for the summary's model call. */
function transcript(messages: readonly ModelMessage[], end: number): string {
  const names = new Map<string, string>();
  const lines: string[] = [];
  for (let at = 0; at < end; at++) {
    const message = messages[at]!;
    const speaker = message.role === "user" ? "User" : "Assistant";
    if (typeof message.content === "string") {
      lines.push(`${speaker}: ${message.content}`);
      continue;
    }
    for (const block of message.content as readonly ContentBlock[]) {
      switch (block.type) {
        case "text":
          lines.push(`${speaker}: ${block.text}`);
          break;
        case "tool_use":
          names.set(block.id, block.name);
          lines.push(
            `Assistant called the tool ${block.name} with ${cut(JSON.stringify(block.input ?? {}))}`,
          );
          break;
        case "tool_result": {
          const name = names.get(block.tool_use_id) ?? "a tool";
          const content = block.content as string | readonly ContentBlock[] | undefined;
          const text =
            typeof content === "string"
              ? content
              : (content ?? [])
                  .map((inner) => (inner.type === "text" ? inner.text : `[${inner.type}]`))
                  .join("\n");
          lines.push(
            `Result of ${name}${block.is_error === true ? " (an error)" : ""}: ${cut(text)}`,
          );
          break;
        }
        case "thinking":
        case "redacted_thinking":
          break;
        default:
          lines.push(`${speaker}: [${block.type}]`);
      }
    }
  }
  return `The conversation so far:\n\n${lines.join("\n\n")}`;
}

function cut(text: string): string {
  return text.length <= TRANSCRIPT_BLOCK_CHARS
    ? text
    : `${text.slice(0, TRANSCRIPT_BLOCK_CHARS)} [… ${text.length - TRANSCRIPT_BLOCK_CHARS} more characters]`;
}

/** A strategy that failed: the run ends with its error. Internal. */
export function compactionFailed(env: RunEnv, error: string): Finish {
  return {
    type: "finish",
    subtype: "error_during_execution",
    result: "",
    errors: [error],
    numTurns: env.run.numTurns,
  };
}
