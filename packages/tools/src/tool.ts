import type { z } from "zod/v4";
import { assertKnownOptions, describeValue } from "./assert-known-options.js";
import { ToolDefinitionError } from "./errors.js";
import type { StandardSchemaOutput, StandardSchemaV1 } from "./standard-schema.js";
import { toJsonSchema } from "./to-json-schema.js";
import type {
  NeedsApproval,
  ToolDefinition,
  ToolHandler,
  ToolInputSchema,
  ToolKind,
  ToolOptions,
} from "./tool-definition.js";

/** The pattern every tool name must match: what Anthropic and OpenAI accept. */
export const TOOL_NAME_PATTERN: RegExp = /^[a-zA-Z0-9_-]{1,64}$/;

const TOOL_OPTION_KEYS: ReadonlySet<string> = new Set([
  "isConcurrencySafe",
  "metadata",
  "strict",
  "needsApproval",
  "timeoutMs",
]);

/**
 * Defines a tool a model can call (T1).
 *
 * The Zod schema is converted to JSON Schema once, here (T2); every input the model sends is
 * validated with it before `handler` runs (T3); what the handler returns becomes the
 * tool_result (T4, T5); a throw becomes an `is_error` result (T6).
 *
 * @example
 * ```ts
 * import { tool } from "@lattice/tools";
 * import { z } from "zod/v4";
 *
 * const search = tool(
 *   "search",
 *   "Search documents",
 *   z.object({ query: z.string().describe("What to look for") }),
 *   async ({ query }, { signal }) => {
 *     const url = `https://example.com/search?q=${encodeURIComponent(query)}`;
 *     const response = await fetch(url, { signal });
 *     return { content: await response.text() };
 *   },
 *   { isConcurrencySafe: () => true },
 * );
 * ```
 *
 * @param name - What the model calls the tool; must match `^[a-zA-Z0-9_-]{1,64}$`.
 * @param description - What the tool does, written for the model.
 * @param schema - A `z.object(...)` schema of the input; `.describe()` texts reach the model.
 * @param handler - Runs the tool on the validated input; may be async.
 * @param options - {@link ToolOptions}: `isConcurrencySafe`, `metadata`, `strict`.
 * @typeParam TContext - The caller context the handler reads as `ctx.context` (R9), when it
 *   annotates its second parameter as `ToolContext<TContext>`.
 * @returns A frozen {@link ToolDefinition} of kind `"tool"`; `metadata` only when given (T29).
 * @throws {@link ToolDefinitionError} for a bad name, a schema that is not a `z.object`, a field
 *   JSON Schema cannot represent, or a handler or `isConcurrencySafe` that is not a function.
 * @throws {@link UnknownOptionError} for an unknown key in `options` (T31, T32).
 */
export function tool<Schema extends z.ZodObject, TContext = unknown>(
  name: string,
  description: string,
  schema: Schema,
  handler: ToolHandler<z.output<Schema>, TContext>,
  options?: ToolOptions<z.output<Schema>>,
): ToolDefinition<z.output<Schema>> {
  assertKnownOptions(options, TOOL_OPTION_KEYS, `tool(${JSON.stringify(String(name))}):`);
  return createToolDefinition<StandardSchemaV1<unknown, z.output<Schema>>>({
    name,
    description,
    schema,
    // The handler reads `ctx.context` as TContext; the agent hands it the query's context.
    handler: handler as ToolHandler<z.output<Schema>>,
    kind: "tool",
    ...options,
  });
}

/**
 * Everything {@link createToolDefinition} needs. `tool()` fills it from its arguments; other
 * tool factories (agent tools, built-ins, MCP adapters) fill it with their own `kind`.
 *
 * The input is described twice: `schema` validates what the model sends, `inputSchema` is the
 * JSON Schema the model receives. With a `z.object(...)` schema, `inputSchema` may be left out
 * and is converted from the schema; with any other Standard Schema it is required.
 *
 * @typeParam Schema - The input's schema: a Zod object schema, or any Standard Schema v1.
 */
