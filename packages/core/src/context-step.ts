import type { ContentBlock, ModelMessage, ToolResultBlock } from "@lattice/providers";
import { ProviderError } from "@lattice/providers";
import { historyProblem } from "./check-history.js";
import type {
  ClearToolResultsStrategy,
  CompactStrategy,
  ContextFunction,
  ContextStrategy,
} from "./context-options.js";
import { estimateBlock, estimateFixed, estimateFrom, estimateTokens } from "./context-size.js";
import { type ContextTrigger, compactionFailed, summarize } from "./context-summary.js";
import { errorMessage, toJson } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import type { RunContext } from "./resolve-context.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { type CompactionEntry, ENTRY_V3 } from "./run-log-entry.js";
import { appendEntry, settleStep } from "./run-log-sink.js";

/** Where the provider's count is asked for with `countTokens: "provider"`: within 20 % of the threshold. */
const PROVIDER_COUNT_MARGIN = 0.8;

type Finish = Exclude<StepOutcome, undefined | { type: "interrupt" }>;

/**
 * The size of the request the next model call would send, in tokens (C1): the latest count
 * (the input the API counted for the previous call, or a compaction's size after it) plus the
 * estimate of the messages added since; the whole request estimated when nothing was counted.
 * Internal.
 */
export function requestTokens(env: RunEnv): number {
  const { state, runtime } = env;
  const messages = state.messages;
  if (state.countedTokens >= 0) {
    return state.countedTokens + estimateFrom(messages, state.countedMessages);
  }
  return estimateFixed(runtime.request.system, runtime.request.tools) + estimateFrom(messages, 0);
}

/**
 * The context stage before a model call (C2): when the request would pass the threshold, the
 * strategies run in order until it fits, each change a `compaction` entry (C3), stored before
 * the call (C5: a crash during a compaction resumes by compacting again, never by sending the
 * over-long request). After an overflow (C4) the strategies aim lower: at the share of the
 * request the API said fits. Internal.
 *
 * @returns A finish outcome when a strategy failed (its model call, a function's conversation)
 *   or the store did; nothing otherwise, whether or not it fits now.
 * @throws the run's abort error when it aborts.
 */
export async function manageContext(
  env: RunEnv,
  context: RunContext,
  trigger: ContextTrigger,
  overflow?: ProviderError,
): Promise<Finish | undefined> {
  let tokens = requestTokens(env);
  let target = context.maxInputTokens;
  if (trigger === "overflow") {
    // The API counted more than the estimate: aim at the share of it that fits.
    const sent = overflow?.promptTokens;
    const limit = overflow?.contextLimit;
    const ratio = sent !== undefined && limit !== undefined && sent > 0 ? limit / sent : 0.5;
    // Both on the estimate's scale, which the strategies' savings are measured in.
    target = Math.min(target, Math.floor(tokens * ratio * 0.9));
  } else if (tokens <= target) {
    if (context.countTokens !== "provider" || tokens < target * PROVIDER_COUNT_MARGIN) {
      return undefined;
    }
    const counted = await countWithProvider(env);
    if (counted === undefined || counted <= target) return undefined;
    tokens = counted;
  }
  let changed = false;
  for (const strategy of context.strategies) {
    if (tokens <= target) break;
    const name = strategyName(strategy);
    let instructions = typeof strategy === "function" ? undefined : strategyInstructions(strategy);
    if (context.onCompact !== undefined) {
      let verdict: Awaited<ReturnType<NonNullable<RunContext["onCompact"]>>>;
      try {
        verdict = await context.onCompact({
          strategy: name,
          trigger,
          tokens,
          maxInputTokens: context.maxInputTokens,
          instructions,
          sessionId: env.sessionId,
          runId: env.runId,
        });
      } catch (error) {
        if (env.signal.aborted) throw abortedError(env);
        return compactionFailed(
          env,
          `contextManagement.onCompact failed before the ${name} strategy: ${errorMessage(error)}`,
        );
      }
      if (verdict === false) continue;
      if (verdict !== undefined && verdict !== null && typeof verdict.instructions === "string") {
        instructions = verdict.instructions;
      }
    }
    const made =
      typeof strategy === "function"
        ? await runFunction(env, strategy, name, tokens, target, trigger)
        : strategy.type === "clear_tool_results"
          ? clearResults(env, strategy, tokens, trigger)
          : await summarize(env, strategy, instructions!, tokens, trigger);
    if (made === undefined) continue;
    if ("type" in made && made.type === "finish") return made;
    const entry = made as CompactionEntry;
    appendEntry(env, entry);
    traceCompaction(env, entry);
    tokens = entry.tokensAfter;
    changed = true;
  }
  if (!changed) return undefined;
  // Stored before the call (C5); a store failure is a finish, never an interrupt.
  return (await settleStep(env)) as Finish | undefined;
}

