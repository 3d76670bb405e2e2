/**
 * The Chat Completions request shapes the adapter sends. They are checked against the official
 * `openai` types in `openai-wire.test.ts`, so they cannot drift.
 */

/** A text part of a message. */
export interface OpenAiTextPart {
  type: "text";
  text: string;
}

/** An image part of a user message. */
export interface OpenAiImagePart {
  type: "image_url";
  image_url: { url: string };
}

/** A function tool call in an assistant message. */
export interface OpenAiToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

/** A message on the wire. */
export type OpenAiMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | Array<OpenAiTextPart | OpenAiImagePart> }
  | { role: "assistant"; content: string | null; tool_calls?: Array<OpenAiToolCall> }
  | { role: "tool"; tool_call_id: string; content: string };

/** A function tool on the wire. */
export interface OpenAiTool {
  type: "function";
  function: {
    name: string;
    description?: string;
    parameters: { [keyword: string]: unknown };
    strict?: boolean;
  };
}

/** A tool choice on the wire. */
export type OpenAiToolChoice =
  | "auto"
  | "none"
  | "required"
  | { type: "function"; function: { name: string } };

/**
 * A JSON-schema response format on the wire (structured outputs): the answer's text is JSON
 * following `schema`, which strict mode (`strict: true`) enforces.
 */
export interface OpenAiJsonSchemaFormat {
  type: "json_schema";
  json_schema: {
    name: string;
    description?: string;
    schema: { [keyword: string]: unknown };
    strict: boolean;
  };
}

/** The body of `POST /chat/completions`. */
export interface OpenAiChatBody {
  model: string;
  messages: Array<OpenAiMessage>;
  max_tokens?: number;
  max_completion_tokens?: number;
  tools?: Array<OpenAiTool>;
  tool_choice?: OpenAiToolChoice;
  reasoning_effort?: "low" | "medium" | "high";
  temperature?: number;
  stop?: Array<string>;
  response_format?: OpenAiJsonSchemaFormat;
  stream?: boolean;
  stream_options?: { include_usage: boolean };
}
