/** The outcome of parsing a tool call's input JSON. */
export interface ParsedToolCallInput {
  /** The parsed object, or `{}` when it did not parse. */
  readonly input: unknown;
  /** What was wrong, naming the tool; absent when the input parsed. */
  readonly inputError?: string;
}

const EMPTY_RESULT: ParsedToolCallInput = Object.freeze({ input: {} }) as ParsedToolCallInput;

/**
 * Parses the JSON text of a tool call's input, as assembled from stream deltas or returned by
 * a non-streaming API. Empty text means `{}`. Anything that is not a JSON object becomes
 * `input: {}` with an `inputError` naming the tool and quoting the start of the text.
 *
 * @param toolName - The tool called, for the error text.
 * @param json - The input's JSON text.
 */
export function parseToolCallInput(toolName: string, json: string): ParsedToolCallInput {
  if (json === "" || json.trim() === "") return { input: {} };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (error) {
    return {
      input: {},
      inputError: `The input for tool "${toolName}" is not valid JSON (${(error as Error).message}). Received: ${quote(json)}. Send the input again as one JSON object.`,
    };
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return {
      input: {},
      inputError: `The input for tool "${toolName}" must be a JSON object, received ${quote(json)}. Send the input again as one JSON object.`,
    };
  }
  return { input: value };
}

/** The result for a call whose input is already an object (`{}` when it is not). */
export function objectToolCallInput(toolName: string, value: unknown): ParsedToolCallInput {
  if (value === undefined || value === null) return EMPTY_RESULT;
  if (typeof value === "object" && !Array.isArray(value)) return { input: value };
  if (typeof value === "string") return parseToolCallInput(toolName, value);
  return {
    input: {},
    inputError: `The input for tool "${toolName}" must be a JSON object, received ${quote(JSON.stringify(value) ?? String(value))}. Send the input again as one JSON object.`,
  };
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
