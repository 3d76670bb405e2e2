import { validateContextManagement } from "./validate-context-management.js";

const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "max_tokens",
  "system",
  "tools",
  "tool_choice",
  "temperature",
  "top_p",
  "top_k",
  "stop_sequences",
  "stream",
  "metadata",
  "thinking",
  "service_tier",
  "output_config",
  "context_management",
]);
/** What `POST /v1/messages/count_tokens` takes (the SDK's `MessageCountTokensParams`). */
const COUNT_TOKENS_KEYS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "system",
  "tools",
  "tool_choice",
  "thinking",
  "output_config",
  "context_management",
]);
const OUTPUT_EFFORTS: ReadonlySet<unknown> = new Set(["low", "medium", "high", "xhigh", "max"]);
/** Structured-output constraints the API refuses, whatever their value. */
const UNSUPPORTED_SCHEMA_KEYWORDS: ReadonlySet<string> = new Set([
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "maxItems",
]);
const SERVER_RESULT_KEYS: ReadonlySet<string> = new Set([
  "type",
  "tool_use_id",
  "content",
  "cache_control",
  "caller",
]);
const BLOCK_KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  text: new Set(["type", "text", "cache_control", "citations"]),
  image: new Set(["type", "source", "cache_control"]),
  tool_use: new Set(["type", "id", "name", "input", "cache_control"]),
  tool_result: new Set(["type", "tool_use_id", "content", "is_error", "cache_control"]),
  thinking: new Set(["type", "thinking", "signature"]),
  redacted_thinking: new Set(["type", "data"]),
  server_tool_use: new Set(["type", "id", "name", "input", "cache_control", "caller"]),
  web_search_tool_result: SERVER_RESULT_KEYS,
  web_fetch_tool_result: SERVER_RESULT_KEYS,
  code_execution_tool_result: SERVER_RESULT_KEYS,
  bash_code_execution_tool_result: SERVER_RESULT_KEYS,
  text_editor_code_execution_tool_result: SERVER_RESULT_KEYS,
  tool_search_tool_result: SERVER_RESULT_KEYS,
};
const USER_BLOCKS: ReadonlySet<string> = new Set(["text", "image", "tool_result"]);
const ASSISTANT_BLOCKS: ReadonlySet<string> = new Set([
  "text",
  "tool_use",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "web_search_tool_result",
  "web_fetch_tool_result",
  "code_execution_tool_result",
  "bash_code_execution_tool_result",
  "text_editor_code_execution_tool_result",
  "tool_search_tool_result",
]);
const MAX_CACHE_BREAKPOINTS = 4;
const MIN_THINKING_BUDGET = 1024;
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,128}$/;

/**
 * Checks a Messages API request body the way the real API does, for the rules a client is most
 * likely to break. Returns the API-style error message, or `undefined` when the body is valid.
 *
 * Rejects: a missing `model` or `max_tokens`, unknown top-level keys, bad roles, unknown or
 * misplaced block types, extra keys in blocks (such as an SDK-internal `inputError`), empty
 * text blocks, a tool_use not answered by tool_result blocks in the very next user message,
 * tool_result blocks after other content or answering no tool_use, duplicate or invalid tool
 * names, a `tool_choice` naming an unknown tool, a `cache_control` that is not
 * `{ type: "ephemeral" }` or more than four of them, a system block list that is not of
 * non-empty text blocks, and extended thinking with a budget under 1024 or not below
 * `max_tokens`, with a `temperature` other than 1, or with a `tool_choice` forcing tool use,
 * and an `output_config` other than `{ effort?, format?: { type: "json_schema", schema } }`
 * whose schema has an object at the root, `additionalProperties: false` on every object, and
 * none of the constraints structured outputs refuse (`minimum`, `maximum`, `exclusiveMinimum`,
 * `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`, `maxItems`, `minItems` other than
 * 0 or 1).
 * Assistant messages may carry the API's server-side blocks (`server_tool_use`,
 * `web_search_tool_result`, …). A `context_management` is checked by
 * `validateContextManagement` (known edits with known fields, and the
 * `context-management-2025-06-27` beta in `anthropic-beta`).
 *
 * With `countTokens`, the body is a `POST /v1/messages/count_tokens` body: the same rules, but
 * no `max_tokens` is required, and `max_tokens`, `stream`, `temperature`, `stop_sequences` and
 * the other generation settings are refused as extra inputs.
 *
 * @param body - The parsed request body.
 * @param options - The endpoint (`countTokens`) and the request's `anthropic-beta` header
 *   (`betas`).
 */
