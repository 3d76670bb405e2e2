import type { ModelOutputFormat, ModelProviderV1 } from "@lattice/providers";
import {
  type AnyToolDefinition,
  createToolDefinition,
  InvalidOptionError,
  type StandardSchemaV1,
  type ToolInputSchema,
} from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { errorMessage, toJson } from "./error-message.js";
import type { OutputMode } from "./steering-options.js";

/** The name of the tool that carries the typed answer in `forced_tool` mode (L2). */
export const OUTPUT_TOOL_NAME = "final_answer";

/** A run's typed output, resolved once per schema (L1–L3). Internal. */
export interface RunOutput {
  readonly schema: StandardSchemaV1;
  /** The JSON Schema sent to the model (an object schema, `$schema` removed). */
  readonly jsonSchema: ToolInputSchema;
  readonly mode: OutputMode;
  /** Invalid answers sent back before `error_output_invalid`. */
  readonly retries: number;
  /** What a native call sends as `request.output`. */
  readonly format: ModelOutputFormat;
  /** The `final_answer` tool of `forced_tool` calls: its handler ends the run with the answer. */
  readonly tool: AnyToolDefinition;
}

/**
 * The tools a run's batches may call by name: the agent's, and, with typed output, the
 * `final_answer` tool (offered to the model only on `forced_tool` calls, L2). Internal.
 */
export function toolMapOf(
  tools: readonly AnyToolDefinition[],
  outputTool: AnyToolDefinition | undefined,
): ReadonlyMap<string, AnyToolDefinition> {
  const map = new Map(tools.map((definition) => [definition.name, definition]));
  if (outputTool !== undefined) map.set(outputTool.name, outputTool);
  return map;
}

/** The output mode one call uses, on a provider (L2). Internal. */
export function callOutputMode(
  output: RunOutput,
  provider: ModelProviderV1,
): "native_json_schema" | "forced_tool" {
  if (output.mode !== "auto") return output.mode;
  return provider.nativeOutput === true ? "native_json_schema" : "forced_tool";
}

const resolved = new WeakMap<object, { jsonSchema: ToolInputSchema; tool: AnyToolDefinition }>();

/**
 * Resolves an output schema: its JSON Schema (from Zod's `toJSONSchema()` or Standard JSON
 * Schema's `~standard.jsonSchema.input()`), checked to be an object schema, and the forced
 * tool. Cached per schema object. Internal.
 *
 * @throws `InvalidOptionError` naming `prefix` and `key` when the schema is no Standard Schema,
 *   gives no JSON Schema, or its root is not an object.
 */
export function resolveRunOutput(
  schema: unknown,
  mode: OutputMode,
  retries: number,
  prefix: string,
  key = "outputSchema",
): RunOutput {
  if (
    schema === null ||
    (typeof schema !== "object" && typeof schema !== "function") ||
    typeof (schema as Partial<StandardSchemaV1>)["~standard"]?.validate !== "function"
  ) {
    throw new InvalidOptionError(
      prefix,
      key,
      `must be a Zod v4 schema or a Standard Schema (with ~standard.validate), received ${describeValue(schema)}. For example outputSchema: z.object({ total: z.number() }).`,
    );
  }
  let cached = resolved.get(schema);
  if (cached === undefined) {
    const jsonSchema = jsonSchemaOf(schema as StandardSchemaV1, prefix, key);
    const tool = createToolDefinition({
      name: OUTPUT_TOOL_NAME,
      description:
        "Give your final answer by calling this tool, with the answer as its input. Call it once, after any other tools you need; the run ends with it.",
      schema: schema as StandardSchemaV1,
      inputSchema: jsonSchema,
      kind: "tool",
      handler: (input) => {
        const value = toJson(input);
        return { content: JSON.stringify(value), endTurn: true, structuredResult: value };
      },
    });
    cached = { jsonSchema, tool };
    resolved.set(schema, cached);
  }
  return {
    schema: schema as StandardSchemaV1,
    jsonSchema: cached.jsonSchema,
    mode,
    retries,
    format: { type: "json_schema", name: OUTPUT_TOOL_NAME, schema: cached.jsonSchema },
    tool: cached.tool,
  };
}

