import type { ContentBlock, ModelMessage, ModelToolSpec } from "@lattice/providers";

/**
 * Characters per token of the estimate (C1): about 4 for English text and code in the
 * tokenizers of Claude, GPT and DeepSeek models. An estimate only: what a model API counted
 * replaces it after every call.
 */
const CHARS_PER_TOKEN = 4;
/** What a message costs beyond its content (role and separators). */
const TOKENS_PER_MESSAGE = 4;
/** What an image or document block is counted as: a mid-size image on Claude (about 1,600). */
const TOKENS_PER_MEDIA_BLOCK = 1600;

/**
 * Estimates the tokens of messages (C1), as Lattice does between the counts a model API
 * reports: about one token per 4 characters of text, tool input (its JSON) and tool result, 4
 * tokens per message, and 1,600 per image or document. It errs on the high side for English
 * and code, low for CJK text: set a threshold with room to spare, or use
 * `countTokens: "provider"`.
 *
 * @param messages - The messages, as a model request holds them.
 * @returns The estimated tokens.
 */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  return estimateFrom(messages, 0);
}

/** The estimate of `messages` from index `from` on. Internal. */
export function estimateFrom(messages: readonly ModelMessage[], from: number): number {
  let chars = 0;
  let fixed = 0;
  for (let index = from; index < messages.length; index++) {
    const content = messages[index]!.content;
    fixed += TOKENS_PER_MESSAGE;
    if (typeof content === "string") {
      chars += content.length;
      continue;
    }
    for (const block of content as readonly ContentBlock[]) {
      const counted = blockChars(block);
      if (counted < 0) fixed += TOKENS_PER_MEDIA_BLOCK;
      else chars += counted;
    }
  }
  return fixed + Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The estimate of one block, in tokens. Internal. */
export function estimateBlock(block: ContentBlock): number {
  const chars = blockChars(block);
  return chars < 0 ? TOKENS_PER_MEDIA_BLOCK : Math.ceil(chars / CHARS_PER_TOKEN);
}

/** The estimate of what a request sends besides its messages: system prompt and tools. Internal. */
export function estimateFixed(
  system: string | undefined,
  tools: readonly ModelToolSpec[] | undefined,
): number {
  let chars = system?.length ?? 0;
  for (const tool of tools ?? []) {
    chars += tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length;
  }
  return Math.ceil(chars / CHARS_PER_TOKEN);
}

/** Characters of a block's text, or -1 for a media block counted as a whole. */
function blockChars(block: ContentBlock): number {
  switch (block.type) {
    case "text":
      return (block as { text: string }).text.length;
    case "tool_use":
      return block.name.length + JSON.stringify(block.input ?? {}).length;
    case "tool_result": {
      const content = block.content as string | readonly ContentBlock[] | undefined;
      if (content === undefined) return 0;
      if (typeof content === "string") return content.length;
      let chars = 0;
      for (const inner of content) {
        const counted = blockChars(inner);
        chars += counted < 0 ? TOKENS_PER_MEDIA_BLOCK * CHARS_PER_TOKEN : counted;
      }
      return chars;
    }
    case "thinking":
      return (block as { thinking: string }).thinking.length;
    case "image":
      return -1;
    default:
      // A PDF or other document (an opaque block here) is counted as a whole, as an image is.
      return (block.type as string) === "document" ? -1 : JSON.stringify(block).length;
  }
}

/**
 * Context windows of known models, in tokens, by model id prefix (the longest prefix wins),
 * as their makers documented them in December 2026. A model not listed has no known window:
 * give `contextManagement.contextWindow` (or `maxInputTokens`).
 */
export const BUILTIN_CONTEXT_WINDOWS: { readonly [modelPrefix: string]: number } = Object.freeze({
  "claude-": 200_000,
  "deepseek-": 128_000,
  "gpt-4o": 128_000,
  "gpt-4.1": 1_047_576,
  "gpt-5": 400_000,
  o3: 200_000,
  "o4-": 200_000,
});

/**
 * The context window of a model, in tokens, from {@link BUILTIN_CONTEXT_WINDOWS}.
 *
 * @returns The window, or `undefined` when the model is not listed.
 */
export function contextWindowOf(model: string): number | undefined {
  let best: string | undefined;
  for (const prefix of Object.keys(BUILTIN_CONTEXT_WINDOWS)) {
    if (model.startsWith(prefix) && (best === undefined || prefix.length > best.length)) {
      best = prefix;
    }
  }
  return best === undefined ? undefined : BUILTIN_CONTEXT_WINDOWS[best];
}