export function validateAnthropicRequest(
  body: unknown,
  options: AnthropicRequestValidation = {},
): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return "The request body must be a JSON object.";
  }
  const request = body as Record<string, unknown>;
  const countTokens = options.countTokens === true;
  const allowed = countTokens ? COUNT_TOKENS_KEYS : TOP_LEVEL_KEYS;
  for (const key of Object.keys(request)) {
    if (!allowed.has(key)) return `${key}: Extra inputs are not permitted`;
  }
  if (typeof request.model !== "string" || request.model === "") return "model: Field required";
  const maxTokens = request.max_tokens;
  if (maxTokens === undefined) {
    if (!countTokens) return "max_tokens: Field required";
  } else if (typeof maxTokens !== "number" || !Number.isInteger(maxTokens) || maxTokens < 1) {
    return "max_tokens: Input should be a valid integer greater than or equal to 1";
  }
  if (request.stream !== undefined && typeof request.stream !== "boolean") {
    return "stream: Input should be a valid boolean";
  }
  if (request.system !== undefined && typeof request.system !== "string") {
    if (!Array.isArray(request.system)) return "system: Input should be a valid string or list";
    const systemError = validateSystemBlocks(request.system);
    if (systemError !== undefined) return systemError;
  }
  const toolError = validateTools(request.tools, request.tool_choice);
  if (toolError !== undefined) return toolError;
  const thinkingError = validateThinking(request);
  if (thinkingError !== undefined) return thinkingError;
  const outputError = validateOutputConfig(request.output_config);
  if (outputError !== undefined) return outputError;
  if (request.context_management !== undefined) {
    const contextError = validateContextManagement(request.context_management, options.betas);
    if (contextError !== undefined) return contextError;
  }
  const messageError = validateMessages(request.messages);
  if (messageError !== undefined) return messageError;
  return validateCacheControl(request);
}

/** What {@link validateAnthropicRequest} needs besides the body. */
export interface AnthropicRequestValidation {
  /** The body is for `POST /v1/messages/count_tokens`. Default `false`. */
  readonly countTokens?: boolean;
  /** The request's `anthropic-beta` header, comma-separated betas. */
  readonly betas?: string | undefined;
}

function validateSystemBlocks(blocks: unknown[]): string | undefined {
  for (let index = 0; index < blocks.length; index++) {
    const block = blocks[index] as Record<string, unknown> | null;
    if (block?.type !== "text") {
      return `system.${index}.type: Input should be 'text'`;
    }
    for (const key of Object.keys(block)) {
      if (!BLOCK_KEYS.text!.has(key))
        return `system.${index}.${key}: Extra inputs are not permitted`;
    }
    if (typeof block.text !== "string" || block.text === "") {
      return `system.${index}: text content blocks must be non-empty`;
    }
  }
  return undefined;
}

function validateThinking(request: Record<string, unknown>): string | undefined {
  const thinking = request.thinking as Record<string, unknown> | undefined;
  if (thinking === undefined) return undefined;
  if (thinking === null || typeof thinking !== "object") {
    return "thinking: Input should be a valid dictionary";
  }
  if (thinking.type === "disabled") return undefined;
  if (thinking.type !== "enabled") {
    return "thinking.type: Input tag does not match any of the expected tags: 'enabled', 'disabled'";
  }
  const budget = thinking.budget_tokens;
  if (typeof budget !== "number" || !Number.isInteger(budget)) {
    return "thinking.enabled.budget_tokens: Field required";
  }
  if (budget < MIN_THINKING_BUDGET) {
    return `thinking.enabled.budget_tokens: Input should be greater than or equal to ${MIN_THINKING_BUDGET}`;
  }
  if (typeof request.max_tokens === "number" && budget >= request.max_tokens) {
    return "`max_tokens` must be greater than `thinking.budget_tokens`. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#max-tokens-and-context-window-size";
  }
  if (request.temperature !== undefined && request.temperature !== 1) {
    return "`temperature` may only be set to 1 when thinking is enabled. Please consult our documentation at https://docs.claude.com/en/docs/build-with-claude/extended-thinking#feature-compatibility";
  }
  const choice = (request.tool_choice as Record<string, unknown> | undefined)?.type;
  if (choice === "any" || choice === "tool") {
    return "Thinking may not be enabled when tool_choice forces tool use.";
  }
  return undefined;
}