interface JsonSchemaCarrier {
  toJSONSchema?: (params: unknown) => unknown;
  "~standard"?: { jsonSchema?: { input?: (options: { target: string }) => unknown } };
}

function jsonSchemaOf(schema: StandardSchemaV1, prefix: string, key: string): ToolInputSchema {
  const carrier = schema as unknown as JsonSchemaCarrier;
  let converted: unknown;
  try {
    if (typeof carrier.toJSONSchema === "function") {
      converted = carrier.toJSONSchema({
        target: "draft-2020-12",
        io: "input",
        unrepresentable: "throw",
      });
    } else if (typeof carrier["~standard"]?.jsonSchema?.input === "function") {
      converted = carrier["~standard"].jsonSchema.input({ target: "draft-2020-12" });
    } else {
      throw new InvalidOptionError(
        prefix,
        key,
        "gives no JSON Schema to send to the model: use a Zod schema (zod ≥ 4.2 has toJSONSchema()) or a Standard Schema that implements Standard JSON Schema (~standard.jsonSchema).",
      );
    }
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    throw new InvalidOptionError(
      prefix,
      key,
      `cannot be represented in JSON Schema (${errorMessage(error)}). Use JSON-compatible types (z.string() for dates, z.number() for bigints).`,
    );
  }
  if (
    converted === null ||
    typeof converted !== "object" ||
    (converted as { type?: unknown }).type !== "object"
  ) {
    throw new InvalidOptionError(
      prefix,
      key,
      `must have an object at its root (the model's answer is a JSON object), but its JSON Schema has type ${describeValue((converted as { type?: unknown } | null)?.type)}. Wrap it: z.object({ items: z.array(...) }).`,
    );
  }
  const { $schema: _dropped, ...rest } = converted as Record<string, unknown>;
  return rest as unknown as ToolInputSchema;
}

/** An answer checked against the output schema. Internal. */
export type OutputCheck =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: string };

/**
 * Parses a native answer's text and validates it (L3): the JSON, possibly fenced as a
 * Markdown code block. Never throws: a validator that throws is an invalid answer. Internal.
 */
export async function checkAnswerText(output: RunOutput, text: string): Promise<OutputCheck> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(unfence(text));
  } catch (error) {
    return {
      ok: false,
      error: `The answer is not JSON (${errorMessage(error)}). Answer with one JSON object that matches the schema, and nothing else.`,
    };
  }
  return checkAnswerValue(output, parsed);
}

/** Validates an answer value with the output schema. Never throws. Internal. */
export async function checkAnswerValue(output: RunOutput, value: unknown): Promise<OutputCheck> {
  try {
    const result = await output.schema["~standard"].validate(value);
    if (result.issues === undefined) return { ok: true, value: result.value };
    const issues = result.issues
      .map((issue) => {
        const path = (issue.path ?? [])
          .map((step) => (typeof step === "object" ? String(step.key) : String(step)))
          .join(".");
        return path === "" ? issue.message : `${path}: ${issue.message}`;
      })
      .join("; ");
    return {
      ok: false,
      error: `The answer does not match the schema: ${issues}. Answer again with a JSON object that matches it.`,
    };
  } catch (error) {
    return { ok: false, error: `The answer could not be validated: ${errorMessage(error)}.` };
  }
}

/** The text inside one Markdown code fence, when the whole text is one; else the text. */
function unfence(text: string): string {
  const trimmed = text.trim();
  const match = /^```[a-zA-Z]*\s*\n([\s\S]*?)\n?```$/.exec(trimmed);
  return match === null ? trimmed : match[1]!;
}
