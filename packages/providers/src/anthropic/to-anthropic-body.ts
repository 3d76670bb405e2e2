import type { AnyToolDefinition } from "@lattice/tools";
import type { ContentBlock, ModelMessage } from "../content-blocks.js";
import type { ModelRequest } from "../model-request.js";
import type {
  AnthropicContentParam,
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicToolParam,
} from "./anthropic-wire.js";

const toolCache = new WeakMap<AnyToolDefinition, AnthropicToolParam>();

/**
 * Builds the Messages API body for a request. The SDK's message format is Anthropic's, so
 * messages pass through as they are; only tool_use blocks carrying `inputError` are copied
 * without it. Tool definitions are converted once per definition and cached.
 *
 * @param request - The normalised request.
 * @param stream - Whether to ask for SSE.
 */
export function toAnthropicBody(request: ModelRequest, stream: boolean): AnthropicMessagesBody {
  const body: AnthropicMessagesBody = {
    model: request.model,
    max_tokens: request.maxTokens,
    messages: toAnthropicMessages(request.messages),
  };
  if (request.system !== undefined && request.system !== "") body.system = request.system;
  if (request.tools !== undefined && request.tools.length > 0) {
    body.tools = request.tools.map(toAnthropicTool);
  }
  if (request.toolChoice !== undefined) {
    body.tool_choice =
      request.toolChoice.type === "tool"
        ? { type: "tool", name: request.toolChoice.name }
        : { type: request.toolChoice.type };
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    body.stop_sequences = [...request.stopSequences];
  }
  if (stream) body.stream = true;
  return body;
}

function toAnthropicMessages(messages: readonly ModelMessage[]): AnthropicMessageParam[] {
  const out = new Array<AnthropicMessageParam>(messages.length);
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    const content = message.content;
    if (typeof content === "string" || !needsCopy(content)) {
      out[index] = message as AnthropicMessageParam;
    } else {
      out[index] = { role: message.role, content: content.map(toWireBlock) };
    }
  }
  return out;
}

function needsCopy(content: readonly ContentBlock[]): boolean {
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    if (block.type === "tool_use" && "inputError" in block) return true;
  }
  return false;
}

function toWireBlock(block: ContentBlock): AnthropicContentParam {
  if (block.type === "tool_use") {
    return { type: "tool_use", id: block.id, name: block.name, input: block.input };
  }
  return block as AnthropicContentParam;
}

/**
 * The Messages API form of a tool: name, description and the input schema without `$schema`.
 * Cached per definition.
 *
 * @param definition - The tool.
 */
export function toAnthropicTool(definition: AnyToolDefinition): AnthropicToolParam {
  let tool = toolCache.get(definition);
  if (tool === undefined) {
    const { $schema: _ignored, ...schema } = definition.inputSchema as Record<string, unknown>;
    tool = {
      name: definition.name,
      description: definition.description,
      input_schema: schema as AnthropicToolParam["input_schema"],
    };
    toolCache.set(definition, tool);
  }
  return tool;
}
