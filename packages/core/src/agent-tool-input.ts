import {
  InvalidOptionError,
  type JsonSchema,
  type StandardSchemaIssue,
  type StandardSchemaV1,
  TOOL_NAME_PATTERN,
  type ToolInputSchema,
} from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";

/**
 * Checks an agent tool factory's `name` and `metadata` options before the definition is built,
 * so a bad value is reported under the factory's own prefix. Internal.
 *
 * @param prefix - The factory's prefix, for example `agentTool("researcher"):`.
 * @throws `InvalidOptionError` naming `name` or `metadata`.
 */
export function validateToolOptions(
  prefix: string,
  options: { readonly name?: unknown; readonly metadata?: unknown },
): void {
  const { name, metadata } = options;
  if (name !== undefined && (typeof name !== "string" || !TOOL_NAME_PATTERN.test(name))) {
    throw new InvalidOptionError(
      prefix,
      "name",
      `must be 1 to 64 letters, digits, "_" or "-" (pattern ^[a-zA-Z0-9_-]{1,64}$; it names the tool), received ${describeValue(name)}.`,
    );
  }
  if (
    metadata !== undefined &&
    (metadata === null || typeof metadata !== "object" || Array.isArray(metadata))
  ) {
    throw new InvalidOptionError(
      prefix,
      "metadata",
      `must be a plain object (Record<string, unknown>), received ${describeValue(metadata)}.`,
    );
  }
}

/**
 * One field of an agent tool's input: how it is checked and the JSON Schema the model sees.
 * Internal: made with {@link textField} or {@link choiceField}.
 */
export interface AgentToolInputField {
  /** The field's JSON Schema, as the model receives it. */
  readonly jsonSchema: JsonSchema;
  /** Whether the field may be left out. */
  readonly optional: boolean;
  /** Why a present value is wrong, in Zod's words, or `undefined` when it is fine. */
  readonly check: (value: unknown) => string | undefined;
}

/** What {@link agentToolInput} makes: the validator and the JSON Schema of one input shape. */
export interface AgentToolInputSchemas<Input> {
  /** A Standard Schema validating the input, as `createToolDefinition` needs it. */
  readonly schema: StandardSchemaV1<unknown, Input>;
  /** The JSON Schema the model receives. */
  readonly inputSchema: ToolInputSchema;
}

/**
 * A required non-empty string field. Internal.
 *
 * @param description - What the model should put there.
 */
export function textField(description: string): AgentToolInputField {
  return {
    jsonSchema: { type: "string", minLength: 1, description },
    optional: false,
    check: (value) => {
      if (typeof value !== "string")
        return `Invalid input: expected string, received ${typeOf(value)}`;
      return value.length === 0 ? "Too small: expected string to have >=1 characters" : undefined;
    },
  };
}

/**
 * A field holding one of a few strings. Internal.
 *
 * @param values - The allowed values, in the order the model sees them.
 * @param description - What the field chooses.
 * @param optional - Whether the field may be left out. Default `false`.
 */
export function choiceField(
  values: readonly string[],
  description: string,
  optional = false,
): AgentToolInputField {
  const expected =
    values.length === 1
      ? `Invalid input: expected ${JSON.stringify(values[0])}`
      : `Invalid option: expected one of ${values.map((value) => JSON.stringify(value)).join("|")}`;
  const base = { type: "string", enum: [...values] };
  return {
    // Key order as Zod wrote it before (the description of an optional field comes first), so
    // the JSON the model receives stays byte for byte the same.
    jsonSchema: optional ? { description, ...base } : { ...base, description },
    optional,
    check: (value) => (typeof value === "string" && values.includes(value) ? undefined : expected),
  };
}

/**
 * Builds the validator and JSON Schema of an object input from its fields, with no schema
 * library: inputs are checked field by field in order, every issue is reported (messages read
 * as Zod's do), and the output keeps only the known fields. Internal.
 *
 * @param fields - The fields, in the order the model sees them.
 */
export function agentToolInput<Input>(
  fields: Readonly<Record<string, AgentToolInputField>>,
): AgentToolInputSchemas<Input> {
  const entries = Object.entries(fields);
  const validate = (value: unknown) => {
    if (value === null || typeof value !== "object" || Array.isArray(value)) {
      return { issues: [{ message: `Invalid input: expected object, received ${typeOf(value)}` }] };
    }
    const output: Record<string, unknown> = {};
    const issues: StandardSchemaIssue[] = [];
    for (const [key, field] of entries) {
      const fieldValue = (value as Record<string, unknown>)[key];
      if (fieldValue === undefined && field.optional) continue;
      const message = field.check(fieldValue);
      if (message === undefined) output[key] = fieldValue;
      else issues.push({ message, path: [key] });
    }
    return issues.length > 0 ? { issues } : { value: output as Input };
  };
  return {
    schema: { "~standard": { version: 1, vendor: "lattice", validate } },
    inputSchema: {
      type: "object",
      properties: Object.fromEntries(entries.map(([key, field]) => [key, field.jsonSchema])),
      required: entries.filter(([, field]) => !field.optional).map(([key]) => key),
    },
  };
}

/** The type name Zod prints after "received". */
function typeOf(value: unknown): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}
