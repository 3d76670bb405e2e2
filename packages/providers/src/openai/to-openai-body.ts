import type { ImageBlock, TextBlock } from "@lattice/tools";
import type { ModelMessage, ToolResultBlock } from "../content-blocks.js";
import type { ModelOutputFormat, ModelRequest, ModelToolSpec } from "../model-request.js";
import type {
  OpenAiChatBody,
  OpenAiImagePart,
  OpenAiJsonSchemaFormat,
  OpenAiMessage,
  OpenAiTextPart,
  OpenAiTool,
  OpenAiToolCall,
} from "./openai-wire.js";
import { toStrictSchema } from "./to-strict-schema.js";

const toolCache = new WeakMap<ModelToolSpec, OpenAiTool>();
const formatCache = new WeakMap<ModelOutputFormat, OpenAiJsonSchemaFormat>();
/**
 * What joins the text blocks of one assistant message into the single `content` string Chat
 * Completions takes. Blocks are separate units of text (paragraphs around a tool call or a
 * thinking block), so gluing them (`"A" + "B"` → `"AB"`) would merge words and sentences; one
 * newline keeps them apart without adding blank lines, the same separator the user side and
 * tool results use.
 */
export const ASSISTANT_TEXT_SEPARATOR = "\n";

/** Which request field carries the token limit. */
export type MaxTokensParameter = "max_tokens" | "max_completion_tokens";

/**
 * Builds the Chat Completions body for a request.
 *
 * The system prompt becomes a `system` message; assistant text and tool_use blocks become one
 * assistant message with `tool_calls`, its text blocks joined by
 * {@link ASSISTANT_TEXT_SEPARATOR} (thinking and opaque blocks are not sent back: these APIs
 * do not take them);
 * tool_result blocks become `tool` messages, in order, and the rest of a user message follows
 * as a `user` message. Images in tool results, which `tool` messages cannot carry, follow in
 * that user message. `is_error` results are prefixed with `Error: ` when their text does not
 * say so already. Streaming asks for usage with `stream_options.include_usage`.
 * `reasoningEffort` becomes `reasoning_effort`; `thinking` and `promptCaching` are Anthropic's
 * and not sent. `output` becomes `response_format` (see {@link toOpenAiResponseFormat}).
 *
 * @param request - The normalised request.
 * @param stream - Whether to ask for SSE.
 * @param maxTokensParameter - Which field carries `maxTokens`.
 */
export function toOpenAiBody(
  request: ModelRequest,
  stream: boolean,
  maxTokensParameter: MaxTokensParameter,
): OpenAiChatBody {
  const body: OpenAiChatBody = { model: request.model, messages: toOpenAiMessages(request) };
  body[maxTokensParameter] = request.maxTokens;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(toOpenAiTool);
  }
  const choice = request.toolChoice;
  if (choice !== undefined) {
    body.tool_choice =
      choice.type === "tool"
        ? { type: "function", function: { name: choice.name } }
        : choice.type === "any"
          ? "required"
          : choice.type;
  }
  if (request.reasoningEffort !== undefined) body.reasoning_effort = request.reasoningEffort;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    body.stop = [...request.stopSequences];
  }
  if (request.output !== undefined) body.response_format = toOpenAiResponseFormat(request.output);
  if (stream) {
    body.stream = true;
    body.stream_options = { include_usage: true };
  }
  return body;
}

function toOpenAiMessages(request: ModelRequest): OpenAiMessage[] {
  const out: OpenAiMessage[] = [];
  if (request.system !== undefined && request.system !== "") {
    out.push({ role: "system", content: request.system });
  }
  for (const message of request.messages) {
    if (message.role === "assistant") out.push(toAssistantMessage(message));
    else pushUserMessages(out, message);
  }
  return out;
}