export interface CreateToolDefinitionOptions<Schema extends StandardSchemaV1 = StandardSchemaV1> {
  /** What the model calls the tool; must match `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  /** What the tool does, written for the model. */
  readonly description: string;
  /**
   * The input's schema, used through `~standard.validate` for every input (T3): a
   * `z.object(...)` from Zod v4, or any Standard Schema v1 (Valibot, ArkType, hand-written)
   * together with `inputSchema`.
   */
  readonly schema: Schema;
  /**
   * The JSON Schema the model receives: an object with `type: "object"` (a `$schema` key is
   * dropped). Default: converted from `schema`, which must then be a `z.object(...)` of
   * Zod ≥ 4.2. Required for any other schema, for example an MCP tool's declared input schema.
   * When given, `schema` is not converted at all.
   */
  readonly inputSchema?: ToolInputSchema | undefined;
  /** Runs the tool on a validated input. */
  readonly handler: ToolHandler<StandardSchemaOutput<Schema>>;
  /** Who makes the tool: `"tool"`, `"agent_tool"`, `"builtin"` or `"mcp"`. */
  readonly kind: ToolKind;
  /** Concurrency rule (T13); absent means never concurrent. */
  readonly isConcurrencySafe?: ((input: StandardSchemaOutput<Schema>) => boolean) | undefined;
  /** Host-owned annotations (T29); the key is left out of the definition when absent. */
  readonly metadata?: Record<string, unknown> | undefined;
  /** OpenAI strict function calling. */
  readonly strict?: boolean | undefined;
  /** Whether calls need a person's decision (R13). */
  readonly needsApproval?: NeedsApproval<StandardSchemaOutput<Schema>> | undefined;
  /** The handler's time limit in milliseconds (R20). */
  readonly timeoutMs?: number | undefined;
}

/**
 * Builds a validated, frozen {@link ToolDefinition} of any kind. `tool()` is this with
 * `kind: "tool"`, a `z.object` schema and strict options; use it directly to write a tool
 * factory of your own, or to build a tool from a non-Zod Standard Schema plus an explicit
 * `inputSchema`.
 *
 * @example
 * ```ts
 * const echo = createToolDefinition({
 *   name: "echo",
 *   description: "Repeats a text",
 *   kind: "tool",
 *   schema: {
 *     "~standard": {
 *       version: 1,
 *       vendor: "my-app",
 *       validate: (value) =>
 *         typeof (value as { text?: unknown })?.text === "string"
 *           ? { value: value as { text: string } }
 *           : { issues: [{ message: "expected a string", path: ["text"] }] },
 *     },
 *   },
 *   inputSchema: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
 *   handler: ({ text }) => ({ content: text }),
 * });
 * ```
 *
 * @param options - The definition's parts.
 * @throws {@link ToolDefinitionError} with a message naming the tool and what to fix: a bad
 *   name, a schema that is not a Standard Schema, a missing `inputSchema` for a schema that is
 *   not a `z.object`, an `inputSchema` that is not an object schema, a Zod schema older than 4.2
 *   or with a field JSON Schema cannot represent, a handler or `isConcurrencySafe` that is not
 *   a function, bad `metadata` or `strict`.
 */
