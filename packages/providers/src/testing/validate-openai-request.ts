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
const FORMAT_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const JSON_SCHEMA_KEYS: ReadonlySet<string> = new Set(["name", "description", "schema", "strict"]);
const ROLES: ReadonlySet<string> = new Set(["system", "developer", "user", "assistant", "tool"]);

/**
 * Checks a Chat Completions request body the way the OpenAI API does, for the rules a client is
 * most likely to break. Returns the API-style error message, or `undefined` when valid.
 *
 * Rejects: a missing `model`, unknown top-level keys, an empty `messages`, bad roles, an
 * assistant message with `tool_calls` not followed by `tool` messages answering every call,
 * a `tool` message that answers nothing, non-string `arguments`, duplicate function names,
 * strict functions whose schema is not strict-compatible, `stream_options` without
 * `stream`, and a `response_format` that is not `{ type: "text" }`, `{ type: "json_object" }`
 * or `{ type: "json_schema", json_schema: { name, description?, schema?, strict? } }` with a
 * name of at most 64 letters, digits, `_` and `-`, and, when `strict`, an object schema at the
 * root whose every object has `additionalProperties: false` and lists all its properties in
 * `required`.
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
  const formatError = validateResponseFormat(request.response_format);
  if (formatError !== undefined) return formatError;
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
      const error = strictSchemaError(fn.parameters, `function '${fn.name}'`, "()", false);
      if (error !== undefined) return error;
    }
  }
  return undefined;
}

function validateResponseFormat(format: unknown): string | undefined {
  if (format === undefined) return undefined;
  if (format === null || typeof format !== "object" || Array.isArray(format)) {
    return `Invalid type for 'response_format': expected an object, but got ${typeName(format)} instead.`;
  }
  const record = format as Record<string, unknown>;
  const type = record.type;
  if (type !== "text" && type !== "json_object" && type !== "json_schema") {
    return `Invalid value: '${String(type)}'. Supported values are: 'text', 'json_object', and 'json_schema' (response_format.type).`;
  }
  for (const key of Object.keys(record)) {
    if (key !== "type" && !(type === "json_schema" && key === "json_schema")) {
      return `Unknown parameter: 'response_format.${key}'.`;
    }
  }
  if (type !== "json_schema") return undefined;
  const spec = record.json_schema;
  if (spec === undefined) return "Missing required parameter: 'response_format.json_schema'.";
  if (spec === null || typeof spec !== "object" || Array.isArray(spec)) {
    return `Invalid type for 'response_format.json_schema': expected an object, but got ${typeName(spec)} instead.`;
  }
  const jsonSchema = spec as Record<string, unknown>;
  for (const key of Object.keys(jsonSchema)) {
    if (!JSON_SCHEMA_KEYS.has(key))
      return `Unknown parameter: 'response_format.json_schema.${key}'.`;
  }
  const name = jsonSchema.name;
  if (name === undefined) return "Missing required parameter: 'response_format.json_schema.name'.";
  if (typeof name !== "string" || !FORMAT_NAME.test(name)) {
    return `Invalid 'response_format.json_schema.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]{1,64}$', got ${JSON.stringify(name)}.`;
  }
  if (jsonSchema.description !== undefined && typeof jsonSchema.description !== "string") {
    return `Invalid type for 'response_format.json_schema.description': expected a string, but got ${typeName(jsonSchema.description)} instead.`;
  }
  const strict = jsonSchema.strict;
  if (strict !== undefined && strict !== null && typeof strict !== "boolean") {
    return `Invalid type for 'response_format.json_schema.strict': expected a boolean, but got ${typeName(strict)} instead.`;
  }
  const schema = jsonSchema.schema;
  if (schema === undefined) return undefined;
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) {
    return `Invalid type for 'response_format.json_schema.schema': expected an object, but got ${typeName(schema)} instead.`;
  }
  if (strict !== true) return undefined;
  const rootType = (schema as Record<string, unknown>).type;
  if (rootType !== "object") {
    return `Invalid schema for response_format '${name}': schema must be a JSON Schema of 'type: "object"', got 'type: ${JSON.stringify(rootType ?? null)}'.`;
  }
  return strictSchemaError(schema, `response_format '${name}'`, "()", true);
}

/**
 * Checks a schema for strict mode: objects (every one when `everyObject`, else those with
 * `properties`) must have `additionalProperties: false` and list all their properties in
 * `required`, at every depth.
 */
function strictSchemaError(
  schema: unknown,
  label: string,
  context: string,
  everyObject: boolean,
): string | undefined {
  if (schema === null || typeof schema !== "object") return undefined;
  const node = schema as Record<string, unknown>;
  const type = node.type;
  const isObject =
    type === "object" ||
    (Array.isArray(type) && type.includes("object")) ||
    (type === undefined && node.properties !== undefined);
  if (isObject && (everyObject || node.properties !== undefined)) {
    if (node.additionalProperties !== false) {
      return `Invalid schema for ${label}: In context=${context}, 'additionalProperties' is required to be supplied and to be false.`;
    }
    const properties = (node.properties ?? {}) as Record<string, unknown>;
    const keys = Object.keys(properties);
    const required = Array.isArray(node.required) ? (node.required as string[]) : [];
    const missing = keys.filter((key) => !required.includes(key));
    if (missing.length > 0) {
      return `Invalid schema for ${label}: In context=${context}, 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing[0]}'.`;
    }
    for (const key of keys) {
      const error = strictSchemaError(
        properties[key],
        label,
        `('properties', '${key}')`,
        everyObject,
      );
      if (error !== undefined) return error;
    }
  }
  for (const keyword of ["items", "anyOf", "allOf"] as const) {
    const child = node[keyword];
    const children = Array.isArray(child) ? child : child === undefined ? [] : [child];
    for (const item of children) {
      const error = strictSchemaError(item, label, `('${keyword}')`, everyObject);
      if (error !== undefined) return error;
    }
  }
  for (const keyword of ["$defs", "definitions"] as const) {
    const defs = node[keyword];
    if (defs === null || typeof defs !== "object") continue;
    for (const [key, child] of Object.entries(defs as Record<string, unknown>)) {
      const error = strictSchemaError(child, label, `('${keyword}', '${key}')`, everyObject);
      if (error !== undefined) return error;
    }
  }
  return undefined;
}

/** How the OpenAI API names a JSON value's type in its messages. */
function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return Number.isInteger(value) ? "an integer" : "a decimal";
  if (typeof value === "boolean") return "a boolean";
  return "an object";
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
