const TOP_LEVEL_KEYS: ReadonlySet<string> = new Set([
  "model",
  "messages",
  "max_tokens",
  "max_completion_tokens",
  "temperature",
  "top_p",
  "n",
  "stop",
  "stream",
  "stream_options",
  "tools",
  "tool_choice",
  "parallel_tool_calls",
  "presence_penalty",
  "frequency_penalty",
  "seed",
  "user",
  "response_format",
  "reasoning_effort",
  "metadata",
  "store",
  "logprobs",
  "top_logprobs",
  "logit_bias",
  "service_tier",
]);
const ROLES: ReadonlySet<string> = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * Checks a Chat Completions request body the way the OpenAI API does, for the rules a client is
 * most likely to break. Returns the API-style error message, or `undefined` when valid.
 *
 * Rejects: a missing `model`, unknown top-level keys, an empty `messages`, bad roles, an
 * assistant message with `tool_calls` not followed by `tool` messages answering every call,
 * a `tool` message that answers nothing, non-string `arguments`, duplicate function names,
 * strict functions whose schema is not strict-compatible, and `stream_options` without
 * `stream`.
 *
 * @param body - The parsed request body.
 */
export function validateOpenAiRequest(body: unknown): string | undefined {
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    return "The request body must be a JSON object.";
  }
  const request = body as Record<string, unknown>;
  for (const key of Object.keys(request)) {
    if (!TOP_LEVEL_KEYS.has(key)) return `Unrecognized request argument supplied: ${key}`;
  }
  if (typeof request.model !== "string" || request.model === "") {
    return "you must provide a model parameter";
  }
  if (request.stream_options !== undefined && request.stream !== true) {
    return "The 'stream_options' parameter is only allowed when 'stream' is enabled.";
  }
  const toolError = validateTools(request.tools);
  if (toolError !== undefined) return toolError;
  return validateMessages(request.messages);
}

function validateTools(tools: unknown): string | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) return "Invalid type for 'tools': expected an array.";
  const names = new Set<string>();
  for (let index = 0; index < tools.length; index++) {
    const tool = tools[index] as Record<string, unknown>;
    const fn = tool?.function as Record<string, unknown> | undefined;
    if (tool?.type !== "function" || fn === undefined || typeof fn.name !== "string") {
      return `Missing required parameter: 'tools[${index}].function.name'.`;
    }
    if (names.has(fn.name)) return `Invalid 'tools': duplicate function name '${fn.name}'.`;
    names.add(fn.name);
    if (fn.strict === true) {
      const error = strictSchemaError(fn.parameters, fn.name, "()");
      if (error !== undefined) return error;
    }
  }
  return undefined;
}

function strictSchemaError(schema: unknown, name: string, context: string): string | undefined {
  if (schema === null || typeof schema !== "object") return undefined;
  const node = schema as Record<string, unknown>;
  const type = node.type;
  const isObject = type === "object" || (Array.isArray(type) && type.includes("object"));
  if (isObject && node.properties !== undefined) {
    if (node.additionalProperties !== false) {
      return `Invalid schema for function '${name}': In context=${context}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const keys = Object.keys(node.properties as object);
    const required = Array.isArray(node.required) ? (node.required as string[]) : [];
    const missing = keys.filter((key) => !required.includes(key));
    if (missing.length > 0) {
      return `Invalid schema for function '${name}': In context=${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`;
    }
    for (const key of keys) {
      const error = strictSchemaError(
        (node.properties as Record<string, unknown>)[key],
        name,
        `('properties', '${key}')`,
      );
      if (error !== undefined) return error;
    }
  }
  for (const keyword of ["items", "anyOf"] as const) {
    const child = node[keyword];
    const children = Array.isArray(child) ? child : child === undefined ? [] : [child];
    for (const item of children) {
      const error = strictSchemaError(item, name, `('${keyword}')`);
      if (error !== undefined) return error;
    }
  }
  return undefined;
}

function validateMessages(messages: unknown): string | undefined {
  if (!Array.isArray(messages)) return "Missing required parameter: 'messages'.";
  if (messages.length === 0) return "[] is too short - 'messages'";
  let pending = new Set<string>();
  for (let index = 0; index < messages.length; index++) {
    const message = messages[index] as Record<string, unknown>;
    const role = message?.role;
    if (typeof role !== "string" || !ROLES.has(role)) {
      return `Invalid value: '${String(role)}'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.`;
    }
    if (role === "tool") {
      const id = message.tool_call_id;
      if (typeof id !== "string" || !pending.has(id)) {
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.";
      }
      pending.delete(id);
      continue;
    }
    if (pending.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`;
    }
    if (role === "assistant") {
      const calls = message.tool_calls;
      if (calls !== undefined && calls !== null) {
        if (!Array.isArray(calls)) return `Invalid type for 'messages[${index}].tool_calls'.`;
        pending = new Set();
        for (let position = 0; position < calls.length; position++) {
          const call = calls[position] as Record<string, unknown>;
          const fn = call?.function as Record<string, unknown> | undefined;
          if (typeof call?.id !== "string" || fn === undefined || typeof fn.name !== "string") {
            return `Missing required parameter: 'messages[${index}].tool_calls[${position}].function'.`;
          }
          if (typeof fn.arguments !== "string") {
            return `Invalid type for 'messages[${index}].tool_calls[${position}].function.arguments': expected a string.`;
          }
          pending.add(call.id);
        }
      } else if (message.content === undefined || message.content === null) {
        return `Invalid value for 'messages[${index}].content': expected content when there are no tool_calls.`;
      }
    } else {
      const content = message.content;
      if (typeof content !== "string" && !Array.isArray(content)) {
        return `Invalid type for 'messages[${index}].content': expected a string or an array.`;
      }
      if (Array.isArray(content)) {
        for (let position = 0; position < content.length; position++) {
          const part = content[position] as Record<string, unknown>;
          const allowed =
            role === "user"
              ? part?.type === "text" || part?.type === "image_url"
              : part?.type === "text";
          if (!allowed) {
            return `Invalid value: '${String(part?.type)}'. Supported values are: 'text' and 'image_url' (messages[${index}].content[${position}].type).`;
          }
        }
      }
    }
  }
  if (pending.size > 0) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${[...pending].join(", ")}`;
  }
  return undefined;
}