export function createToolDefinition<Schema extends StandardSchemaV1>(
  options: CreateToolDefinitionOptions<Schema>,
): ToolDefinition<StandardSchemaOutput<Schema>> {
  const { name, description, schema, inputSchema, handler, kind } = options;
  const { isConcurrencySafe, metadata, strict, needsApproval, timeoutMs } = options;
  const label = `tool(${JSON.stringify(String(name))}):`;
  if (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name)) {
    throw new ToolDefinitionError(
      String(name),
      `${label} invalid name. A tool name must be 1 to 64 characters of letters, digits, "_" or "-" (pattern ^[a-zA-Z0-9_-]{1,64}$); rename the tool, for example "${suggestName(name)}".`,
    );
  }
  if (typeof description !== "string") {
    throw new ToolDefinitionError(
      name,
      `${label} the description must be a string, received ${typeof description}. Describe what the tool does for the model.`,
    );
  }
  const jsonSchema =
    inputSchema === undefined
      ? convertSchema(name, label, schema)
      : checkInputSchema(name, label, schema, inputSchema);
  if (typeof handler !== "function") {
    throw new ToolDefinitionError(
      name,
      `${label} the handler must be a function, received ${typeof handler}. Pass an (async) function (input, context) => ({ content }).`,
    );
  }
  if (isConcurrencySafe !== undefined && typeof isConcurrencySafe !== "function") {
    throw new ToolDefinitionError(
      name,
      `${label} isConcurrencySafe must be a function (input) => boolean, received ${typeof isConcurrencySafe}. For a tool that is always safe, write isConcurrencySafe: () => true.`,
    );
  }
  if (
    metadata !== undefined &&
    (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
  ) {
    throw new ToolDefinitionError(
      name,
      `${label} metadata must be a plain object (Record<string, unknown>), received ${metadata === null ? "null" : Array.isArray(metadata) ? "an array" : typeof metadata}.`,
    );
  }
  if (strict !== undefined && typeof strict !== "boolean") {
    throw new ToolDefinitionError(
      name,
      `${label} strict must be a boolean, received ${typeof strict}.`,
    );
  }
  if (
    needsApproval !== undefined &&
    needsApproval !== true &&
    typeof needsApproval !== "function"
  ) {
    throw new ToolDefinitionError(
      name,
      `${label} needsApproval must be true or a function (input, context) => boolean, received ${describeValue(needsApproval)}. Leave it out for calls that run without a decision.`,
    );
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isFinite(timeoutMs) || timeoutMs <= 0)
  ) {
    throw new ToolDefinitionError(
      name,
      `${label} timeoutMs must be a number of milliseconds > 0, received ${describeValue(timeoutMs)}. Leave it out for no limit of the tool's own.`,
    );
  }
  const definition: ToolDefinition<StandardSchemaOutput<Schema>> = {
    name,
    description,
    inputSchema: jsonSchema,
    kind,
    schema: schema as StandardSchemaV1<unknown, StandardSchemaOutput<Schema>>,
    handler,
    ...(isConcurrencySafe !== undefined ? { isConcurrencySafe } : {}),
    ...(strict !== undefined ? { strict } : {}),
    ...(metadata !== undefined ? { metadata } : {}),
    ...(needsApproval !== undefined ? { needsApproval } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
  return Object.freeze(definition);
}

/** The JSON Schema of a definition without `inputSchema`: only a `z.object` can give one. */
function convertSchema(name: string, label: string, schema: unknown): ToolInputSchema {
  if (isZodObject(schema)) return toJsonSchema(name, schema);
  if (isStandardSchema(schema)) {
    throw new ToolDefinitionError(
      name,
      `${label} the schema must be a z.object(...) from Zod v4, received ${describeSchema(schema)}. Lattice converts only Zod object schemas to the JSON Schema the model receives: pass that JSON Schema as inputSchema: { type: "object", properties: { ... } }.`,
    );
  }
  throw new ToolDefinitionError(
    name,
    `${label} the schema must be a z.object(...) from Zod v4, received ${describeSchema(schema)}. Wrap the fields in z.object({ ... }) (tool inputs are always JSON objects).`,
  );
}

/** Checks an explicit `inputSchema` (and that `schema` can validate) and drops its `$schema`. */
function checkInputSchema(
  name: string,
  label: string,
  schema: unknown,
  inputSchema: unknown,
): ToolInputSchema {
  if (!isStandardSchema(schema)) {
    throw new ToolDefinitionError(
      name,
      `${label} the schema must implement Standard Schema v1 (a "~standard" property with a validate function), received ${describeSchema(schema)}. Pass a Zod, Valibot or ArkType schema, or write { "~standard": { version: 1, vendor, validate } }.`,
    );
  }
  if (
    inputSchema === null ||
    typeof inputSchema !== "object" ||
    Array.isArray(inputSchema) ||
    (inputSchema as { type?: unknown }).type !== "object"
  ) {
    throw new ToolDefinitionError(
      name,
      `${label} inputSchema must be a JSON Schema object with type: "object" (tool inputs are always JSON objects), received ${describeValue(inputSchema)}.`,
    );
  }
  const { $schema: _ignored, ...rest } = inputSchema as ToolInputSchema;
  return rest as ToolInputSchema;
}

function isStandardSchema(schema: unknown): schema is StandardSchemaV1 {
  const props = (schema as { "~standard"?: { validate?: unknown } } | null | undefined)?.[
    "~standard"
  ];
  return typeof props?.validate === "function";
}

function isZodObject(schema: unknown): schema is z.ZodObject {
  return (
    typeof schema === "object" &&
    schema !== null &&
    (schema as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type === "object"
  );
}

function suggestName(name: unknown): string {
  const cleaned = String(name)
    .replace(/[^a-zA-Z0-9_-]+/g, "_")
    .slice(0, 64);
  return cleaned === "" || cleaned === "_" ? "my_tool" : cleaned;
}

function describeSchema(schema: unknown): string {
  if (schema === null || typeof schema !== "object") return String(typeof schema);
  const type = (schema as { _zod?: { def?: { type?: unknown } } })._zod?.def?.type;
  if (typeof type === "string") return `a Zod ${type} schema`;
  if ("_def" in schema) return 'a Zod v3 schema (import { z } from "zod/v4" instead)';
  if (isStandardSchema(schema)) {
    return `a Standard Schema from ${JSON.stringify(String(schema["~standard"].vendor))}`;
  }
  return "an object that is not a Zod schema";
}
