import type {
  ContentBlock,
  ModelMessage,
  ModelStreamEvent,
  StopReason,
  ToolResultBlock,
} from "@lattice/providers";
import type { PendingApproval } from "./run-log-entry.js";
import type { TrippedGuardrail } from "./steering-options.js";

/**
 * Token counts of a run, added up over every model call, and over the child runs of agent
 * tools it ran. The whole input billed is `inputTokens + cacheReadInputTokens +
 * cacheCreationInputTokens`; the four are kept apart because they are priced apart.
 */
export interface RunUsage {
  /** Input tokens neither read from nor written to the prompt cache, all turns together. */
  readonly inputTokens: number;
  /** Output tokens (thinking included), all turns together. */
  readonly outputTokens: number;
  /**
   * Input tokens read from the prompt cache (cheap: about a tenth of the input price on
   * Anthropic; `prompt_tokens_details.cached_tokens` on OpenAI-compatible APIs). `0` when the
   * API reported none.
   */
  readonly cacheReadInputTokens: number;
  /**
   * Input tokens written to the prompt cache (Anthropic charges a premium for them; they are
   * read cheaply by the next calls). `0` when the API reported none.
   */
  readonly cacheCreationInputTokens: number;
  /**
   * What the run cost in US dollars (L11), when the price of every model that served it is
   * known (the agent's `pricing`, then the built-in table), child runs included. Absent
   * otherwise. Computed as the run ends.
   */
  readonly costUsd?: number;
  /**
   * Usage per model (L10), when more than one model served the run (a fallback, a
   * `prepareStep` override, agent tools on other models). Absent when one model did.
   */
  readonly byModel?: { readonly [model: string]: ModelUsageTotals };
  /**
   * The conversation's size as the run ends, in tokens (C1): the input of the run's last model
   * call as the API counted it (input, cache read and cache write), plus that call's output (its
   * reply is now part of the conversation). Absent when no call of the session reported usage.
   */
  readonly contextTokens?: number;
  /** The model's context window in tokens, when known (C1): `contextManagement.contextWindow`, else the built-in table. */
  readonly contextWindow?: number;
}

/** One model's share of a run's usage (`usage.byModel`). */
export interface ModelUsageTotals {
  readonly inputTokens: number;
  readonly outputTokens: number;
  readonly cacheReadInputTokens: number;
  readonly cacheCreationInputTokens: number;
  /** Its cost in US dollars, when its price is known. */
  readonly costUsd?: number;
}

/** The first message of every query: what the run will use. */
export interface SDKSystemMessage {
  readonly type: "system";
  readonly subtype: "init";
  /** The model the run talks to. */
  readonly model: string;
  /** The names of the tools offered to the model, in the order they are sent. */
  readonly tools: readonly string[];
  /**
   * The conversation (R7): the `sessionId` the query named, or a fresh id for a one-off run.
   * Every message of the run carries it; runs of agent tools carry their parent's.
   */
  readonly sessionId: string;
  /** The run: fresh for every `query()` and `run()`; a resumed run keeps its id (R15, R18). */
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
  /**
   * The session's conversation size in tokens as the run starts (C1), when a call of the
   * session reported usage before: see `RunUsage.contextTokens`.
   */
  readonly contextTokens?: number;
  /** The model's context window in tokens, when known (C1). */
  readonly contextWindow?: number;
}

/**
 * The conversation was made smaller (C3): sent when a `compaction` entry is appended, before the
 * model call that sends the smaller conversation. The log keeps every message before it.
 */
export interface SDKCompactBoundaryMessage {
  readonly type: "system";
  readonly subtype: "compact_boundary";
  /** The strategy that made it (`"clear_tool_results"`, `"compact"`, or a function's name). */
  readonly strategy: string;
  /** `"threshold"`, `"overflow"` (the API refused the request as too long) or `"manual"`. */
  readonly trigger: "threshold" | "overflow" | "manual";
  /** How many messages were replaced (by a summary, or a function's conversation); 0 when results were only cleared. */
  readonly messagesReplaced: number;
  /** How many tool results were cleared. */
  readonly toolResultsCleared: number;
  /** The request's size before and after, in tokens (C1). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The summary a `compact` strategy wrote, when it wrote one. */
  readonly summary?: string;
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
}

/** One assistant message, content blocks exactly as the model sent them. */
export interface SDKAssistantMessage {
  readonly type: "assistant";
  readonly message: { readonly role: "assistant"; readonly content: readonly ContentBlock[] };
  /** Why the model stopped this message. */
  readonly stopReason: StopReason;
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
}

/** The tool results of one batch, one `tool_result` block per call in tool_use order (T20). */
export interface SDKUserMessage {
  readonly type: "user";
  readonly message: { readonly role: "user"; readonly content: readonly ToolResultBlock[] };
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
}

/** A partial streaming event, sent only with `includePartialMessages: true`. */
export interface SDKPartialMessage {
  readonly type: "stream_event";
  /** The provider's normalised stream event (text delta, tool input delta, ...). */
  readonly event: ModelStreamEvent;
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
}