function validateOutputConfig(config: unknown): string | undefined {
  if (config === undefined) return undefined;
  if (config === null || typeof config !== "object" || Array.isArray(config)) {
    return "output_config: Input should be a valid dictionary";
  }
  const record = config as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (key !== "effort" && key !== "format") {
      return `output_config.${key}: Extra inputs are not permitted`;
    }
  }
  if (record.effort !== undefined && record.effort !== null && !OUTPUT_EFFORTS.has(record.effort)) {
    return "output_config.effort: Input should be 'low', 'medium', 'high', 'xhigh' or 'max'";
  }
  const format = record.format;
  if (format === undefined || format === null) return undefined;
  if (typeof format !== "object" || Array.isArray(format)) {
    return "output_config.format: Input should be a valid dictionary";
  }
  const spec = format as Record<string, unknown>;
  for (const key of Object.keys(spec)) {
    if (key !== "type" && key !== "schema") {
      return `output_config.format.${key}: Extra inputs are not permitted`;
    }
  }
  if (spec.type !== "json_schema") {
    return "output_config.format.type: Input should be 'json_schema'";
  }
  const schema = spec.schema;
  if (schema === undefined) return "output_config.format.schema: Field required";
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return "output_config.format.schema: Input should be a valid dictionary";
  }
  if ((schema as Record<string, unknown>).type !== "object") {
    return "output_config.format.schema: The root schema must have type 'object'.";
  }
  return outputSchemaError(schema as Record<string, unknown>, "");
}