/** Asks the provider's token-counting endpoint for the request's size (C1), if it has one. */
async function countWithProvider(env: RunEnv): Promise<number | undefined> {
  const provider = env.runtime.provider;
  if (provider.countTokens === undefined) return undefined;
  try {
    return await provider.countTokens({
      ...env.runtime.request,
      messages: env.state.messages,
      signal: env.signal,
    });
  } catch {
    if (env.signal.aborted) throw abortedError(env);
    // Counting is advice: the estimate stands when the endpoint fails.
    return undefined;
  }
}

function strategyName(strategy: ContextStrategy): string {
  if (typeof strategy === "function") return strategy.name !== "" ? strategy.name : "custom";
  return strategy.type;
}

function strategyInstructions(
  strategy: ClearToolResultsStrategy | CompactStrategy,
): string | undefined {
  return strategy.type === "compact" ? strategy.instructions : undefined;
}

/**
 * `clearToolResults`: every tool result but the latest `keepLast` (and those of excluded
 * tools) becomes a placeholder, when that makes it smaller. The calls stay.
 */
function clearResults(
  env: RunEnv,
  strategy: ClearToolResultsStrategy,
  tokens: number,
  trigger: ContextTrigger,
): CompactionEntry | undefined {
  const { state } = env;
  const messages = state.messages;
  // The results the model has seen: those before its latest reply (the latest results stay).
  let lastReply = messages.length - 1;
  while (lastReply > 0 && messages[lastReply]!.role !== "assistant") lastReply--;
  const results: { readonly block: ToolResultBlock; readonly at: number }[] = [];
  for (let at = 0; at < messages.length; at++) {
    const content = messages[at]!.content;
    if (typeof content === "string" || messages[at]!.role !== "user") continue;
    for (const block of content as readonly ContentBlock[]) {
      if (block.type === "tool_result") results.push({ block, at });
    }
  }
  const excluded = new Set(strategy.exclude);
  const cleared: { toolUseId: string; placeholder: string; message: number }[] = [];
  let saved = 0;
  let from = Number.POSITIVE_INFINITY;
  let to = -1;
  for (let index = 0; index < results.length - strategy.keepLast; index++) {
    const { block, at } = results[index]!;
    if (at > lastReply) break;
    const toolName = callName(messages[at - 1], block.tool_use_id);
    if (excluded.has(toolName)) continue;
    const size = estimateBlock(block);
    const placeholder =
      typeof strategy.placeholder === "string"
        ? strategy.placeholder
        : String(strategy.placeholder({ toolName, toolUseId: block.tool_use_id, tokens: size }));
    const after = Math.ceil(placeholder.length / 4);
    // A result already cleared (or small) is left as it is.
    if (size <= after + 8) continue;
    cleared.push({ toolUseId: block.tool_use_id, placeholder, message: at });
    saved += size - after;
    const origin = state.originOf(at);
    if (origin < from) from = origin;
    if (origin > to) to = origin;
  }
  if (cleared.length === 0) return undefined;
  return {
    v: ENTRY_V3,
    type: "compaction",
    runId: env.runId,
    strategy: "clear_tool_results",
    trigger,
    entries: { from, to },
    replaced: 0,
    cleared,
    tokensBefore: tokens,
    tokensAfter: Math.max(0, tokens - saved),
  };
}

/** The name of the tool a result answers: its call is in the assistant message before it. */
function callName(message: ModelMessage | undefined, toolUseId: string): string {
  if (message !== undefined && Array.isArray(message.content)) {
    for (const block of message.content as readonly ContentBlock[]) {
      if (block.type === "tool_use" && block.id === toolUseId) return block.name;
    }
  }
  return "a tool";
}

