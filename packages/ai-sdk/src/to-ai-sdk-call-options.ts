import type {
  JSONSchema7,
  LanguageModelV3CallOptions,
  LanguageModelV3FilePart,
  LanguageModelV3FunctionTool,
  LanguageModelV3Message,
  LanguageModelV3Prompt,
  LanguageModelV3TextPart,
  LanguageModelV3ToolChoice,
  LanguageModelV3ToolResultOutput,
  LanguageModelV3ToolResultPart,
  SharedV3ProviderOptions,
} from "@ai-sdk/provider";
import type {
  ContentBlock,
  ModelMessage,
  ModelRequest,
  ModelToolChoice,
  ModelToolSpec,
  ToolResultBlock,
} from "@lattice/providers";
import type { ImageBlock, TextBlock } from "@lattice/tools";
import { AI_SDK_PROVIDER_NAME } from "./ai-sdk-opaque-part.js";
import { providerOptionsOf } from "./provider-metadata.js";

/** Which AI SDK language model specification a model implements. */
export type AiSdkSpecificationVersion = "v2" | "v3";

/** Per-call settings the bridge adds to every request. */
export interface CallExtras {
  /** Provider options sent with every call. */
  readonly providerOptions: SharedV3ProviderOptions | undefined;
  /** Extra HTTP headers sent with every call. */
  readonly headers: Readonly<Record<string, string>> | undefined;
}

type AssistantPart = Extract<LanguageModelV3Message, { role: "assistant" }>["content"][number];
type ToolContentPart = Extract<
  LanguageModelV3ToolResultOutput,
  { type: "content" }
>["value"][number];

const converted: Record<
  AiSdkSpecificationVersion,
  WeakMap<ModelMessage, LanguageModelV3Message[]>
> = { v2: new WeakMap(), v3: new WeakMap() };
const toolCache: Record<AiSdkSpecificationVersion, WeakMap<object, LanguageModelV3FunctionTool>> = {
  v2: new WeakMap(),
  v3: new WeakMap(),
};
const toolListCache: Record<
  AiSdkSpecificationVersion,
  WeakMap<readonly object[], LanguageModelV3FunctionTool[]>
> = { v2: new WeakMap(), v3: new WeakMap() };

/**
 * Builds the AI SDK call options for a Lattice request.
 *
 * - `system` → a `system` message; user text and images → `text` and `file` parts (a base64
 *   image keeps its media type; a URL image is passed as a `URL` with media type `image/*`).
 * - A user message's `tool_result` blocks → one `tool` message before the rest of that user
 *   message, each result named after its call; a string or text-only result → `text` (or
 *   `error-text` when `is_error`), text blocks joined with newlines; a result with images →
 *   `content` (V3 `image-data` / `image-url`; V2 `media`, a URL image as text), led by an
 *   `Error:` text part when `is_error`.
 * - Assistant text, thinking, image and tool_use blocks → `text`, `reasoning`, `file` and
 *   `tool-call` parts; a block's `providerMetadata` becomes the part's `providerOptions` (the
 *   AI SDK's round trip of signatures and item ids). The bridge's own opaque blocks
 *   (provider-executed calls and results) go back as the parts they hold; `redacted_thinking`
 *   and other adapters' opaque blocks are left out.
 * - `tools` → function tools (JSON Schema without `$schema`; `strict` on V3 only),
 *   `toolChoice` (`any` → `required`, `tool` → `{ type: "tool", toolName }`), `maxTokens` →
 *   `maxOutputTokens`, `temperature`, `stopSequences`.
 *
 * Converted messages are cached per message object, so a long run converts each message once.
 *
 * @param request - The Lattice request.
 * @param version - The model's specification version.
 * @param extras - Provider options and headers for every call.
 * @param abortSignal - The attempt's signal.
 */
