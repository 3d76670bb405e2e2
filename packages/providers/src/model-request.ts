import type { ModelMessage } from "./content-blocks.js";

/**
 * How the model may use tools: `auto` (it decides), `any` (it must call one), `none` (it must
 * not), or `tool` (it must call the named one).
 */
export type ModelToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "any" }
  | { readonly type: "none" }
  | { readonly type: "tool"; readonly name: string };

/**
 * A tool as a model request describes it: plain data, no handler. Any object with these fields
 * will do (a `ToolDefinition` from `@lattice/tools` is one). Adapters convert each spec once and
 * cache the result per object, so pass the same objects from turn to turn.
 */
export interface ModelToolSpec {
  /** The name the model calls the tool by. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /**
   * The JSON Schema of the tool's input, an object schema. `$schema` is removed before sending;
   * OpenAI-compatible adapters adjust it for strict mode when `strict` is `true`.
   */
  readonly inputSchema: { readonly [keyword: string]: unknown };
  /**
   * Ask OpenAI-compatible providers for strict function calling (`strict: true`). Absent means
   * not strict. The Anthropic adapter ignores it.
   */
  readonly strict?: boolean;
}

/**
 * Whether the Anthropic adapter places prompt-cache breakpoints: `"auto"` places them, `"off"`
 * sends the request as it is. See {@link ModelRequest.promptCaching}.
 */
export type PromptCachingMode = "auto" | "off";

/** Extended thinking with a token budget; see {@link ModelRequest.thinking}. */
export interface ModelThinking {
  /**
   * The most tokens the model may spend thinking. The Anthropic API requires at least 1024 and
   * less than `max_tokens`; the adapter raises `max_tokens` when needed (see
   * {@link ModelRequest.thinking}) and leaves the minimum to the API, whose 400 names it.
   */
  readonly budgetTokens: number;
}

/**
 * A JSON-schema output format the reply must follow (native structured output); see
 * {@link ModelRequest.output}. Adapters convert each format once and cache the result per
 * object, so pass the same object from turn to turn.
 */
export interface ModelOutputFormat {
  /** The only kind there is: a JSON Schema. */
  readonly type: "json_schema";
  /**
   * A name for the format (OpenAI's `json_schema.name`: letters, digits, `_` and `-`, at most 64
   * characters). The Anthropic API takes no name and does not get it.
   */
  readonly name: string;
  /**
   * The JSON Schema of the answer, an object schema (OpenAI's strict mode wants an object at the
   * root). `$schema` is removed before sending; each adapter adjusts the rest to what its API
   * accepts (OpenAI: strict mode, as for strict tools; Anthropic: the structured-outputs subset).
   */
  readonly schema: { readonly [keyword: string]: unknown };
  /**
   * What the answer is, for the model (OpenAI's `json_schema.description`; the Anthropic adapter
   * sends it as the schema's `description` when the schema has none).
   */
  readonly description?: string;
}

/**
 * Anthropic's server-side tool result clearing, `clear_tool_uses_20250919` (the SDK's
 * `BetaClearToolUses20250919Edit`): once the prompt passes `trigger`, the API replaces the oldest
 * tool results (and, with `clear_tool_inputs`, their inputs) by a placeholder before the model
 * reads them. The caller keeps the full conversation. Every field but `type` is optional; the
 * API's defaults apply (trigger 100,000 input tokens, keep 3 tool uses).
 */
export interface AnthropicClearToolUsesEdit {
  readonly type: "clear_tool_uses_20250919";
  /** Clear only when at least this many tokens can be removed. */
  readonly clear_at_least?: { readonly type: "input_tokens"; readonly value: number } | null;
  /** Also clear the tool calls' inputs: all (`true`) or those of the tools named. */
  readonly clear_tool_inputs?: boolean | readonly string[] | null;
  /** Tools whose uses are never cleared. */
  readonly exclude_tools?: readonly string[] | null;
  /** How many of the latest tool uses to keep. */
  readonly keep?: { readonly type: "tool_uses"; readonly value: number };
  /** When clearing starts: a prompt size in input tokens, or a number of tool uses. */
  readonly trigger?:
    | { readonly type: "input_tokens"; readonly value: number }
    | { readonly type: "tool_uses"; readonly value: number };
}

/**
 * Anthropic's server-side thinking clearing, `clear_thinking_20251015` (the SDK's
 * `BetaClearThinking20251015Edit`): with extended thinking, the thinking blocks of older
 * assistant turns are removed before the model reads them.
 */
export interface AnthropicClearThinkingEdit {
  readonly type: "clear_thinking_20251015";
  /** How many of the latest assistant turns keep their thinking: a number, or all of them. */
  readonly keep?:
    | { readonly type: "thinking_turns"; readonly value: number }
    | { readonly type: "all" }
    | "all";
}

/** One server-side context edit; see {@link AnthropicContextManagement}. */
export type AnthropicContextEdit = AnthropicClearToolUsesEdit | AnthropicClearThinkingEdit;

