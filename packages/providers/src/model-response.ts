import type { ContentBlock } from "./content-blocks.js";

/**
 * Why the model stopped, normalised across providers. `"other"` covers reasons a provider
 * reports that have no common meaning (the raw value is in {@link ModelResponse.rawStopReason}).
 * `"max_tokens"` also covers Anthropic's `model_context_window_exceeded` (the reply filled the
 * rest of the context window and was cut short; `rawStopReason` tells the two apart).
 */
export type StopReason =
  | "end_turn"
  | "tool_use"
  | "max_tokens"
  | "stop_sequence"
  | "pause_turn"
  | "refusal"
  | "other";

/**
 * Token counts of one model call, with Anthropic's meaning: `inputTokens` excludes tokens read
 * from or written to the prompt cache, so the whole input is
 * `inputTokens + (cacheReadInputTokens ?? 0) + (cacheCreationInputTokens ?? 0)`.
 * OpenAI-compatible `prompt_tokens` is split accordingly (cached tokens, from
 * `prompt_tokens_details.cached_tokens`, are `cacheReadInputTokens`; these APIs report no cache
 * writes). The cache fields are present when the API reports them: Anthropic's API reports
 * both on every response (0 when nothing was cached); OpenAI-compatible adapters set
 * `cacheReadInputTokens` only when some tokens were cached.
 */
export interface ModelUsage {
  /** Input tokens not served from or written to the cache. */
  inputTokens: number;
  /** Output tokens, thinking included. */
  outputTokens: number;
  /** Input tokens read from the prompt cache, when the API reports them. */
  cacheReadInputTokens?: number;
  /** Input tokens written to the prompt cache, when the API reports them. */
  cacheCreationInputTokens?: number;
}

/**
 * One server-side context edit the API applied before the model read the prompt (Anthropic's
 * `context_management.applied_edits`); see {@link ModelResponse.contextEdits}.
 */
export interface ModelContextEdit {
  /** The edit's type, for example `"clear_tool_uses_20250919"` or `"clear_thinking_20251015"`. */
  readonly type: string;
  /** How many input tokens the edit removed. */
  readonly clearedInputTokens: number;
  /** For `clear_tool_uses_20250919`: how many tool uses were cleared. */
  readonly clearedToolUses?: number;
  /** For `clear_thinking_20251015`: how many assistant turns lost their thinking. */
  readonly clearedThinkingTurns?: number;
}

/** The complete result of one successful model call. */
export interface ModelResponse {
  /**
   * The provider's id of this reply, when it sent one: `msg_…` on Anthropic (`message_start`
   * or the body), `chatcmpl-…` on OpenAI-compatible APIs (the chunks or the body). Not the HTTP
   * request id ({@link ModelResponse.requestId}). Core's `model_request_finished` trace event
   * carries it as `responseId`.
   */
  id?: string;
  /**
   * The model named in the reply, often a dated snapshot of the one asked for
   * (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`); `""` when the API named none (the
   * `@lattice/ai-sdk` bridge then gives the model's `modelId`). Core's `model_request_finished`
   * trace event carries it as `responseModel` (left out when `""`).
   */
  model: string;
  /**
   * The assistant message: text, thinking (with signature) and tool_use blocks with parsed
   * input, and opaque blocks (the API's own blocks the SDK does not model, such as Anthropic's
   * `server_tool_use`), to be sent back unchanged with the rest.
   */
  message: { role: "assistant"; content: ContentBlock[] };
  /** Why the model stopped. */
  stopReason: StopReason;
  /** The stop reason exactly as the API sent it, when it sent one. */
  rawStopReason?: string;
  /** Token counts. */
  usage: ModelUsage;
  /**
   * The server-side context edits the API applied (see `ModelRequest.contextManagement`), from
   * `context_management.applied_edits` (the `message_delta` event when streaming, the body
   * otherwise). Present only when the API sent them: an empty array when it was asked to edit
   * and had nothing to clear; absent for every other response.
   */
  contextEdits?: readonly ModelContextEdit[];
  /** The API's request id (`request-id` or `x-request-id` header), for support tickets. */
  requestId?: string;
  /** How many times the request was retried before it succeeded. */
  retries: number;
  /** Wall time from the first attempt to the end of the response, in milliseconds. */
  latencyMs: number;
}