export function toAiSdkCallOptions(
  request: ModelRequest,
  version: AiSdkSpecificationVersion,
  extras: CallExtras,
  abortSignal: AbortSignal,
): LanguageModelV3CallOptions {
  const options: LanguageModelV3CallOptions = {
    prompt: toPrompt(request, version),
    maxOutputTokens: request.maxTokens,
    abortSignal,
  };
  const tools = request.tools;
  if (tools !== undefined && tools.length > 0) options.tools = toTools(tools, version);
  if (request.toolChoice !== undefined) options.toolChoice = toToolChoice(request.toolChoice);
  if (request.temperature !== undefined) options.temperature = request.temperature;
  if (request.stopSequences !== undefined && request.stopSequences.length > 0) {
    options.stopSequences = [...request.stopSequences];
  }
  if (extras.providerOptions !== undefined) options.providerOptions = extras.providerOptions;
  if (extras.headers !== undefined) options.headers = { ...extras.headers };
  return options;
}

function toPrompt(
  request: ModelRequest,
  version: AiSdkSpecificationVersion,
): LanguageModelV3Prompt {
  const prompt: LanguageModelV3Prompt = [];
  if (request.system !== undefined && request.system !== "") {
    prompt.push({ role: "system", content: request.system });
  }
  const cache = converted[version];
  const messages = request.messages;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index]!;
    let out = cache.get(message);
    if (out === undefined) {
      out =
        message.role === "assistant"
          ? [toAssistantMessage(message)]
          : toUserMessages(message, messages, index, version);
      cache.set(message, out);
    }
    for (let position = 0; position < out.length; position++) prompt.push(out[position]!);
  }
  return prompt;
}

function toAssistantMessage(message: ModelMessage): LanguageModelV3Message {
  const content = message.content;
  if (typeof content === "string") {
    return { role: "assistant", content: content === "" ? [] : [{ type: "text", text: content }] };
  }
  const parts: AssistantPart[] = [];
  for (const block of content) {
    const providerOptions = providerOptionsOf(block);
    const extra = providerOptions === undefined ? {} : { providerOptions };
    switch (block.type) {
      case "text":
        parts.push({ type: "text", text: block.text, ...extra });
        break;
      case "thinking":
        parts.push({ type: "reasoning", text: block.thinking, ...extra });
        break;
      case "tool_use":
        parts.push({
          type: "tool-call",
          toolCallId: block.id,
          toolName: block.name,
          input: block.input ?? {},
          ...extra,
        });
        break;
      case "image":
        parts.push({ ...toFilePart(block), ...extra });
        break;
      case "opaque":
        // A provider-executed call or result kept by the bridge, sent back as it was stored;
        // opaque blocks of other adapters are theirs alone.
        if (block.provider === AI_SDK_PROVIDER_NAME)
          parts.push(block.block as unknown as AssistantPart);
        break;
      default:
        // redacted_thinking: the AI SDK has no part for it.
        break;
    }
  }
  return { role: "assistant", content: parts };
}

function toUserMessages(
  message: ModelMessage,
  messages: readonly ModelMessage[],
  index: number,
  version: AiSdkSpecificationVersion,
): LanguageModelV3Message[] {
  const content = message.content;
  if (typeof content === "string")
    return [{ role: "user", content: [{ type: "text", text: content }] }];
  const results: LanguageModelV3ToolResultPart[] = [];
  const parts: Array<LanguageModelV3TextPart | LanguageModelV3FilePart> = [];
  let names: Map<string, string> | undefined;
  for (const block of content) {
    if (block.type === "tool_result") {
      names ??= toolNames(messages, index);
      results.push({
        type: "tool-result",
        toolCallId: block.tool_use_id,
        toolName: names.get(block.tool_use_id) ?? "unknown",
        output: toToolOutput(block, version),
      });
    } else if (block.type === "text") {
      const providerOptions = providerOptionsOf(block);
      parts.push(
        providerOptions === undefined
          ? { type: "text", text: block.text }
          : { type: "text", text: block.text, providerOptions },
      );
    } else if (block.type === "image") {
      parts.push(toFilePart(block));
    }
  }
  const out: LanguageModelV3Message[] = [];
  if (results.length > 0) out.push({ role: "tool", content: results });
  if (parts.length > 0) out.push({ role: "user", content: parts });
  return out;
}

