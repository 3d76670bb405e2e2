import { parseToolInput } from "./parse-tool-input.js";
import type { ToolContext, ToolDefinition } from "./tool-definition.js";
import { errorToolResult, normalizeToolResult, type ToolResult } from "./tool-result.js";

/**
 * Runs a tool's handler on an already validated input and normalises what it returns.
 * Never throws: a throw or rejection becomes an `is_error` result carrying the error's
 * message (T6); a malformed return becomes an `is_error` result saying so.
 *
 * @param definition - The tool.
 * @param input - The validated input (see {@link parseToolInput}).
 * @param context - The call's context; `toolName` should be `definition.name`.
 */
export async function executeTool<Input>(
  definition: ToolDefinition<Input>,
  input: Input,
  context: ToolContext,
): Promise<ToolResult> {
  let value: unknown;
  try {
    value = await definition.handler(input, context);
  } catch (error) {
    return errorToolResult(thrownMessage(definition.name, error), error);
  }
  return normalizeToolResult(definition.name, value);
}

/**
 * Validates a raw model input and runs the tool: {@link parseToolInput} then
 * `executeTool`. Never throws. Invalid input never reaches the handler (T3).
 *
 * @param definition - The tool.
 * @param rawInput - The input exactly as the model sent it.
 * @param context - The call's context: `signal`, `toolUseId`, `toolName`.
 */
export async function runTool<Input>(
  definition: ToolDefinition<Input>,
  rawInput: unknown,
  context: ToolContext,
): Promise<ToolResult> {
  const parsed = await parseToolInput(definition, rawInput);
  if (!parsed.success) return errorToolResult(parsed.error.message, parsed.error);
  return executeTool(definition, parsed.input, context);
}

function thrownMessage(toolName: string, error: unknown): string {
  if (error instanceof Error) {
    return error.message === "" ? `Tool "${toolName}" failed with ${error.name}.` : error.message;
  }
  if (typeof error === "string" && error !== "") return error;
  return `Tool "${toolName}" failed: it threw ${typeof error === "object" ? "a non-Error value" : String(error)}.`;
}
