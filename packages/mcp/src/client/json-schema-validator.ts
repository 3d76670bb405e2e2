import type { StandardSchemaIssue, StandardSchemaResult, StandardSchemaV1 } from "@lattice/tools";
import type {
  JsonSchemaType,
  JsonSchemaValidator,
  JsonSchemaValidatorResult,
  jsonSchemaValidator,
} from "@modelcontextprotocol/client";
import { Ajv, type ErrorObject, type Options, type ValidateFunction } from "ajv";
import { Ajv2019 } from "ajv/dist/2019.js";
import { Ajv2020 } from "ajv/dist/2020.js";
import type { RegExpEngine, RegExpLike } from "ajv/dist/types/index.js";
import {
  compileLinearPattern,
  inspectLinearPattern,
  type LinearPattern,
} from "./linear-pattern.js";
import { relaxUncheckedPatterns } from "./relax-unchecked-patterns.js";
import { uniqueItemsKeyword } from "./unique-items.js";
import { type SchemaObject, walkSchema } from "./walk-schema.js";

/** A tool input: MCP tool arguments are always a JSON object. */
export type McpToolInput = Record<string, unknown>;

/**
 * The largest schema compiled here, in characters of JSON (128 KiB): Ajv takes about 2-5 ms
 * per KiB to compile, and a 2 MB schema held the event loop for 15 s. A larger schema is not
 * checked locally (the server checks its own input) (H19).
 */
export const MAX_SCHEMA_CHARS = 128 * 1024;

/**
 * How much compiling one schema's patterns may cost (H19): 50,000 units of compile cost (an
 * RE2 instruction is one, one of a Unicode property class such as `\p{L}` sixteen; 50,000
 * take about 0.1 s) and 32,768 characters of pattern. Patterns past it are left unchecked.
 */
export const SCHEMA_PATTERN_BUDGET: PatternBudget = { cost: 50_000, characters: 32_768 };

/** How much compiling the patterns of one listing's schemas may cost, all together (H19). */
export const LISTING_PATTERN_BUDGET: PatternBudget = { cost: 250_000, characters: 262_144 };

/** A budget of pattern compiling (H19). */
export interface PatternBudget {
  /** Units of compile cost: see `InspectedPattern` in `linear-pattern.ts`. */
  cost: number;
  /** Characters of pattern. */
  characters: number;
}

/** A `pattern` (or `patternProperties` key) that values are not checked against (H19). */
export interface UncheckedPattern {
  /** The pattern, as the schema gives it. */
  readonly pattern: string;
  /** Why the linear-time engine does not run it. */
  readonly reason: string;
}

/**
 * What {@link JsonSchemaCompiler.compile} gives back: a Standard Schema that validates with
 * the schema, and what it leaves unchecked; or why the schema is unusable.
 * `uncheckedPatterns` is known when the schema is compiled (listed), and may grow on the
 * first validation, when the patterns are compiled for RE2 and one is refused.
 */
export type CompiledInputSchema =
  | {
      readonly ok: true;
      readonly schema: StandardSchemaV1<unknown, McpToolInput>;
      readonly uncheckedPatterns: readonly UncheckedPattern[];
      /**
       * Why the schema as a whole is not checked here (over {@link MAX_SCHEMA_CHARS}, or nested
       * too deeply), if so: `"is 2177812 characters of JSON, over the 131072 Lattice compiles"`.
       */
      readonly uncheckedSchema?: string;
    }
  | { readonly ok: false; readonly reason: string };

/** Which of a tool's schemas is compiled: named in messages. */
export type SchemaRole = "inputSchema" | "outputSchema";

// Formats are not checked (the server checks them; checking them here would need
// ajv-formats); `addUsedSchema: false` keeps two tools that reuse one `$id` apart. Schemas are
// checked against their meta-schema by a separate instance (see `metaValidator`), so that the
// instances that compile tools' schemas hold nothing but one listing's validators.
const AJV_OPTIONS: Options = {
  strict: false,
  allErrors: true,
  validateFormats: false,
  validateSchema: false,
  addUsedSchema: false,
  logger: false,
};

