import type { StandardSchemaIssue, StandardSchemaV1 } from "@lattice/tools";
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";

/** A tool input: MCP tool arguments are always a JSON object. */
export type McpToolInput = Record<string, unknown>;

/**
 * What {@link JsonSchemaCompiler.compile} gives back: a Standard Schema that validates with
 * the compiled schema, or why the schema could not be compiled.
 */
export type CompiledInputSchema =
  | { readonly ok: true; readonly schema: StandardSchemaV1<unknown, McpToolInput> }
  | { readonly ok: false; readonly reason: string };

// `validateSchema` checks each schema against its meta-schema, so a server's schema that is
// not JSON Schema is found at list time (the tool is skipped) rather than at call time.
// Formats are not checked (the server checks them; checking them here would need
// ajv-formats); `addUsedSchema: false` keeps two tools that reuse one `$id` apart.
const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: true,
  addUsedSchema: false,
  logger: false,
};

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/;
const DRAFT_2019 = /^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/;

/**
 * Compiles MCP tools' input schemas with Ajv (M5). One compiler per source; the Ajv instances
 * (one per JSON Schema dialect: 2020-12, MCP's default; 2019-09; draft-07, which many servers
 * still declare) are made on first use.
 */
export class JsonSchemaCompiler {
  #ajv2020: Ajv2020 | undefined;
  #ajv2019: Ajv2019 | undefined;
  #ajv07: Ajv | undefined;

  /**
   * Compiles one input schema. Never throws.
   *
   * @param inputSchema - The schema as the server listed it.
   */
  compile(inputSchema: Record<string, unknown>): CompiledInputSchema {
    let validate: ValidateFunction;
    try {
      validate = this.#engineFor(inputSchema).compile(withoutUnknownDialect(inputSchema));
    } catch (error) {
      return { ok: false, reason: error instanceof Error ? error.message : String(error) };
    }
    const schema: StandardSchemaV1<unknown, McpToolInput> = {
      "~standard": {
        version: 1,
        vendor: "ajv",
        validate(value: unknown) {
          if (validate(value)) return { value: value as McpToolInput };
          return { issues: (validate.errors ?? []).map(toIssue) };
        },
      },
    };
    return { ok: true, schema };
  }

  #engineFor(inputSchema: Record<string, unknown>): Ajv | Ajv2019 | Ajv2020 {
    const dialect = inputSchema.$schema;
    if (typeof dialect === "string" && DRAFT_07.test(dialect)) {
      this.#ajv07 ??= new Ajv(AJV_OPTIONS);
      return this.#ajv07;
    }
    if (typeof dialect === "string" && DRAFT_2019.test(dialect)) {
      this.#ajv2019 ??= new Ajv2019(AJV_OPTIONS);
      return this.#ajv2019;
    }
    this.#ajv2020 ??= new Ajv2020(AJV_OPTIONS);
    return this.#ajv2020;
  }
}

/** A `$schema` other than the three dialects is dropped: the schema is read as 2020-12. */
function withoutUnknownDialect(inputSchema: Record<string, unknown>): Record<string, unknown> {
  const dialect = inputSchema.$schema;
  if (dialect === undefined) return inputSchema;
  if (
    typeof dialect === "string" &&
    (DRAFT_07.test(dialect) ||
      DRAFT_2019.test(dialect) ||
      /^https?:\/\/json-schema\.org\/draft\/2020-12\/schema#?$/.test(dialect))
  ) {
    return inputSchema;
  }
  const { $schema: _dropped, ...rest } = inputSchema;
  return rest;
}

/** One Ajv error as a Standard Schema issue: its path as keys, Ajv's own message. */
function toIssue(error: ErrorObject): StandardSchemaIssue {
  const path: PropertyKey[] = error.instancePath
    .split("/")
    .slice(1)
    .map((segment) => segment.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((segment) => (/^(0|[1-9]\d*)$/.test(segment) ? Number(segment) : segment));
  const params = error.params as { missingProperty?: unknown; additionalProperty?: unknown };
  if (error.keyword === "required" && typeof params.missingProperty === "string") {
    path.push(params.missingProperty);
    return { path, message: "is required" };
  }
  if (error.keyword === "additionalProperties" && typeof params.additionalProperty === "string") {
    path.push(params.additionalProperty);
    return { path, message: "is not allowed (must NOT have additional properties)" };
  }
  const allowed = (error.params as { allowedValues?: unknown }).allowedValues;
  const suffix = Array.isArray(allowed)
    ? `: ${allowed.map((v) => JSON.stringify(v)).join(", ")}`
    : "";
  return { path, message: `${error.message ?? "is invalid"}${suffix}` };
}
