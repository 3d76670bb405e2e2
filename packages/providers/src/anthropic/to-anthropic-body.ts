import type { ContentBlock, ModelMessage } from "../content-blocks.js";
import type { ModelOutputFormat, ModelRequest, ModelToolSpec } from "../model-request.js";
import type {
  AnthropicContentParam,
  AnthropicCountTokensBody,
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicOpaqueParam,
  AnthropicOutputConfigParam,
  AnthropicToolParam,
} from "./anthropic-wire.js";
import { placeCacheBreakpoints } from "./place-cache-breakpoints.js";
import { toAnthropicOutputSchema } from "./to-anthropic-output-schema.js";

const toolCache = new WeakMap<ModelToolSpec, AnthropicToolParam>();
const outputCache = new WeakMap<ModelOutputFormat, AnthropicOutputConfigParam>();
/** The name opaque blocks from this adapter carry; only those are sent back. */
const PROVIDER = "anthropic";

/**
 * Builds the Messages API body for a request. The SDK's message format is Anthropic's, so
 * messages pass through as they are, except that tool_use blocks carrying `inputError` are
 * copied without it, opaque blocks from this adapter are replaced by the API's block they hold
 * (opaque blocks of other providers are left out), and, with `promptCaching`, the blocks that
 * get a cache breakpoint are copied with `cache_control`. Tool specs are converted once per
 * object and cached.
 *
 * With `request.thinking`, `thinking: { type: "enabled", budget_tokens }` is sent,
 * `max_tokens` is `maxTokens` when it is above the budget and `budgetTokens + maxTokens`
 * otherwise, and `temperature` is not sent.
 *
 * With `request.output`, `output_config: { format: { type: "json_schema", schema } }` is sent
 * (see {@link toAnthropicOutputConfig}). `request.contextManagement` is sent as it is as
 * `context_management` (the caller adds its beta header).
 *
 * @param request - The normalised request.
 * @param stream - Whether to ask for SSE.
 * @param promptCaching - Whether to place cache breakpoints (see `ModelRequest.promptCaching`).
 */
export function toAnthropicBody(
  request: ModelRequest,
  stream: boolean,
  promptCaching = false,
): AnthropicMessagesBody {
  const thinking = request.thinking;
  const body: AnthropicMessagesBody = {
    model: request.model,
    max_tokens:
      thinking === undefined || request.maxTokens > thinking.budgetTokens
        ? request.maxTokens
        : thinking.budgetTokens + request.maxTokens,
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
  if (thinking !== undefined) {
    body.thinking = { type: "enabled", budget_tokens: thinking.budgetTokens };
  } else if (request.temperature !== undefined) {
    body.temperature = request.temperature;
  }
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    body.stop_sequences = [...request.stopSequences];
  }
  if (request.output !== undefined) body.output_config = toAnthropicOutputConfig(request.output);
  if (request.contextManagement !== undefined) {
    body.context_management = request.contextManagement;
  }
  if (stream) body.stream = true;
  if (promptCaching) placeCacheBreakpoints(body);
  return body;
}

/**
 * Builds the `POST /v1/messages/count_tokens` body for a request: the messages body
 * ({@link toAnthropicBody}, cache breakpoints included) without `max_tokens`, `temperature`,
 * `stop_sequences` and `stream`, which the endpoint does not take.
 *
 * @param request - The normalised request.
 * @param promptCaching - Whether to place cache breakpoints, as the messages request would.
 */
export function toAnthropicCountTokensBody(
  request: ModelRequest,
  promptCaching = false,
): AnthropicCountTokensBody {
  const {
    max_tokens: _maxTokens,
    temperature: _temperature,
    stop_sequences: _stopSequences,
    stream: _stream,
    ...body
  } = toAnthropicBody(request, false, promptCaching);
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
      const blocks: Array<AnthropicContentParam | AnthropicOpaqueParam> = [];
      for (const block of content) {
        const wire = toWireBlock(block);
        if (wire !== undefined) blocks.push(wire);
      }
      out[index] = { role: message.role, content: blocks };
    }
  }
  return out;
}

function needsCopy(content: readonly ContentBlock[]): boolean {
  for (let index = 0; index < content.length; index++) {
    const block = content[index]!;
    if (block.type === "opaque") return true;
    if (block.type === "tool_use" && "inputError" in block) return true;
  }
  return false;
}

function toWireBlock(
  block: ContentBlock,
): AnthropicContentParam | AnthropicOpaqueParam | undefined {
  if (block.type === "tool_use") {
    return { type: "tool_use", id: block.id, name: block.name, input: block.input };
  }
  if (block.type === "opaque") {
    return block.provider === PROVIDER ? (block.block as AnthropicOpaqueParam) : undefined;
  }
  return block as AnthropicContentParam;
}

/**
 * The Messages API form of a tool: name, description and the input schema without `$schema`.
 * Cached per spec object.
 *
 * @param spec - The tool.
 */
export function toAnthropicTool(spec: ModelToolSpec): AnthropicToolParam {
  let tool = toolCache.get(spec);
  if (tool === undefined) {
    const { $schema: _ignored, ...schema } = spec.inputSchema;
    tool = {
      name: spec.name,
      description: spec.description,
      input_schema: schema as AnthropicToolParam["input_schema"],
    };
    toolCache.set(spec, tool);
  }
  return tool;
}

/**
 * The Messages API form of a native output format:
 * `{ format: { type: "json_schema", schema } }`, the schema adapted by
 * `toAnthropicOutputSchema` after `format.description` is set as the root's `description` when
 * the schema has none (the API takes no name; `format.name` is not sent). Cached per format
 * object.
 *
 * @param format - The output format.
 */
export function toAnthropicOutputConfig(format: ModelOutputFormat): AnthropicOutputConfigParam {
  let config = outputCache.get(format);
  if (config === undefined) {
    const source = format.schema;
    const described =
      format.description !== undefined && source.description === undefined
        ? { ...source, description: format.description }
        : source;
    config = { format: { type: "json_schema", schema: toAnthropicOutputSchema(described) } };
    outputCache.set(format, config);
  }
  return config;
}