/** How a run ended: `"interrupted"` when it paused for approvals (R14) and can be resumed. */
export type SDKResultSubtype =
  | "success"
  | "error_max_turns"
  | "error_during_execution"
  | "error_output_invalid"
  | "guardrail_tripped"
  | "error_budget"
  | "error_context_overflow"
  | "interrupted";

/**
 * The typed answer as it streams (L4), with `outputSchema` and streaming: `text` is the
 * answer's JSON text so far, `partial` a best-effort parse of it (fields may be missing or
 * cut short). For UIs that render the answer as it arrives; the result's `output` is the one
 * validated.
 */
export interface SDKOutputDeltaMessage {
  readonly type: "output_delta";
  /** The JSON text of the answer so far, this call. */
  readonly text: string;
  /**
   * What that text parses to so far, best effort; `undefined` while nothing parses. Parsed the
   * first time it is read (an enumerable getter, so `JSON.stringify` includes it): a consumer
   * that reads only `text` pays nothing for it.
   */
  readonly partial: unknown;
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
}

/**
 * The last message of every run that was not aborted (T35): a {@link SDKSuccessResult} or a
 * {@link SDKNonSuccessResult}, told apart by `subtype`. Checking `subtype === "success"`
 * narrows `output` to the schema's type.
 *
 * @typeParam TOutput - The type of `output`: what the run's `outputSchema` validates to.
 */
export type SDKResultMessage<TOutput = unknown> = SDKSuccessResult<TOutput> | SDKNonSuccessResult;

/** A run that ended `success`. */
export interface SDKSuccessResult<TOutput = unknown> extends SDKResultFields {
  readonly subtype: "success";
  /**
   * The typed answer, validated by the run's `outputSchema` (L1); absent when the run had no
   * `outputSchema` (its type is then `unknown`). A result rebuilt from the log (a step asked
   * again, `endRun()`) carries the answer's logged JSON form, which differs from the validated
   * value only for schemas that transform.
   */
  readonly output: TOutput;
}

/** A run that ended otherwise: failed, stopped by a guardrail or a budget, or paused. */
export interface SDKNonSuccessResult extends SDKResultFields {
  /**
   * `"error_max_turns"`, `"error_during_execution"`, `"error_output_invalid"` (the typed answer
   * failed validation after `outputRetries`, L3), `"guardrail_tripped"` (L7, L8),
   * `"error_budget"` (`maxTotalTokens` or `maxCostUsd`, L11) or `"interrupted"` (paused for
   * approvals, not an error).
   */
  readonly subtype: Exclude<SDKResultSubtype, "success">;
  /** No typed answer: the run did not end `success`. */
  readonly output?: undefined;
}

/** What every result message has, whatever its subtype. */
export interface SDKResultFields {
  readonly type: "result";
  /** How the run ended; see {@link SDKSuccessResult} and {@link SDKNonSuccessResult}. */
  readonly subtype: SDKResultSubtype;
  /**
   * The final text: the last assistant message's text, or the first `endTurn` tool's text
   * (T8, T10). Empty when the run failed.
   */
  readonly result: string;
  /** The `structuredResult` of the tool that ended the run (T11); `undefined` otherwise. */
  readonly structuredResult: unknown;
  /** The guardrail that tripped, when `subtype` is `"guardrail_tripped"` (L7). */
  readonly guardrail?: TrippedGuardrail;
  /** `true` unless `subtype` is `"success"` or `"interrupted"`. */
  readonly isError: boolean;
  /** Model calls made. */
  readonly numTurns: number;
  /** Wall time of the run in milliseconds. */
  readonly durationMs: number;
  /** Tokens used, all turns (and agent tools) together. */
  readonly usage: RunUsage;
  /** What went wrong, one message per failure; empty on success. */
  readonly errors: readonly string[];
  /**
   * The whole conversation after the run (R5): the history it continued, its prompt, and every
   * assistant message and tool-result message, plain JSON. Pass it as `messages` to the next
   * `query()` to continue: the next request sends exactly what one longer conversation would.
   */
  readonly messages: readonly ModelMessage[];
  readonly sessionId: string;
  readonly runId: string;
  /** The agent tool call this run serves, or `null` for a top-level run. */
  readonly parentToolUseId: string | null;
  /**
   * How many times this run's `onTrace` threw, or returned a promise that had rejected, by the
   * time this message was built (H1). A rejection that comes later is caught all the same but
   * not counted here. Those failures are otherwise ignored: a trace listener never breaks a
   * run. Absent when there were none.
   */
  readonly traceErrors?: number;
  /**
   * The calls waiting for a person's decision, when `subtype` is `"interrupted"` (R14): none of
   * the batch ran. Answer each with `agent.resume(sessionId, { decisions })`.
   */
  readonly pendingApprovals?: readonly PendingApproval[];
}

/** Every message `agent.query()` yields. */
export type SDKMessage<TOutput = unknown> =
  | SDKSystemMessage
  | SDKCompactBoundaryMessage
  | SDKAssistantMessage
  | SDKUserMessage
  | SDKPartialMessage
  | SDKOutputDeltaMessage
  | SDKResultMessage<TOutput>;
