import type { z } from "zod/v4";
import { ToolDefinitionError } from "./errors.js";
import type { JsonSchema, ToolInputSchema } from "./tool-definition.js";

/** The options every conversion passes to a schema's own `toJSONSchema` method. */
const JSON_SCHEMA_PARAMS = {
  target: "draft-2020-12",
  io: "input",
  unrepresentable: "throw",
} as const;

/** A Zod schema as far as conversion needs it: classic schemas of Zod ≥ 4.2 have the method. */
interface ConvertibleSchema {
  toJSONSchema?: (params: typeof JSON_SCHEMA_PARAMS) => unknown;
}

/**
 * Converts a tool's Zod object schema to the JSON Schema a model receives (T2).
 *
 * Uses the schema's own `toJSONSchema` method (Zod ≥ 4.2; the SDK does not import Zod) on the
 * input side (`io: "input"`: optional fields and fields with a default are not required),
 * draft 2020-12, with `.describe()` texts kept at every depth and the `$schema` key removed
 * (model APIs do not want it).
 *
 * @param toolName - The tool the schema belongs to, named in errors.
 * @param schema - A `z.object(...)` schema.
 * @returns An object schema (`type: "object"`).
 * @throws {@link ToolDefinitionError} when the schema has no `toJSONSchema` method (Zod older
 *   than 4.2), or when a field cannot be represented in JSON Schema (for example `z.bigint()`,
 *   `z.date()`, `z.map()`), naming the tool and the field's path.
 */
export function toJsonSchema(toolName: string, schema: z.ZodType): ToolInputSchema {
  if (typeof (schema as ConvertibleSchema).toJSONSchema !== "function") {
    throw new ToolDefinitionError(
      toolName,
      `tool("${toolName}"): the schema has no toJSONSchema() method, which Lattice uses to make the JSON Schema the model receives. Upgrade zod to 4.2 or newer (npm i zod@^4.2.0), or build the tool with createToolDefinition({ ..., inputSchema }) and a JSON Schema of your own.`,
    );
  }
  let converted: JsonSchema;
  try {
    converted = convert(schema);
  } catch (error) {
    const path = findUnrepresentable(schema, []);
    const field = path.length === 0 ? "the schema itself" : `field "${formatPath(path)}"`;
    const reason = error instanceof Error ? error.message : String(error);
    throw new ToolDefinitionError(
      toolName,
      `tool("${toolName}"): ${field} cannot be represented in JSON Schema (${reason}). Use a JSON-compatible type there, for example z.string() for dates or z.number() for bigints, and convert inside the handler.`,
      { cause: error },
    );
  }
  const { $schema: _ignored, ...rest } = converted;
  return rest as ToolInputSchema;
}

function convert(schema: z.ZodType): JsonSchema {
  return (schema as ConvertibleSchema).toJSONSchema?.(JSON_SCHEMA_PARAMS) as JsonSchema;
}

/** Whether a schema converts; a child without the method cannot be blamed, so it counts as converting. */
function converts(schema: z.ZodType): boolean {
  try {
    convert(schema);
    return true;
  } catch {
    return false;
  }
}

/** The children of a schema worth descending into, with the path step that leads to each. */
function children(schema: z.ZodType): Array<[PropertyKey | undefined, z.ZodType]> {
  const def = (schema as unknown as { _zod: { def: Record<string, unknown> } })._zod.def;
  switch (def.type) {
    case "object":
      return Object.entries(def.shape as Record<string, z.ZodType>);
    case "array":
      return [[0, def.element as z.ZodType]];
    case "record":
      return [["*", def.valueType as z.ZodType]];
    case "tuple":
      return (def.items as z.ZodType[]).map((item, index) => [index, item]);
    case "union":
      return (def.options as z.ZodType[]).map((option) => [undefined, option]);
    case "optional":
    case "nullable":
    case "default":
    case "prefault":
    case "readonly":
    case "nonoptional":
    case "catch":
      return [[undefined, def.innerType as z.ZodType]];
    default:
      return [];
  }
}

/** The deepest path under `schema` whose sub-schema still fails to convert. */
function findUnrepresentable(schema: z.ZodType, path: PropertyKey[]): PropertyKey[] {
  for (const [step, child] of children(schema)) {
    if (!converts(child)) {
      return findUnrepresentable(child, step === undefined ? path : [...path, step]);
    }
  }
  return path;
}

/**
 * Formats a field path the way errors print it: `items[0].name`, `tags[*]` for record values.
 *
 * @param path - Path steps from the input's root.
 */
export function formatPath(path: readonly PropertyKey[]): string {
  let text = "";
  for (const step of path) {
    if (typeof step === "number") text += `[${step}]`;
    else if (step === "*") text += "[*]";
    else {
      const key = String(step);
      text += /^[A-Za-z_$][\w$]*$/.test(key)
        ? `${text === "" ? "" : "."}${key}`
        : `[${JSON.stringify(key)}]`;
    }
  }
  return text;
}