/** The names of the calls answered in message `index`, from the assistant messages before it. */
function toolNames(messages: readonly ModelMessage[], index: number): Map<string, string> {
  const names = new Map<string, string>();
  for (let position = index - 1; position >= 0; position--) {
    const content = messages[position]!.content;
    if (messages[position]!.role !== "assistant" || typeof content === "string") continue;
    for (const block of content as readonly ContentBlock[]) {
      if (block.type === "tool_use" && !names.has(block.id)) names.set(block.id, block.name);
    }
    if (names.size > 0) break;
  }
  return names;
}

function toToolOutput(
  block: ToolResultBlock,
  version: AiSdkSpecificationVersion,
): LanguageModelV3ToolResultOutput {
  const isError = block.is_error === true;
  const content = block.content;
  if (typeof content === "string") {
    return { type: isError ? "error-text" : "text", value: content };
  }
  const items = content as readonly (TextBlock | ImageBlock)[];
  if (items.every((item) => item.type === "text")) {
    const value = items.map((item) => (item as TextBlock).text).join("\n");
    return { type: isError ? "error-text" : "text", value };
  }
  const value: ToolContentPart[] = [];
  if (isError) value.push({ type: "text", text: "Error:" });
  for (const item of items) {
    if (item.type === "text") value.push({ type: "text", text: item.text });
    else value.push(toToolImage(item, version));
  }
  return { type: "content", value };
}

function toToolImage(block: ImageBlock, version: AiSdkSpecificationVersion): ToolContentPart {
  const source = block.source;
  if (version === "v3") {
    return source.type === "base64"
      ? { type: "image-data", data: source.data, mediaType: source.media_type }
      : { type: "image-url", url: source.url };
  }
  // V2 tool results carry base64 media only.
  return source.type === "base64"
    ? ({
        type: "media",
        data: source.data,
        mediaType: source.media_type,
      } as unknown as ToolContentPart)
    : { type: "text", text: `[image: ${source.url}]` };
}

function toFilePart(block: ImageBlock): LanguageModelV3FilePart {
  const source = block.source;
  return source.type === "base64"
    ? { type: "file", mediaType: source.media_type, data: source.data }
    : { type: "file", mediaType: "image/*", data: new URL(source.url) };
}

function toTools(
  tools: readonly ModelToolSpec[],
  version: AiSdkSpecificationVersion,
): LanguageModelV3FunctionTool[] {
  const lists = toolListCache[version];
  let list = lists.get(tools);
  if (list === undefined) {
    list = tools.map((definition) => toTool(definition, version));
    lists.set(tools, list);
  }
  return list;
}

function toTool(
  definition: ModelToolSpec,
  version: AiSdkSpecificationVersion,
): LanguageModelV3FunctionTool {
  const cache = toolCache[version];
  let tool = cache.get(definition);
  if (tool === undefined) {
    const { $schema: _ignored, ...schema } = (definition.inputSchema ?? {}) as Record<
      string,
      unknown
    >;
    tool = {
      type: "function",
      name: definition.name,
      description: definition.description,
      inputSchema: schema as JSONSchema7,
    };
    if (version === "v3" && definition.strict !== undefined) tool.strict = definition.strict;
    cache.set(definition, tool);
  }
  return tool;
}

function toToolChoice(choice: ModelToolChoice): LanguageModelV3ToolChoice {
  switch (choice.type) {
    case "any":
      return { type: "required" };
    case "tool":
      return { type: "tool", toolName: choice.name };
    default:
      return { type: choice.type };
  }
}
