import { describeValue } from "@lattice/tools/internal";
import { nestsDeeperThan } from "./plain-json-problem.js";

/**
 * The deepest nesting of a value in a block (a tool input, an opaque block) that is sent
 * again: what a Lattice session store keeps at most (an entry nested deeper is refused on
 * append), and well within what `JSON.stringify` can serialise for the next request. Internal.
 */
export const MAX_STORED_VALUE_DEPTH = 1000;

/**
 * Where content blocks stand, which decides the block types allowed there:
 *
 * - `"prompt"`: a run's prompt (`query(prompt)`, a stored `run_started` message): text and
 *   images, and `opaque` blocks (an API's own block, such as Anthropic's `document`, sent to
 *   that API only).
 * - `"user"`: a user message of a caller-kept history: what a prompt holds, and the
 *   `tool_result` blocks that answer the calls of the assistant message before it.
 * - `"assistant"`: a model's reply: text, `tool_use`, `thinking`, `redacted_thinking`, and
 *   `opaque` blocks (an API's own blocks, such as Anthropic's `server_tool_use` and
 *   `web_search_tool_result`, kept verbatim).
 * - `"tool_result"`: the content of a `tool_result` block: text and images.
 *
 * An opaque block never wraps a `tool_use` or `tool_result`: the calls and their results are
 * Lattice's own blocks, paired by the checks of the log and the history. Internal.
 */
export type BlockPosition = "prompt" | "user" | "assistant" | "tool_result";

const ALLOWED: { readonly [position in BlockPosition]: ReadonlySet<string> } = {
  prompt: new Set(["text", "image", "opaque"]),
  user: new Set(["text", "image", "opaque", "tool_result"]),
  assistant: new Set(["text", "tool_use", "thinking", "redacted_thinking", "opaque"]),
  tool_result: new Set(["text", "image"]),
};

const HOLDER: { readonly [position in BlockPosition]: string } = {
  prompt: "a prompt",
  user: "a user message",
  assistant: "an assistant message",
  tool_result: "a tool result",
};

/**
 * Why content blocks cannot be sent to a model API where they stand, as the rest of a sentence
 * after "holds" (`content block 2 of type "bogus", which ...`), or `undefined` when they can.
 * The one check of blocks for a caller's history, a prompt, a stored reply and a tool result's
 * content (H24): each block an object of a type allowed at `position`, with the fields the
 * providers read (a string `text`; an image `source` of base64 data or a URL; a `tool_use` with
 * a string id and name and an object input; ...). Values from the input are quoted short.
 *
 * @param content - The blocks.
 * @param position - Where they stand.
 */
export function contentBlocksProblem(
  content: readonly unknown[],
  position: BlockPosition,
): string | undefined {
  const allowed = ALLOWED[position];
  for (let index = 0; index < content.length; index++) {
    const block = content[index] as Record<string, unknown> | null;
    if (block === null || typeof block !== "object" || Array.isArray(block)) {
      return `content block ${index}, ${describeValue(block)}, which is not an object with a string "type"`;
    }
    const type = block.type;
    if (typeof type !== "string") {
      return `content block ${index}, whose "type" is ${describeValue(type)}, not a string`;
    }
    if (!allowed.has(type)) {
      return `content block ${index} of type ${describeValue(type)}, which ${HOLDER[position]} cannot hold (it holds ${[...allowed].join(", ")} blocks)`;
    }
    const problem = blockProblem(block, type, index);
    if (problem !== undefined) return problem;
  }
  return undefined;
}

/** What a block of an allowed type lacks, or `undefined`. */
function blockProblem(
  block: Record<string, unknown>,
  type: string,
  index: number,
): string | undefined {
  switch (type) {
    case "text":
      return typeof block.text === "string"
        ? undefined
        : `text block ${index} without a string "text"`;
    case "image":
      return isImageSource(block.source)
        ? undefined
        : `image block ${index} without a valid source ({ type: "base64", media_type, data } or { type: "url", url }, strings)`;
    case "tool_use":
      if (
        typeof block.id !== "string" ||
        typeof block.name !== "string" ||
        !isObject(block.input) ||
        (block.inputError !== undefined && typeof block.inputError !== "string")
      ) {
        return `tool_use block ${index} without a string id and name and an object input`;
      }
      return nestsDeeperThan(block.input, MAX_STORED_VALUE_DEPTH)
        ? `tool_use block ${index} whose input is nested more than ${MAX_STORED_VALUE_DEPTH} levels deep`
        : undefined;
    case "tool_result": {
      const content = block.content;
      if (
        typeof block.tool_use_id !== "string" ||
        (typeof content !== "string" && !Array.isArray(content)) ||
        (block.is_error !== undefined && typeof block.is_error !== "boolean")
      ) {
        return `tool_result block ${index} without a string tool_use_id and a content (a string, or text and image blocks)`;
      }
      if (typeof content === "string") return undefined;
      const inner = contentBlocksProblem(content, "tool_result");
      return inner === undefined
        ? undefined
        : `tool_result block ${index} whose content holds ${inner}`;
    }
    case "thinking":
      return typeof block.thinking === "string" && typeof block.signature === "string"
        ? undefined
        : `thinking block ${index} without a string "thinking" and "signature"`;
    case "redacted_thinking":
      return typeof block.data === "string"
        ? undefined
        : `redacted_thinking block ${index} without a string "data"`;
    default:
      // "opaque": an API's own block, sent back only to that API, exactly as it came.
      if (
        typeof block.provider !== "string" ||
        !isObject(block.block) ||
        typeof (block.block as { type?: unknown }).type !== "string"
      ) {
        return `opaque block ${index} without a string "provider" and a "block" object with a string "type"`;
      }
      if (PAIRED.has((block.block as { type: string }).type)) {
        return `opaque block ${index} wrapping a ${(block.block as { type: string }).type} block, which would escape the pairing of calls and results`;
      }
      return nestsDeeperThan(block.block, MAX_STORED_VALUE_DEPTH)
        ? `opaque block ${index} nested more than ${MAX_STORED_VALUE_DEPTH} levels deep`
        : undefined;
  }
}

/** Block types the log and the history pair up: never inside an opaque block. */
const PAIRED: ReadonlySet<string> = new Set(["tool_use", "tool_result"]);

function isObject(value: unknown): value is object {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function isImageSource(source: unknown): boolean {
  if (!isObject(source)) return false;
  const fields = source as Record<string, unknown>;
  return fields.type === "base64"
    ? typeof fields.media_type === "string" && typeof fields.data === "string"
    : fields.type === "url" && typeof fields.url === "string";
}