/**
 * Anthropic's server-side context editing, sent as `context_management` (the SDK's
 * `BetaContextManagementConfig`, with readonly fields and the wire's snake_case names): edits the
 * API applies to the prompt before the model reads it, in order. See
 * {@link ModelRequest.contextManagement}.
 *
 * @example
 * ```ts
 * const contextManagement: AnthropicContextManagement = {
 *   edits: [
 *     {
 *       type: "clear_tool_uses_20250919",
 *       trigger: { type: "input_tokens", value: 100_000 },
 *       keep: { type: "tool_uses", value: 3 },
 *     },
 *   ],
 * };
 * ```
 */
export interface AnthropicContextManagement {
  /** The edits to apply, in order. */
  readonly edits: readonly AnthropicContextEdit[];
}

/** How much an OpenAI-compatible reasoning model should reason: `reasoning_effort`. */
export type ReasoningEffort = "low" | "medium" | "high";

/** A normalised model request, the same for every provider. */
export interface ModelRequest {
  /** The model id, for example `"claude-sonnet-4-6"` or `"deepseek-v4-flash"`. */
  readonly model: string;
  /** The system prompt. */
  readonly system?: string;
  /** The conversation so far, oldest first. */
  readonly messages: readonly ModelMessage[];
  /** The tools the model may call; their `inputSchema` is adjusted per provider. */
  readonly tools?: readonly ModelToolSpec[];
  /**
   * How the model may use the tools. Default: the API's default (`auto`). Anthropic rejects
   * `any` and `tool` together with `thinking`.
   */
  readonly toolChoice?: ModelToolChoice;
  /**
   * The most tokens the reply may have. With Anthropic `thinking`, thinking counts towards it,
   * as the API counts it (see {@link ModelRequest.thinking}).
   */
  readonly maxTokens: number;
  /**
   * Sampling temperature. Default: the API's default. The Anthropic adapter does not send it
   * when `thinking` is set, since the API accepts no temperature with thinking.
   */
  readonly temperature?: number;
  /** Strings that end the reply when generated (Anthropic `stop_sequences`, OpenAI `stop`). */
  readonly stopSequences?: readonly string[];
  /**
   * Anthropic prompt caching. `"auto"` puts `cache_control: { type: "ephemeral" }` breakpoints,
   * at most four per request counting any already in the messages, in this order of priority:
   * on the latest message's last block, on the system prompt (sent as a text block), on the
   * last tool, and on the previous user message's last block (where the previous turn's
   * breakpoint was, so a turn that adds many blocks still finds it). A tool loop then re-reads
   * its growing prefix from the cache on every turn.
   *
   * Default: the provider's `promptCaching` option, which defaults to `"auto"` for
   * api.anthropic.com and `"off"` for any other base URL. Other adapters ignore it
   * (OpenAI caches prompts by itself and reports it in the usage).
   */
  readonly promptCaching?: PromptCachingMode;
  /**
   * Anthropic extended thinking: `thinking: { type: "enabled", budget_tokens }`. When
   * `maxTokens` is not above `budgetTokens`, the adapter sends
   * `max_tokens = budgetTokens + maxTokens`, so the reply keeps `maxTokens` after a full
   * thinking budget; otherwise `max_tokens = maxTokens`, as the API counts thinking in it.
   * `temperature` is then not sent. OpenAI-compatible adapters ignore it (see
   * `reasoningEffort`).
   */
  readonly thinking?: ModelThinking;
  /**
   * OpenAI-compatible reasoning models: sent as `reasoning_effort`. The Anthropic adapter
   * ignores it (see `thinking`).
   */
  readonly reasoningEffort?: ReasoningEffort;
  /**
   * Native structured output: the reply's text is JSON following `output.schema`. OpenAI-compatible
   * adapters send `response_format: { type: "json_schema", json_schema: { …, strict: true } }`;
   * the Anthropic adapter sends `output_config: { format: { type: "json_schema", schema } }`.
   * Adapters send it whenever it is given; whether an endpoint accepts it is
   * `ModelProviderV1.nativeOutput`, which callers check before giving it. The answer comes
   * back as an ordinary text block holding the JSON; a refusal ends with stop reason
   * `"refusal"` and its text as a text block.
   */
  readonly output?: ModelOutputFormat;
  /**
   * Anthropic server-side context editing: sent as it is as `context_management`, with the beta
   * `context-management-2025-06-27` added to the `anthropic-beta` header (after any betas the
   * provider's `headers` already send). What the API cleared comes back in
   * `ModelResponse.contextEdits`. Whether an endpoint applies it is
   * `ModelProviderV1.contextEditing`; the OpenAI-compatible adapter ignores it.
   */
  readonly contextManagement?: AnthropicContextManagement;
  /** Aborts the HTTP request at once; the stream then throws an error named `AbortError`. */
  readonly signal?: AbortSignal;
  /** Stream the reply over SSE. Default `true`; `false` makes one non-streaming request. */
  readonly stream?: boolean;
}