/** The first part of an output schema that structured outputs refuse, at any depth. */
function outputSchemaError(node: Record<string, unknown>, path: string): string | undefined {
  const where = path === "" ? "the root" : path;
  const type = node.type;
  const typeLabel = Array.isArray(type) ? type.join("|") : String(type ?? "untyped");
  for (const key of Object.keys(node)) {
    const value = node[key];
    if (UNSUPPORTED_SCHEMA_KEYWORDS.has(key)) {
      return `output_config.format.schema: For '${typeLabel}' type, property '${key}' is not supported (at ${where}). Remove it, or state the constraint in 'description'.`;
    }
    if (key === "minItems" && value !== 0 && value !== 1) {
      return `output_config.format.schema: For 'array' type, 'minItems' values other than 0 or 1 are not supported (at ${where}, got ${JSON.stringify(value)}).`;
    }
  }
  const isObject =
    type === "object" ||
    (Array.isArray(type) && type.includes("object")) ||
    (type === undefined && isRecord(node.properties));
  if (isObject && node.additionalProperties !== false) {
    return `output_config.format.schema: For 'object' type, 'additionalProperties' must be explicitly set to false (at ${where}).`;
  }
  const at = (step: string): string => (path === "" ? step : `${path}.${step}`);
  for (const keyword of ["properties", "$defs", "definitions"] as const) {
    const map = node[keyword];
    if (!isRecord(map)) continue;
    for (const [key, child] of Object.entries(map)) {
      if (!isRecord(child)) continue;
      const error = outputSchemaError(child, at(`${keyword}.${key}`));
      if (error !== undefined) return error;
    }
  }
  for (const keyword of ["items", "prefixItems", "anyOf", "allOf", "oneOf"] as const) {
    const value = node[keyword];
    const children = Array.isArray(value) ? value : [value];
    for (let index = 0; index < children.length; index++) {
      const child = children[index];
      if (!isRecord(child)) continue;
      const step = Array.isArray(value) ? `${keyword}.${index}` : keyword;
      const error = outputSchemaError(child, at(step));
      if (error !== undefined) return error;
    }
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Checks every `cache_control` (tools, system, message blocks, tool_result contents). */
function validateCacheControl(request: Record<string, unknown>): string | undefined {
  const found: { path: string; value: unknown }[] = [];
  const visit = (block: unknown, path: string): void => {
    const value = (block as { cache_control?: unknown } | null)?.cache_control;
    if (value !== undefined && value !== null) found.push({ path, value });
  };
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
  for (const [i, tool] of list(request.tools).entries()) visit(tool, `tools.${i}`);
  for (const [i, block] of list(request.system).entries()) visit(block, `system.${i}`);
  for (const [i, message] of list(request.messages).entries()) {
    for (const [j, block] of list((message as { content?: unknown }).content).entries()) {
      visit(block, `messages.${i}.content.${j}`);
      if ((block as { type?: unknown }).type !== "tool_result") continue;
      for (const [k, item] of list((block as { content?: unknown }).content).entries()) {
        visit(item, `messages.${i}.content.${j}.content.${k}`);
      }
    }
  }
  for (const { path, value } of found) {
    const control = value as Record<string, unknown>;
    if (typeof control !== "object" || control.type !== "ephemeral") {
      return `${path}.cache_control.type: Input should be 'ephemeral'`;
    }
    if (control.ttl !== undefined && control.ttl !== "5m" && control.ttl !== "1h") {
      return `${path}.cache_control.ttl: Input should be '5m' or '1h'`;
    }
  }
  if (found.length > MAX_CACHE_BREAKPOINTS) {
    return `A maximum of ${MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. Found ${found.length}.`;
  }
  return undefined;
}

function validateTools(tools: unknown, toolChoice: unknown): string | undefined {
  const names = new Set<string>();
  if (tools !== undefined) {
    if (!Array.isArray(tools)) return "tools: Input should be a valid list";
    for (let index = 0; index < tools.length; index++) {
      const tool = tools[index] as Record<string, unknown>;
      if (typeof tool?.name !== "string" || !TOOL_NAME.test(tool.name)) {
        return `tools.${index}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      }
      const schema = tool.input_schema as Record<string, unknown> | undefined;
      if (schema === undefined || schema === null || schema.type !== "object") {
        return `tools.${index}.custom.input_schema.type: Input should be 'object'`;
      }
      if (names.has(tool.name)) return "tools: Tool names must be unique.";
      names.add(tool.name);
    }
  }
  if (toolChoice !== undefined) {
    const choice = toolChoice as Record<string, unknown>;
    const type = choice?.type;
    if (type !== "auto" && type !== "any" && type !== "none" && type !== "tool") {
      return "tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'";
    }
    if (type === "tool" && !names.has(String(choice.name))) {
      return `tool_choice: Tool '${String(choice.name)}' not found in tools`;
    }
  }
  return undefined;
}

function validateMessages(messages: unknown): string | undefined {
  if (messages === undefined) return "messages: Field required";
  if (!Array.isArray(messages)) return "messages: Input should be a valid list";
  if (messages.length === 0) return "messages: at least one message is required";
  let pendingToolUses: string[] = [];
  let pendingIndex = -1;
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Record<string, unknown>;
    const role = message?.role;
    if (role !== "user" && role !== "assistant") {
      return `messages.${index}.role: Input should be 'user' or 'assistant'`;
    }
    const content = message.content;
    const blocks: Record<string, unknown>[] = [];
    if (typeof content === "string") {
      if (content === "" && !(role === "assistant" && index === messages.length - 1)) {
        return `messages.${index}: all messages must have non-empty content except for the optional final assistant message`;
      }
    } else if (Array.isArray(content)) {
      for (let position = 0; position < content.length; position++) {
        const block = content[position] as Record<string, unknown>;
        const error = validateBlock(block, `messages.${index}.content.${position}`, role);
        if (error !== undefined) return error;
        blocks.push(block);
      }
    } else {
      return `messages.${index}.content: Input should be a valid string or list`;
    }
    if (pendingToolUses.length > 0) {
      const answered = new Set<string>();
      if (role === "user") {
        let seenOther = false;
        for (let position = 0; position < blocks.length; position++) {
          const block = blocks[position]!;
          if (block.type === "tool_result") {
            if (seenOther) {
              return `messages.${index}.content.${position}: tool_result blocks must come before any other content in the user message that answers tool_use blocks`;
            }
            answered.add(String(block.tool_use_id));
          } else {
            seenOther = true;
          }
        }
      }
      const missing = pendingToolUses.filter((id) => !answered.has(id));
      if (missing.length > 0) {
        return `messages.${pendingIndex}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
      }
    }
    if (role === "user") {
      const expected = new Set(pendingToolUses);
      for (let position = 0; position < blocks.length; position++) {
        const block = blocks[position]!;
        if (block.type === "tool_result" && !expected.has(String(block.tool_use_id))) {
          return `messages.${index}.content.${position}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(block.tool_use_id)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        }
      }
      pendingToolUses = [];
    } else {
      pendingToolUses = [];
      for (const block of blocks) {
        if (block.type === "tool_use") pendingToolUses.push(String(block.id));
      }
      pendingIndex = index;
      if (new Set(pendingToolUses).size !== pendingToolUses.length) {
        return `messages.${index}: \`tool_use\` ids must be unique`;
      }
    }
  }
  if (pendingToolUses.length > 0) {
    return `messages.${pendingIndex}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${pendingToolUses.join(", ")}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
  }
  return undefined;
}

function validateBlock(
  block: Record<string, unknown>,
  path: string,
  role: "user" | "assistant",
): string | undefined {
  if (block === null || typeof block !== "object") return `${path}: Input should be an object`;
  const type = String(block.type);
  const keys = BLOCK_KEYS[type];
  if (keys === undefined)
    return `${path}.type: Input tag '${type}' does not match any expected tag`;
  if (!(role === "user" ? USER_BLOCKS : ASSISTANT_BLOCKS).has(type)) {
    return `${path}.type: '${type}' blocks are not permitted in ${role} messages`;
  }
  for (const key of Object.keys(block)) {
    if (!keys.has(key)) return `${path}.${type}.${key}: Extra inputs are not permitted`;
  }
  switch (type) {
    case "text":
      if (typeof block.text !== "string") return `${path}.text.text: Field required`;
      if (block.text === "") return `${path}: text content blocks must be non-empty`;
      return undefined;
    case "tool_use":
      if (typeof block.id !== "string" || block.id === "")
        return `${path}.tool_use.id: Field required`;
      if (typeof block.name !== "string") return `${path}.tool_use.name: Field required`;
      if (block.input === null || typeof block.input !== "object" || Array.isArray(block.input)) {
        return `${path}.tool_use.input: Input should be a valid dictionary`;
      }
      return undefined;
    case "tool_result":
      if (typeof block.tool_use_id !== "string")
        return `${path}.tool_result.tool_use_id: Field required`;
      if (block.content !== undefined && typeof block.content !== "string") {
        if (!Array.isArray(block.content)) {
          return `${path}.tool_result.content: Input should be a valid string or list`;
        }
        for (let index = 0; index < block.content.length; index++) {
          const inner = block.content[index] as Record<string, unknown>;
          if (inner?.type !== "text" && inner?.type !== "image") {
            return `${path}.tool_result.content.${index}.type: Input tag '${String(inner?.type)}' does not match any expected tag`;
          }
        }
      }
      return undefined;
    case "thinking":
      if (typeof block.thinking !== "string") return `${path}.thinking.thinking: Field required`;
      if (typeof block.signature !== "string") return `${path}.thinking.signature: Field required`;
      return undefined;
    case "redacted_thinking":
      if (typeof block.data !== "string") return `${path}.redacted_thinking.data: Field required`;
      return undefined;
    default:
      return undefined;
  }
}
