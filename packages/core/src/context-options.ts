import type { AnthropicContextManagement, ModelMessage, ModelProviderV1 } from "@lattice/providers";

/**
 * Keeping a conversation under the model's context window (C1–C7): when to act, what to do,
 * and how to count. Set on `createAgent({ contextManagement })`.
 *
 * Before each model call whose request would pass the threshold (`maxInputTokens`, or
 * `triggerAt` × the model's window), the `strategies` run in order until it fits. Each one that
 * changes the conversation appends a `compaction` entry to the run log: the log keeps every
 * original entry, and the conversation sent to the model starts from the latest compaction.
 *
 * @example
 * ```ts
 * createAgent({
 *   model: "claude-sonnet-4-6",
 *   contextManagement: {
 *     triggerAt: 0.8,
 *     strategies: [clearToolResults({ keepLast: 5 }), compact({ keepLastTurns: 4 })],
 *   },
 * });
 * ```
 */
export interface ContextManagement {
  /**
   * The most input tokens a request may have before the strategies run (system prompt and
   * tools included). Default: `triggerAt` × the model's context window.
   */
  readonly maxInputTokens?: number;
  /**
   * The threshold as a fraction (0 < f ≤ 1) of the model's context window, when
   * `maxInputTokens` is not set. Default `0.8`. Needs a known window (`contextWindow`, or a
   * model of the built-in table).
   */
  readonly triggerAt?: number;
  /** The model's context window in tokens, over the built-in table (`contextWindowOf`). */
  readonly contextWindow?: number;
  /**
   * How a request's size is known before it is sent (C1). `"estimate"` (default): the input
   * tokens the API counted for the previous call, plus an estimate of what was added since
   * (about 4 characters a token; see `estimateTokens`). `"provider"`: when the estimate comes
   * within 20 % of the threshold, the provider's token-counting endpoint is asked
   * (Anthropic's `/v1/messages/count_tokens`; a provider without one keeps the estimate).
   */
  readonly countTokens?: "estimate" | "provider";
  /**
   * What to do when a request would pass the threshold, tried in order until it fits:
   * {@link clearToolResults}, {@link compact}, or your own {@link ContextFunction}. Without
   * strategies nothing is changed, and a request the API refuses as too long ends the run
   * `error_context_overflow` (C4).
   */
  readonly strategies?: readonly ContextStrategy[];
  /**
   * Anthropic's server-side context editing (C7), sent as the request's `context_management`
   * exactly (with its beta header): for example
   * `{ edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "input_tokens", value: 100000 } }] }`.
   * Only for a provider that supports it (`provider.contextEditing`, the Anthropic adapter).
   */
  readonly provider?: AnthropicContextManagement;
  /**
   * Called before each strategy runs: return `false` to veto it (the next one is tried), or
   * `{ instructions }` to change what a `compact` strategy asks the summary to keep.
   */
  readonly onCompact?: OnCompact;
}

/** One way to make a conversation smaller (C2). */
export type ContextStrategy = ClearToolResultsStrategy | CompactStrategy | ContextFunction;

/** What {@link clearToolResults} returns; pass it in `contextManagement.strategies`. */
export interface ClearToolResultsStrategy {
  readonly type: "clear_tool_results";
  /** How many of the latest tool results stay as they are. */
  readonly keepLast: number;
  /** The text a cleared result becomes. */
  readonly placeholder: string | ((cleared: ClearedToolResult) => string);
  /** Tools whose results are never cleared. */
  readonly exclude: readonly string[];
}

/** A tool result about to be cleared, for a placeholder function. */
export interface ClearedToolResult {
  readonly toolName: string;
  readonly toolUseId: string;
  /** Its size, estimated in tokens. */
  readonly tokens: number;
}

/** What {@link compact} returns; pass it in `contextManagement.strategies`. */
export interface CompactStrategy {
  readonly type: "compact";
  /** How many of the latest turns (a model reply and its tool results) stay as they are. */
  readonly keepLastTurns: number;
  /** What the summary must keep: sent to the model that writes it. */
  readonly instructions: string;
  /** The model that writes the summary. Default: the agent's. */
  readonly model: string | undefined;
  /** The provider of that model. Default: the agent's. */
  readonly provider: ModelProviderV1 | undefined;
  /** The most tokens the summary may have. */
  readonly maxTokens: number;
}

/**
 * Your own strategy (C2): given the conversation and the budget, returns the conversation to
 * send instead. It must be one the model API accepts (checked as a caller's `messages` are,
 * R4: a `tool_use` keeps its `tool_result`); else the run ends `error_during_execution`
 * naming the problem. Its name (`function.name`) is the compaction's `strategy`.
 */
