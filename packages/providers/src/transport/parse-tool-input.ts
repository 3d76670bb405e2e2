/** The outcome of parsing a tool call's input JSON. */
export interface ParsedToolCallInput {
  /** The parsed object, or `{}` when it did not parse. */
  readonly input: unknown;
  /** What was wrong, naming the tool; absent when the input parsed. */
  readonly inputError?: string;
}

/**
 * The deepest nesting of objects and arrays a tool input may have (H6). Deeper inputs are
 * answered `is_error` before anything runs: they would overflow the stack when the history is
 * serialised for the next request (`JSON.stringify` recurses).
 */
export const MAX_TOOL_INPUT_DEPTH = 100;

/**
 * The longest tool input, in characters of JSON text (4 Mi), H6. Longer inputs are answered
 * `is_error` before anything runs; a streamed input stops being collected past this length.
 */
export const MAX_TOOL_INPUT_LENGTH = 4 * 1024 * 1024;

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
  if (json.length > MAX_TOOL_INPUT_LENGTH) return tooLong(toolName);
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
  return checkBounds(toolName, value, false);
}

/** The result for a call whose input is already an object (`{}` when it is not). */
export function objectToolCallInput(toolName: string, value: unknown): ParsedToolCallInput {
  if (value === undefined || value === null) return EMPTY_RESULT;
  if (typeof value === "object" && !Array.isArray(value)) return checkBounds(toolName, value, true);
  if (typeof value === "string") return parseToolCallInput(toolName, value);
  return {
    input: {},
    inputError: `The input for tool "${toolName}" must be a JSON object, received ${quote(JSON.stringify(value) ?? String(value))}. Send the input again as one JSON object.`,
  };
}

/**
 * The input itself when it is within {@link MAX_TOOL_INPUT_DEPTH} (and, for an input that did
 * not come as text, {@link MAX_TOOL_INPUT_LENGTH}); otherwise `{}` with an `inputError`.
 * Iterative, and it stops at the first bound passed, so a hostile input costs little.
 */
function checkBounds(toolName: string, input: object, measureLength: boolean): ParsedToolCallInput {
  const pending: unknown[] = [input];
  const depths: number[] = [1];
  let length = 0;
  while (pending.length > 0) {
    const value = pending.pop();
    const depth = depths.pop()!;
    if (depth > MAX_TOOL_INPUT_DEPTH) {
      return {
        input: {},
        inputError: `The input for tool "${toolName}" is nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep, so the call did not run. Send a flatter input.`,
      };
    }
    if (Array.isArray(value)) {
      length += 2 + value.length;
      for (const item of value) {
        if (item !== null && typeof item === "object") {
          pending.push(item);
          depths.push(depth + 1);
        } else if (measureLength && typeof item === "string") length += item.length + 2;
      }
    } else {
      for (const key in value as Record<string, unknown>) {
        const item = (value as Record<string, unknown>)[key];
        length += key.length + 4;
        if (item !== null && typeof item === "object") {
          pending.push(item);
          depths.push(depth + 1);
        } else if (measureLength && typeof item === "string") length += item.length + 2;
      }
    }
    if (measureLength && length > MAX_TOOL_INPUT_LENGTH) return tooLong(toolName);
  }
  return { input };
}

function tooLong(toolName: string): ParsedToolCallInput {
  return {
    input: {},
    inputError: `The input for tool "${toolName}" is longer than the ${MAX_TOOL_INPUT_LENGTH} characters of JSON allowed, so the call did not run. Send a smaller input (split a large file into several calls).`,
  };
}

function quote(text: string): string {
  return JSON.stringify(text.length > 200 ? `${text.slice(0, 200)}…` : text);
}
