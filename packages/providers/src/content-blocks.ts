import type { ImageBlock, TextBlock } from "@lattice/tools";

/**
 * A model's visible reasoning. `signature` must be sent back unchanged on the next turn:
 * Claude and DeepSeek reject a turn that drops or edits it.
 */
export interface ThinkingBlock {
  readonly type: "thinking";
  /** The reasoning text. */
  readonly thinking: string;
  /** An opaque integrity token from the API; empty when the API sent none. */
  readonly signature: string;
}

/** Reasoning the API encrypted; `data` must be sent back unchanged on the next turn. */
export interface RedactedThinkingBlock {
  readonly type: "redacted_thinking";
  /** The encrypted reasoning, opaque to the SDK. */
  readonly data: string;
}

/**
 * A tool call made by the model.
 *
 * When the streamed or returned input JSON did not parse, `input` is `{}` and `inputError` says
 * what was wrong, naming the tool; the caller should answer the call with an `is_error`
 * tool_result. Adapters never send `inputError` on the wire.
 */
export interface ToolUseBlock {
  readonly type: "tool_use";
  /** The call's id, answered by a {@link ToolResultBlock} with the same `tool_use_id`. */
  readonly id: string;
  /** The tool's name. */
  readonly name: string;
  /** The parsed input (an object), or `{}` when it did not parse. */
  readonly input: unknown;
  /** Present only when the input JSON did not parse: what was wrong, naming the tool. */
  readonly inputError?: string;
}

/** The answer to a {@link ToolUseBlock}, sent in the next user message. */
export interface ToolResultBlock {
  readonly type: "tool_result";
  /** The `id` of the tool_use block this result answers. */
  readonly tool_use_id: string;
  /** The result: a string, or text and image blocks. */
  readonly content: string | readonly (TextBlock | ImageBlock)[];
  /** Marks a failed call. Absent means `false`. */
  readonly is_error?: boolean;
}

/**
 * A block of a type the SDK does not model, kept verbatim so that it can be sent back unchanged
 * on the next turn: Anthropic's server-side blocks (`server_tool_use`, `web_search_tool_result`,
 * `code_execution_tool_result`, …) and any block type an API adds later.
 *
 * The API's object is kept whole in `block`, with its original `type`; the wrapper's own
 * `type` is always `"opaque"`, so narrowing a {@link ContentBlock} on `type === "text"`,
 * `"tool_use"` and the rest works as before (a bare `type: string` member would defeat it).
 *
 * Adapters send an opaque block back only to the API it came from (`provider` equals their
 * `ModelProviderV1.name`), as `block` exactly; every other adapter skips it. The Anthropic
 * adapter sends back blocks whose `provider` is `"anthropic"`; the OpenAI-compatible adapter
 * skips all of them.
 *
 * @example
 * ```ts
 * for (const block of response.message.content) {
 *   if (block.type === "opaque" && block.block.type === "server_tool_use") {
 *     console.log("searched the web for", block.block.input);
 *   }
 * }
 * ```
 */
export interface OpaqueBlock {
  readonly type: "opaque";
  /** The `name` of the provider whose API produced the block, for example `"anthropic"`. */
  readonly provider: string;
  /** The block exactly as the API sent it (streamed input assembled), with its own `type`. */
  readonly block: { readonly type: string; readonly [key: string]: unknown };
}

/** Any block of a {@link ModelMessage}; wire names follow the Anthropic Messages API. */
export type ContentBlock =
  | TextBlock
  | ImageBlock
  | ThinkingBlock
  | RedactedThinkingBlock
  | ToolUseBlock
  | ToolResultBlock
  | OpaqueBlock;

/**
 * One message of a conversation in the SDK's normalised format (Anthropic-style blocks).
 * A user message answering tool calls carries its `tool_result` blocks first.
 */
export interface ModelMessage {
  /** Who speaks. */
  readonly role: "user" | "assistant";
  /** Plain text, or content blocks. */
  readonly content: string | readonly ContentBlock[];
}