/**
 * A user function: its conversation replaces the whole one, once checked as a caller's
 * history is (R4) and ending as the conversation did (the next call is sent on it).
 */
async function runFunction(
  env: RunEnv,
  strategy: ContextFunction,
  name: string,
  tokens: number,
  target: number,
  trigger: ContextTrigger,
): Promise<CompactionEntry | Finish | undefined> {
  const { state, signal } = env;
  const messages = state.messages;
  const passed = messages.slice();
  let given: readonly ModelMessage[];
  try {
    given = await strategy(passed, {
      maxInputTokens: target,
      tokens,
      estimate: estimateTokens,
      signal,
    });
  } catch (error) {
    if (signal.aborted) throw abortedError(env);
    return compactionFailed(
      env,
      `The contextManagement strategy "${name}" failed: ${errorMessage(error)}`,
    );
  }
  if (signal.aborted) throw abortedError(env);
  // The same conversation given back: nothing to log.
  if (
    given === passed ||
    (Array.isArray(given) &&
      given.length === messages.length &&
      given.every((message, index) => message === messages[index]))
  ) {
    return undefined;
  }
  const problem = historyProblem(given);
  const last = messages[messages.length - 1];
  const ending = Array.isArray(given)
    ? (given[given.length - 1] as ModelMessage | undefined)
    : undefined;
  if (problem !== undefined || ending === undefined || ending.role !== last?.role) {
    return compactionFailed(
      env,
      problem !== undefined
        ? `The contextManagement strategy "${name}" returned a conversation the model API would refuse: it ${problem}`
        : `The contextManagement strategy "${name}" returned a conversation that does not end as the run's did (with a ${last?.role ?? "user"} message): the next model call is sent on it.`,
    );
  }
  let copy: ModelMessage[];
  try {
    copy = toJson(given) as unknown as ModelMessage[];
  } catch (error) {
    return compactionFailed(
      env,
      `The contextManagement strategy "${name}" returned a conversation that is not JSON: ${errorMessage(error)}`,
    );
  }
  const before = estimateFrom(messages, 0);
  return {
    v: ENTRY_V3,
    type: "compaction",
    runId: env.runId,
    strategy: name,
    trigger,
    entries: { from: state.originOf(0), to: state.size - 1 },
    replaced: messages.length,
    messages: copy,
    tokensBefore: tokens,
    tokensAfter: Math.max(0, tokens - before + estimateFrom(copy, 0)),
  };
}

function traceCompaction(env: RunEnv, entry: CompactionEntry): void {
  env.trace?.({
    type: "compaction",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    turn: env.run.numTurns + 1,
    strategy: entry.strategy,
    trigger: entry.trigger,
    messagesReplaced: entry.replaced,
    toolResultsCleared: entry.cleared?.length ?? 0,
    tokensBefore: entry.tokensBefore,
    tokensAfter: entry.tokensAfter,
  });
}

/**
 * Whether a model call failed because its request was longer than the model's window (C4):
 * the provider's `provider_context_overflow`. Internal.
 */
export function isContextOverflow(error: unknown): error is ProviderError {
  return error instanceof ProviderError && (error.code as string) === "provider_context_overflow";
}

/**
 * The end of a run whose request the API refused as too long, when no strategy could make it
 * fit (C4): names the tokens sent and the option to set. Internal.
 */
export function overflowFinish(env: RunEnv, error: ProviderError, retried: boolean): Finish {
  const sent = error.promptTokens !== undefined ? `${error.promptTokens} tokens` : "a request";
  const limit = error.contextLimit !== undefined ? ` (the window is ${error.contextLimit})` : "";
  const advice =
    env.runtime.context === undefined || env.runtime.context.strategies.length === 0
      ? "Set contextManagement: { strategies: [clearToolResults(), compact()] } to keep the conversation under the window."
      : retried
        ? "The strategies ran once more and the request was still too long: keep fewer turns (compact({ keepLastTurns })), clear more results, or lower maxInputTokens."
        : "Lower contextManagement.maxInputTokens.";
  return {
    type: "finish",
    subtype: "error_context_overflow",
    result: "",
    errors: [
      `The model API refused ${sent}${limit} as longer than the model's context window${retried ? ", again after a compaction" : ""}. ${advice} (${error.message})`,
    ],
    numTurns: env.run.numTurns + 1,
  };
}