function toAssistantMessage(message: ModelMessage): OpenAiMessage {
  const content = message.content;
  if (typeof content === "string") return { role: "assistant", content };
  let text = "";
  let toolCalls: OpenAiToolCall[] | undefined;
  // Thinking, redacted thinking and opaque blocks (another API's own blocks, such as
  // Anthropic's server_tool_use) are left out: Chat Completions has no place for them.
  for (const block of content) {
    if (block.type === "text") {
      if (block.text !== "") {
        text += text === "" ? block.text : ASSISTANT_TEXT_SEPARATOR + block.text;
      }
    } else if (block.type === "tool_use") {
      toolCalls ??= [];
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    }
  }
  if (toolCalls === undefined) return { role: "assistant", content: text };
  return { role: "assistant", content: text === "" ? null : text, tool_calls: toolCalls };
}

function pushUserMessages(out: OpenAiMessage[], message: ModelMessage): void {
  const content = message.content;
  if (typeof content === "string") {
    out.push({ role: "user", content });
    return;
  }
  const parts: Array<OpenAiTextPart | OpenAiImagePart> = [];
  for (const block of content) {
    if (block.type === "tool_result") {
      out.push({
        role: "tool",
        tool_call_id: block.tool_use_id,
        content: toolResultText(block, parts),
      });
    } else if (block.type === "text") {
      parts.push({ type: "text", text: block.text });
    } else if (block.type === "image") {
      parts.push(toImagePart(block));
    }
  }
  if (parts.length === 0) return;
  const onlyText = parts.every((part) => part.type === "text");
  out.push({
    role: "user",
    content: onlyText ? parts.map((part) => (part as OpenAiTextPart).text).join("\n") : parts,
  });
}

function toolResultText(
  block: ToolResultBlock,
  userParts: Array<OpenAiTextPart | OpenAiImagePart>,
): string {
  let text: string;
  if (typeof block.content === "string") {
    text = block.content;
  } else {
    text = "";
    let images = 0;
    for (const item of block.content as readonly (TextBlock | ImageBlock)[]) {
      if (item.type === "text") text += text === "" ? item.text : `\n${item.text}`;
      else {
        images++;
        userParts.push(toImagePart(item));
      }
    }
    if (images > 0) {
      text += `${text === "" ? "" : "\n"}[${images} image${images === 1 ? "" : "s"} attached in the next user message]`;
    }
  }
  if (block.is_error === true && !/^error\b/i.test(text)) text = `Error: ${text}`;
  return text;
}

function toImagePart(block: ImageBlock): OpenAiImagePart {
  const source = block.source;
  return {
    type: "image_url",
    image_url: {
      url: source.type === "url" ? source.url : `data:${source.media_type};base64,${source.data}`,
    },
  };
}

/**
 * The Chat Completions form of a tool: a function with the input schema as `parameters`
 * (without `$schema`), adjusted for strict mode when the tool sets `strict: true`. Cached per
 * spec object.
 *
 * @param definition - The tool.
 */
export function toOpenAiTool(definition: ModelToolSpec): OpenAiTool {
  let tool = toolCache.get(definition);
  if (tool === undefined) {
    const source = definition.inputSchema;
    let parameters: Record<string, unknown>;
    if (definition.strict === true) {
      parameters = toStrictSchema(source);
    } else {
      const { $schema: _ignored, ...rest } = source;
      parameters = rest;
    }
    tool = {
      type: "function",
      function: { name: definition.name, description: definition.description, parameters },
    };
    if (definition.strict === true) tool.function.strict = true;
    toolCache.set(definition, tool);
  }
  return tool;
}

/**
 * The Chat Completions form of a native output format:
 * `{ type: "json_schema", json_schema: { name, description?, strict: true, schema } }`, the
 * schema made strict as for strict tools ({@link toStrictSchema}: `$schema` dropped, every
 * object closed with all its properties required, optional ones nullable). Cached per format
 * object.
 *
 * @param format - The output format.
 */
export function toOpenAiResponseFormat(format: ModelOutputFormat): OpenAiJsonSchemaFormat {
  let wire = formatCache.get(format);
  if (wire === undefined) {
    const schema = toStrictSchema(format.schema);
    const { name, description } = format;
    wire = {
      type: "json_schema",
      json_schema:
        description === undefined
          ? { name, strict: true, schema }
          : { name, description, strict: true, schema },
    };
    formatCache.set(format, wire);
  }
  return wire;
}
