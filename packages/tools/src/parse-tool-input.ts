import { describeValue } from "./assert-known-options.js";
import { ToolInputError, type ToolInputIssue } from "./errors.js";
import type { StandardSchemaIssue, StandardSchemaResult } from "./standard-schema.js";
import { formatPath } from "./to-json-schema.js";
import type { ToolDefinition } from "./tool-definition.js";

/** The outcome of {@link parseToolInput}: the validated input, or why the input was refused. */
export type ParseToolInputResult<Input> =
  | { readonly success: true; readonly input: Input }
  | { readonly success: false; readonly error: ToolInputError };

/**
 * Validates a model's raw tool input against the tool's schema (T3). Never throws.
 *
 * Validation goes through the schema's Standard Schema interface (`~standard.validate`), sync or
 * async; a validator that throws or rejects is reported as an invalid input, not thrown.
 *
 * On failure, `error.message` is written for the model: it names the tool, each failing
 * field's path and what was expected there, and asks for a corrected call.
 *
 * @param definition - The tool being called.
 * @param rawInput - The input exactly as the model sent it (parsed JSON).
 */
export async function parseToolInput<Input>(
  definition: ToolDefinition<Input>,
  rawInput: unknown,
): Promise<ParseToolInputResult<Input>> {
  let result: StandardSchemaResult<Input>;
  try {
    const outcome = definition.schema["~standard"].validate(rawInput);
    result = "then" in outcome ? await outcome : outcome;
    if (typeof result !== "object" || result === null) {
      throw new TypeError(`~standard.validate returned ${describeValue(result)}, not a result`);
    }
  } catch (error) {
    return refinementThrew(definition, error);
  }
  if (result.issues === undefined) return { success: true, input: result.value };
  const issues: ToolInputIssue[] = result.issues.map((issue) => ({
    path: pathOf(issue),
    message: issueMessage(issue),
  }));
  return {
    success: false,
    error: new ToolInputError(definition.name, issues, describe(definition.name, issues, rawInput)),
  };
}

/** Zod's issues carry a `code`, and a union's issue the issues of each option in `errors`. */
interface UnionIssue extends StandardSchemaIssue {
  readonly code?: unknown;
  readonly errors?: unknown;
}

/** A Standard Schema path may hold `{ key }` segments; tool inputs use plain keys. */
function pathOf(issue: StandardSchemaIssue): PropertyKey[] {
  return (issue.path ?? []).map((step) => (typeof step === "object" ? step.key : step));
}

/** A union's issue lists why each option failed, so the model sees what would have fitted. */
function issueMessage(issue: UnionIssue): string {
  if (issue.code !== "invalid_union" || !Array.isArray(issue.errors) || issue.errors.length === 0) {
    return issue.message;
  }
  const options = (issue.errors as StandardSchemaIssue[][]).map((optionIssues) =>
    optionIssues
      .map((inner) => {
        const path = pathOf(inner);
        return path.length === 0 ? inner.message : `${formatPath(path)}: ${inner.message}`;
      })
      .join(", "),
  );
  return `${issue.message}: matched none of the allowed options (${options.join(" | ")})`;
}

function describe(toolName: string, issues: readonly ToolInputIssue[], rawInput: unknown): string {
  const lines = issues.map((issue) => {
    const where = issue.path.length === 0 ? "input" : formatPath(issue.path);
    return `- ${where}: ${issue.message}`;
  });
  const received =
    rawInput === null || typeof rawInput !== "object" || Array.isArray(rawInput)
      ? ` The input must be a JSON object; received ${rawInput === null ? "null" : Array.isArray(rawInput) ? "an array" : typeof rawInput}.`
      : "";
  return `Invalid input for tool "${toolName}":${received}\n${lines.join("\n")}\nFix these fields and call the tool again.`;
}

function refinementThrew<Input>(
  definition: ToolDefinition<Input>,
  error: unknown,
): ParseToolInputResult<Input> {
  const reason = error instanceof Error ? error.message : String(error);
  const issues = [{ path: [], message: `the schema's validation threw: ${reason}` }];
  return {
    success: false,
    error: new ToolInputError(
      definition.name,
      issues,
      `Invalid input for tool "${definition.name}": the schema's validation threw (${reason}). Check the input and call the tool again.`,
    ),
  };
}