const DRAFT_07 = /^https?:\/\/json-schema\.org\/draft-0[67]\/schema#?$/;
const DRAFT_2019 = /^https?:\/\/json-schema\.org\/draft\/2019-09\/schema#?$/;

type Dialect = "2020" | "2019" | "07";
type AnyAjv = Ajv | Ajv2019 | Ajv2020;

/** One Ajv per dialect that only checks schemas against their meta-schema: it never grows. */
const metaValidators = new Map<Dialect, AnyAjv>();

function metaValidator(dialect: Dialect): AnyAjv {
  let ajv = metaValidators.get(dialect);
  if (ajv === undefined) {
    ajv = newAjv(dialect, { ...AJV_OPTIONS, validateSchema: true });
    metaValidators.set(dialect, ajv);
  }
  return ajv;
}

function newAjv(dialect: Dialect, options: Options): AnyAjv {
  if (dialect === "07") return new Ajv(options);
  if (dialect === "2019") return new Ajv2019(options);
  return new Ajv2020(options);
}

/**
 * Compiles the schemas of one listing of an MCP server's tools (M5): one compiler per
 * listing, so its compiled validators are dropped with the listing when the server's list
 * changes (H20). The Ajv instances (one per JSON Schema dialect: 2020-12, MCP's default;
 * 2019-09; draft-07, which many servers still declare) are made on first use.
 *
 * Nothing a server lists can hold the event loop (H19). When the tools are listed, a schema is
 * only measured, checked against its meta-schema and its patterns inspected, each in time
 * linear in its size; the validator is generated on the tool's first call, so only the tools
 * called hold one. Bounds: a schema over {@link MAX_SCHEMA_CHARS} is not checked locally;
 * patterns run on the linear-time RE2 engine, and those it cannot run (a lookaround, a
 * backreference, too large) or past the budgets ({@link SCHEMA_PATTERN_BUDGET},
 * {@link LISTING_PATTERN_BUDGET}) are left unchecked, the schema relaxed so that it refuses
 * nothing they would accept; `uniqueItems` is checked in linear time. Whatever throws while
 * compiling or validating makes the value "cannot be checked", never an exception.
 */
export class JsonSchemaCompiler {
  readonly #engines = new Map<Dialect, AnyAjv>();
  /** Each pattern of the listing, compiled once. */
  readonly #patterns = new Map<string, LinearPattern>();
  /** What is left of the listing's budget. */
  readonly #budget: PatternBudget = { ...LISTING_PATTERN_BUDGET };
  /** The patterns the listing's budget paid for already. */
  readonly #planned = new Set<string>();
  /** The engine Ajv calls for each pattern: RE2, for the patterns planned to run on it. */
  readonly #regExp: RegExpEngine;

  constructor() {
    const engine = (pattern: string): RegExpLike & { toString(): string } => {
      const compiled = this.#compiled(pattern);
      if (!compiled.ok) throw new Error(`pattern ${JSON.stringify(pattern)}: ${compiled.reason}`);
      return { test: compiled.test, toString: () => `re2:${pattern}` };
    };
    this.#regExp = Object.assign(engine, { code: "re2js" });
  }