export type ContextFunction = (
  conversation: readonly ModelMessage[],
  budget: ContextBudget,
) => readonly ModelMessage[] | Promise<readonly ModelMessage[]>;

/** What a {@link ContextFunction} is given. */
export interface ContextBudget {
  /** The threshold the request should get under. */
  readonly maxInputTokens: number;
  /** The request's size now, in tokens (system prompt and tools included). */
  readonly tokens: number;
  /** The estimate Lattice uses for a list of messages, in tokens. */
  readonly estimate: (messages: readonly ModelMessage[]) => number;
  /** Aborted when the run is. */
  readonly signal: AbortSignal;
}

/** What {@link OnCompact} is told before a strategy runs. */
export interface CompactEvent {
  /** `"clear_tool_results"`, `"compact"`, or the function's name. */
  readonly strategy: string;
  readonly trigger: "threshold" | "overflow" | "manual";
  /** The request's size now, in tokens. */
  readonly tokens: number;
  /** The threshold. */
  readonly maxInputTokens: number;
  /** A `compact` strategy's instructions (undefined for the others). */
  readonly instructions: string | undefined;
  readonly sessionId: string;
  readonly runId: string;
}

/**
 * A hook before each strategy (`contextManagement.onCompact`): `false` vetoes it,
 * `{ instructions }` changes a `compact` strategy's instructions, anything else lets it run.
 */
export type OnCompact = (event: CompactEvent) => CompactVerdict | Promise<CompactVerdict>;

/**
 * What {@link OnCompact} returns: `false` vetoes the strategy, `{ instructions }` changes a
 * `compact` summary's instructions, `undefined` lets it run as it is.
 */
export type CompactVerdict = false | { readonly instructions?: string } | undefined;

/** The instructions a `compact` summary gets by default. */
export const DEFAULT_COMPACT_INSTRUCTIONS =
  "Summarize the conversation above so that the work can continue from the summary alone. Keep: the user's goals and every instruction or constraint they gave; decisions made and why; facts learned from tool results that are still needed (file paths, names, identifiers, numbers, errors); what was done and what remains to do. Leave out greetings and anything superseded. Write it as plain prose and lists, in the conversation's language.";

/**
 * A strategy that replaces older tool results by a short placeholder naming the tool and the
 * size removed (C2). The `tool_use` blocks stay, so the conversation stays valid; a result
 * cleared once stays cleared. Cheap: no model call.
 *
 * @param options - `keepLast`: the latest results kept (default 3); `placeholder`: the text,
 *   or a function of the cleared result; `exclude`: tools whose results are kept.
 */
export function clearToolResults(
  options: {
    readonly keepLast?: number;
    readonly placeholder?: string | ((cleared: ClearedToolResult) => string);
    readonly exclude?: readonly string[];
  } = {},
): ClearToolResultsStrategy {
  return Object.freeze({
    type: "clear_tool_results",
    keepLast: options.keepLast ?? 3,
    placeholder: options.placeholder ?? defaultPlaceholder,
    exclude: Object.freeze([...(options.exclude ?? [])]),
  });
}

/**
 * A strategy that replaces older turns by a summary written by a model call (C2): the agent's
 * model unless `model` (and `provider`) say otherwise. The summary's call counts in the run's
 * usage and budgets (C5). The latest `keepLastTurns` turns stay as they are.
 *
 * @param options - `keepLastTurns` (default 2), `instructions` (default
 *   {@link DEFAULT_COMPACT_INSTRUCTIONS}), `model`, `provider`, `maxTokens` (default 2048).
 */
export function compact(
  options: {
    readonly keepLastTurns?: number;
    readonly instructions?: string;
    readonly model?: string;
    readonly provider?: ModelProviderV1;
    readonly maxTokens?: number;
  } = {},
): CompactStrategy {
  return Object.freeze({
    type: "compact",
    keepLastTurns: options.keepLastTurns ?? 2,
    instructions: options.instructions ?? DEFAULT_COMPACT_INSTRUCTIONS,
    model: options.model,
    provider: options.provider,
    maxTokens: options.maxTokens ?? 2048,
  });
}

function defaultPlaceholder(cleared: ClearedToolResult): string {
  return `[The result of ${cleared.toolName} was cleared to save context (about ${cleared.tokens.toLocaleString("en-US")} tokens). Call the tool again if you need it.]`;
}
