import type { AnthropicContextManagement } from "../model-request.js";

/**
 * The Anthropic Messages API request shapes the adapter sends. They are checked against the
 * official `@anthropic-ai/sdk` types in `anthropic-wire.test.ts`, so they cannot drift. Opaque
 * blocks (server-side blocks sent back verbatim) are the one exception: their shape is the
 * API's own, whatever it is.
 */

/** A prompt-cache breakpoint. */
export interface AnthropicCacheControl {
  type: "ephemeral";
  ttl?: "5m" | "1h";
}

/** A text block on the wire. */
export interface AnthropicTextParam {
  type: "text";
  text: string;
  cache_control?: AnthropicCacheControl;
}

/** An image block on the wire. */
export interface AnthropicImageParam {
  type: "image";
  source:
    | {
        type: "base64";
        media_type: "image/jpeg" | "image/png" | "image/gif" | "image/webp";
        data: string;
      }
    | { type: "url"; url: string };
  cache_control?: AnthropicCacheControl;
}

/** A thinking block sent back unchanged. */
export interface AnthropicThinkingParam {
  type: "thinking";
  thinking: string;
  signature: string;
}

/** A redacted thinking block sent back unchanged. */
export interface AnthropicRedactedThinkingParam {
  type: "redacted_thinking";
  data: string;
}

/** A tool call on the wire (never with `inputError`). */
export interface AnthropicToolUseParam {
  type: "tool_use";
  id: string;
  name: string;
  input: unknown;
  cache_control?: AnthropicCacheControl;
}

/** A tool result on the wire. */
export interface AnthropicToolResultParam {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextParam | AnthropicImageParam>;
  is_error?: boolean;
  cache_control?: AnthropicCacheControl;
}

/** Any block the adapter models. */
export type AnthropicContentParam =
  | AnthropicTextParam
  | AnthropicImageParam
  | AnthropicThinkingParam
  | AnthropicRedactedThinkingParam
  | AnthropicToolUseParam
  | AnthropicToolResultParam;

/**
 * A block the adapter does not model (`server_tool_use`, `web_search_tool_result`, future
 * types), sent back exactly as the API produced it.
 */
export interface AnthropicOpaqueParam {
  type: string;
  cache_control?: AnthropicCacheControl;
  [key: string]: unknown;
}

/** A message on the wire, whose blocks may include opaque ones. */
export interface AnthropicMessageParam<Block = AnthropicContentParam | AnthropicOpaqueParam> {
  role: "user" | "assistant";
  content: string | Array<Block>;
}

/** A client tool on the wire. */
export interface AnthropicToolParam {
  name: string;
  description?: string;
  input_schema: {
    type: "object";
    properties?: unknown;
    required?: Array<string> | null;
    [keyword: string]: unknown;
  };
  cache_control?: AnthropicCacheControl;
}

/** A tool choice on the wire. */
export type AnthropicToolChoiceParam =
  | { type: "auto" }
  | { type: "any" }
  | { type: "none" }
  | { type: "tool"; name: string };

/** Extended thinking on the wire. */
export interface AnthropicThinkingConfigParam {
  type: "enabled";
  budget_tokens: number;
}

/**
 * Structured output on the wire: the answer's text is JSON following `format.schema`, a schema
 * in the subset the API accepts (see `toAnthropicOutputSchema`).
 */
export interface AnthropicOutputConfigParam {
  format: { type: "json_schema"; schema: { [keyword: string]: unknown } };
}

/**
 * The body of `POST /v1/messages`. `Block` is the type of message blocks: the default includes
 * opaque blocks; the wire test checks the body with modelled blocks only against the SDK.
 */
export interface AnthropicMessagesBody<Block = AnthropicContentParam | AnthropicOpaqueParam> {
  model: string;
  max_tokens: number;
  messages: Array<AnthropicMessageParam<Block>>;
  system?: string | Array<AnthropicTextParam>;
  tools?: Array<AnthropicToolParam>;
  tool_choice?: AnthropicToolChoiceParam;
  thinking?: AnthropicThinkingConfigParam;
  temperature?: number;
  stop_sequences?: Array<string>;
  output_config?: AnthropicOutputConfigParam;
  /** Server-side context editing (beta `context-management-2025-06-27`), sent as given. */
  context_management?: AnthropicContextManagement;
  stream?: boolean;
}

/**
 * The body of `POST /v1/messages/count_tokens`: a messages body without the fields that do not
 * change the prompt and that the endpoint does not take (the SDK's `MessageCountTokensParams`).
 */
export type AnthropicCountTokensBody<Block = AnthropicContentParam | AnthropicOpaqueParam> = Omit<
  AnthropicMessagesBody<Block>,
  "max_tokens" | "temperature" | "stop_sequences" | "stream"
>;
