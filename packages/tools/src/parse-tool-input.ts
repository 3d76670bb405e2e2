import { z } from "zod/v4";
import { ToolInputError, type ToolInputIssue } from "./errors.js";
import { formatPath } from "./to-json-schema.js";
import type { ToolDefinition } from "./tool-definition.js";

/** The outcome of {@link parseToolInput}: the validated input, or why the input was refused. */
export type ParseToolInputResult<Input> =
  | { readonly success: true; readonly input: Input }
  | { readonly success: false; readonly error: ToolInputError };

/**
 * Validates a model's raw tool input against the tool's schema (T3). Never throws.
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
  let result: z.ZodSafeParseResult<Input>;
  try {
    result = definition.schema.safeParse(rawInput);
  } catch (error) {
    if (!(error instanceof z.core.$ZodAsyncError)) return refinementThrew(definition, error);
    try {
      result = await definition.schema.safeParseAsync(rawInput);
    } catch (asyncError) {
      return refinementThrew(definition, asyncError);
    }
  }
  if (result.success) return { success: true, input: result.data };
  const issues: ToolInputIssue[] = result.error.issues.map((issue) => ({
    path: issue.path,
    message: issueMessage(issue),
  }));
  return {
    success: false,
    error: new ToolInputError(definition.name, issues, describe(definition.name, issues, rawInput)),
  };
}

/** A union's issue lists why each option failed, so the model sees what would have fitted. */
function issueMessage(issue: z.core.$ZodIssue): string {
  if (issue.code !== "invalid_union" || issue.errors.length === 0) return issue.message;
  const options = issue.errors.map((optionIssues) =>
    optionIssues
      .map((inner) =>
        inner.path.length === 0 ? inner.message : `${formatPath(inner.path)}: ${inner.message}`,
      )
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
