import { describeValue } from "./assert-known-options.js";
import type { ImageSource, ToolResultContentBlock } from "./content.js";
import { LatticeError } from "./errors.js";

/**
 * The normalised outcome of one tool call: what becomes its `tool_result` block (T4).
 */
export interface ToolResult {
  /** The result's content blocks (a handler's string becomes one text block; `""` none). */
  readonly content: readonly ToolResultContentBlock[];
  /** `true` when the call failed: invalid input, a throw, a malformed return, or `isError`. */
  readonly isError: boolean;
  /** `true` when the handler asked to end the run after this batch (T8). */
  readonly endTurn: boolean;
  /** The handler's `structuredResult`; present only together with `endTurn: true` (T11). */
  readonly structuredResult?: unknown;
  /**
   * Structured data the handler returned next to its content (an MCP tool's
   * `structuredContent`), for hooks and the caller; never sent to the model. Present only
   * when given.
   */
  readonly structuredContent?: unknown;
  /**
   * Why the call failed, for logs and traces (never sent to the model): the thrown value,
   * a `ToolInputError`, or a `LatticeError` with code `"invalid_tool_result"`.
   */
  readonly error?: unknown;
}

/**
 * Turns whatever a handler returned into a {@link ToolResult} (T4, T5, T11). Never throws: a
 * malformed value (not an object, no `content`, a block of unknown type) becomes an
 * `is_error` result that says what was wrong and what a handler must return.
 *
 * @param toolName - The tool that produced the value, named in error text.
 * @param value - The handler's return value, already awaited.
 */
export function normalizeToolResult(toolName: string, value: unknown): ToolResult {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return malformed(toolName, `returned ${describeValue(value)}`);
  }
  const record = value as Record<string, unknown>;
  if (!("content" in record) || record.content === undefined) {
    return malformed(toolName, "returned an object without `content`");
  }
  const content = normalizeContent(record.content);
  if (typeof content === "string") return malformed(toolName, content);
  const endTurn = record.endTurn === true;
  const result: ToolResult = {
    content,
    isError: record.isError === true,
    endTurn,
    ...(endTurn && record.structuredResult !== undefined
      ? { structuredResult: record.structuredResult }
      : {}),
    ...(record.structuredContent !== undefined
      ? { structuredContent: record.structuredContent }
      : {}),
  };
  return result;
}

/** Either the blocks, or (as a string) the reason they are malformed. */
function normalizeContent(content: unknown): readonly ToolResultContentBlock[] | string {
  if (typeof content === "string") return content === "" ? [] : [{ type: "text", text: content }];
  if (!Array.isArray(content)) {
    return `returned content of type ${content === null ? "null" : typeof content}`;
  }
  const blocks: ToolResultContentBlock[] = [];
  for (let index = 0; index < content.length; index++) {
    const block: unknown = content[index];
    const problem = blockProblem(block);
    if (problem !== undefined) return `returned content[${index}] ${problem}`;
    const typed = block as ToolResultContentBlock;
    if (typed.type === "text" && typed.text === "") continue;
    blocks.push(typed);
  }
  return blocks;
}

function blockProblem(block: unknown): string | undefined {
  if (block === null || typeof block !== "object") return `= ${describeValue(block)}, not a block`;
  const { type } = block as { type?: unknown };
  if (type === "text") {
    return typeof (block as { text?: unknown }).text === "string"
      ? undefined
      : "of type text without a string `text`";
  }
  if (type === "image") {
    const source = (block as { source?: unknown }).source as Partial<ImageSource> | undefined;
    if (source?.type === "base64") {
      const { media_type, data } = source as { media_type?: unknown; data?: unknown };
      if (typeof media_type === "string" && typeof data === "string") return undefined;
    } else if (source?.type === "url" && typeof (source as { url?: unknown }).url === "string") {
      return undefined;
    }
    return 'of type image without a valid `source` ({ type: "base64", media_type, data } or { type: "url", url })';
  }
  return `has unknown block type ${describeValue(type)}`;
}

function malformed(toolName: string, what: string): ToolResult {
  const message = `Tool "${toolName}" ${what}. A handler must return { content } where content is a string or an array of text and image blocks.`;
  return {
    content: [{ type: "text", text: message }],
    isError: true,
    endTurn: false,
    error: new LatticeError("invalid_tool_result", message),
  };
}

/**
 * The text of a result: its text blocks joined with newlines (images are skipped). This is
 * what a run's `result` holds when a tool ends it (T8).
 *
 * @param result - A tool result.
 */
export function toolResultText(result: Pick<ToolResult, "content">): string {
  let text = "";
  let first = true;
  for (const block of result.content) {
    if (block.type !== "text") continue;
    text += first ? block.text : `\n${block.text}`;
    first = false;
  }
  return text;
}

/**
 * An `is_error` result with one text block, for failures decided outside a handler (unknown
 * tool, refused batch, denied call).
 *
 * @param text - The text the model reads.
 * @param error - The cause, kept for traces.
 */
export function errorToolResult(text: string, error?: unknown): ToolResult {
  return {
    content: [{ type: "text", text }],
    isError: true,
    endTurn: false,
    ...(error !== undefined ? { error } : {}),
  };
}
