import {
  objectToolCallInput,
  type ParsedToolCallInput,
  parseToolCallInput,
} from "../transport/parse-tool-input.js";

/**
 * Reads a tool call's input the way Lattice's adapters do, so a provider of your own hands the
 * agent loop the same `tool_use` blocks: JSON text (as assembled from stream deltas; empty
 * text means `{}`) or an already parsed value (as in a non-streaming body; `null` and
 * `undefined` mean `{}`).
 *
 * Anything that is not a JSON object, or is nested deeper than `MAX_TOOL_INPUT_DEPTH` (100),
 * or longer than `MAX_TOOL_INPUT_LENGTH` (4 Mi characters of JSON), becomes `input: {}` with an
 * `inputError` naming the tool; put both on the `tool_use` block
 * (`{ type: "tool_use", id, name, ...parseToolInput(name, json) }`) and the agent answers the
 * call `is_error` without running it. Never throws.
 *
 * @param toolName - The tool called, for the error text.
 * @param input - The input's JSON text, or the parsed value.
 */
export function parseToolInput(toolName: string, input: unknown): ParsedToolCallInput {
  return typeof input === "string"
    ? parseToolCallInput(toolName, input)
    : objectToolCallInput(toolName, input);
}