  /**
   * Checks one schema and prepares its validator. Never throws.
   *
   * @param given - The schema as the server listed it.
   * @param role - Which of the tool's schemas it is, for the messages. Default `"inputSchema"`.
   */
  compile(given: Record<string, unknown>, role: SchemaRole = "inputSchema"): CompiledInputSchema {
    const notChecked = (why: string): CompiledInputSchema => ({
      ok: true,
      schema: uncheckedSchema(role),
      uncheckedPatterns: [],
      uncheckedSchema: why,
    });
    const tooDeep = "is nested too deeply to be checked here (the stack overflowed)";
    const chars = jsonLength(given);
    if (chars === undefined) return notChecked(tooDeep);
    if (chars > MAX_SCHEMA_CHARS) {
      return notChecked(
        `is ${chars} characters of JSON, over the ${MAX_SCHEMA_CHARS} Lattice compiles`,
      );
    }
    const schema = withoutUnknownDialect(given);
    const dialect = dialectOf(schema);
    let uses: Set<string>;
    try {
      const meta = metaValidator(dialect);
      if (meta.validateSchema(schema) !== true) {
        return { ok: false, reason: `schema is invalid: ${meta.errorsText(meta.errors)}` };
      }
      uses = patternsOf(schema);
    } catch (error) {
      if (error instanceof RangeError) return notChecked(tooDeep);
      return { ok: false, reason: describe(error) };
    }
    const unchecked: UncheckedPattern[] = [];
    const planned: string[] = [];
    const budget: PatternBudget = { ...SCHEMA_PATTERN_BUDGET };
    for (const pattern of uses) {
      if (this.#planned.has(pattern)) {
        planned.push(pattern);
        continue;
      }
      const inspected = inspectLinearPattern(pattern);
      if (!inspected.ok && inspected.invalid) {
        return {
          ok: false,
          reason: `pattern ${JSON.stringify(pattern)} is not a valid regular expression (${inspected.reason})`,
        };
      }
      const over = inspected.ok
        ? overBudget(inspected.cost, pattern.length, budget, this.#budget)
        : undefined;
      if (!inspected.ok || over !== undefined) {
        unchecked.push({ pattern, reason: inspected.ok ? (over as string) : inspected.reason });
        continue;
      }
      for (const spent of [budget, this.#budget]) {
        spent.cost -= inspected.cost;
        spent.characters -= pattern.length;
      }
      this.#planned.add(pattern);
      planned.push(pattern);
    }
    let validate: ValidateFunction | undefined;
    let failure: string | undefined;
    const prepare = (): ValidateFunction | undefined => {
      if (validate !== undefined || failure !== undefined) return validate;
      try {
        for (const pattern of planned) {
          const compiled = this.#compiled(pattern);
          if (!compiled.ok) unchecked.push({ pattern, reason: compiled.reason });
        }
        const skipped = new Set(unchecked.map((entry) => entry.pattern));
        const checked = skipped.size === 0 ? schema : relaxUncheckedPatterns(schema, skipped);
        validate = this.#engine(dialect).compile(withBaseId(checked));
      } catch (error) {
        failure = describe(error);
      }
      return validate;
    };
    const standard: StandardSchemaV1<unknown, McpToolInput> = {
      "~standard": {
        version: 1,
        vendor: "ajv",
        validate(value: unknown) {
          const check = prepare();
          if (check === undefined) {
            return cannotBeChecked(
              `the server's ${role} for this tool does not compile (${failure})`,
              role,
            );
          }
          try {
            if (check(value)) return { value: value as McpToolInput };
            return { issues: (check.errors ?? []).map(toIssue) };
          } catch (error) {
            // A stack overflow on a deeply nested value, for example.
            return cannotBeChecked(
              `checking it against the server's ${role} failed (${describe(error)})`,
              role,
            );
          }
        },
      },
    };
    return { ok: true, schema: standard, uncheckedPatterns: unchecked };
  }

  /** A pattern compiled for RE2, once per listing. */
  #compiled(pattern: string): LinearPattern {
    let compiled = this.#patterns.get(pattern);
    if (compiled === undefined) {
      compiled = compileLinearPattern(pattern);
      this.#patterns.set(pattern, compiled);
    }
    return compiled;
  }

  #engine(dialect: Dialect): AnyAjv {
    let ajv = this.#engines.get(dialect);
    if (ajv === undefined) {
      ajv = newAjv(dialect, { ...AJV_OPTIONS, code: { regExp: this.#regExp } });
      // H19: Ajv compares every pair of items; this one is linear.
      ajv.removeKeyword("uniqueItems");
      ajv.addKeyword(uniqueItemsKeyword);
      this.#engines.set(dialect, ajv);
    }
    return ajv;
  }
}

/**
 * The MCP SDK client's validator of tools' `outputSchema` (it checks `structuredContent`
 * against it), on the same engine as input schemas (H19): the SDK asks for every tool's
 * validator at once, on the first call after a listing, so each is only checked then and
 * compiled when its tool's first `structuredContent` arrives, within its own budget. Each
 * schema has a compiler of its own, dropped with the listing the SDK caches it for (H20).
 *
 * @throws An `Error` from `getValidator` when the schema is not valid JSON Schema: the SDK then
 *   fails that tool's calls, saying so.
 */
export const outputSchemaValidator: jsonSchemaValidator = {
  getValidator<T>(schema: JsonSchemaType): JsonSchemaValidator<T> {
    const compiled = new JsonSchemaCompiler().compile(
      schema as Record<string, unknown>,
      "outputSchema",
    );
    if (!compiled.ok) throw new Error(compiled.reason);
    const standard = compiled.schema["~standard"];
    return (input: unknown): JsonSchemaValidatorResult<T> => {
      // This compiler's validation is synchronous.
      const outcome = standard.validate(input) as StandardSchemaResult<McpToolInput>;
      if (outcome.issues === undefined) {
        return { valid: true, data: input as T, errorMessage: undefined };
      }
      const errorMessage = outcome.issues
        .map((issue) => {
          const path = (issue.path ?? []).map((key) => String(key));
          return path.length === 0 ? issue.message : `${path.join(".")}: ${issue.message}`;
        })
        .join("; ");
      return { valid: false, data: undefined, errorMessage };
    };
  },
};

/** Why a pattern that costs `cost` does not fit the budgets, or `undefined`. */
function overBudget(
  cost: number,
  characters: number,
  schema: PatternBudget,
  listing: PatternBudget,
): string | undefined {
  for (const [budget, whose, full] of [
    [schema, "this schema's", SCHEMA_PATTERN_BUDGET],
    [listing, "the listing's", LISTING_PATTERN_BUDGET],
  ] as const) {
    if (cost > budget.cost) {
      return `compiling it is past ${whose} budget (${full.cost} units; it costs ${cost})`;
    }
    if (characters > budget.characters) {
      return `it is past ${whose} budget of ${full.characters} characters of pattern`;
    }
  }
  return undefined;
}

/**
 * Every pattern a schema uses: each string `pattern` and each `patternProperties` key of its
 * schema objects (not inside data such as `enum` or `const`).
 */
function patternsOf(schema: SchemaObject): Set<string> {
  const found = new Set<string>();
  walkSchema(schema, {
    enter: (node) => {
      if (typeof node.pattern === "string") found.add(node.pattern);
      const keyed = node.patternProperties;
      if (keyed !== null && typeof keyed === "object" && !Array.isArray(keyed)) {
        for (const key of Object.keys(keyed)) found.add(key);
      }
      return true;
    },
  });
  return found;
}

/** A schema not checked here: an input must still be an object; an output is taken as it is. */
function uncheckedSchema(role: SchemaRole): StandardSchemaV1<unknown, McpToolInput> {
  return {
    "~standard": {
      version: 1,
      vendor: "ajv",
      validate(value: unknown) {
        if (
          role === "outputSchema" ||
          (value !== null && typeof value === "object" && !Array.isArray(value))
        ) {
          return { value: value as McpToolInput };
        }
        return { issues: [{ message: "must be object" }] };
      },
    },
  };
}

function cannotBeChecked(why: string, role: SchemaRole): StandardSchemaResult<McpToolInput> {
  const what = role === "inputSchema" ? "; the call was not sent" : "";
  return { issues: [{ message: `cannot be checked: ${why}${what}` }] };
}

let schemaCount = 0;

/**
 * The schema with an `$id` of its own when it has none: Ajv resolves `"$ref": "#"` (the schema
 * itself, as a recursive schema refers to itself) against the root's id, and without
 * `addUsedSchema` it finds no root without one.
 */
function withBaseId(schema: SchemaObject): SchemaObject {
  if (typeof schema.$id === "string") return schema;
  schemaCount++;
  return { $id: `https://lattice.invalid/mcp-schema/${schemaCount}`, ...schema };
}

/** The length of a value's JSON, `undefined` when it has none (a stack overflow). */
function jsonLength(value: unknown): number | undefined {
  try {
    return JSON.stringify(value)?.length;
  } catch {
    return undefined;
  }
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function dialectOf(schema: Record<string, unknown>): Dialect {
  const dialect = schema.$schema;
  if (typeof dialect === "string" && DRAFT_07.test(dialect)) return "07";
  if (typeof dialect === "string" && DRAFT_2019.test(dialect)) return "2019";
  return "2020";
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
