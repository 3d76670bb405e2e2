/**
 * The Anthropic Messages API request shapes the adapter sends. They are checked against the
 * official `@anthropic-ai/sdk` types in `anthropic-wire.test.ts`, so they cannot drift.
 */

/** A text block on the wire. */
export interface AnthropicTextParam {
  type: "text";
  text: string;
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
}

/** A tool result on the wire. */
export interface AnthropicToolResultParam {
  type: "tool_result";
  tool_use_id: string;
  content?: string | Array<AnthropicTextParam | AnthropicImageParam>;
  is_error?: boolean;
}

/** Any block the adapter sends. */
export type AnthropicContentParam =
  | AnthropicTextParam
  | AnthropicImageParam
  | AnthropicThinkingParam
  | AnthropicRedactedThinkingParam
  | AnthropicToolUseParam
  | AnthropicToolResultParam;

/** A message on the wire. */
export interface AnthropicMessageParam {
  role: "user" | "assistant";
  content: string | Array<AnthropicContentParam>;
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
}

/** A tool choice on the wire. */
export type AnthropicToolChoiceParam =
  | { type: "auto" }
  | { type: "any" }
  | { type: "none" }
  | { type: "tool"; name: string };

/** The body of `POST /v1/messages`. */
export interface AnthropicMessagesBody {
  model: string;
  max_tokens: number;
  messages: Array<AnthropicMessageParam>;
  system?: string;
  tools?: Array<AnthropicToolParam>;
  tool_choice?: AnthropicToolChoiceParam;
  temperature?: number;
  stop_sequences?: Array<string>;
  stream?: boolean;
}
