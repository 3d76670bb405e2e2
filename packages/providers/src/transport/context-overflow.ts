/** What a context-overflow error said about the sizes, when it said them. */
export interface ContextOverflow {
  /** The refused prompt's size in tokens, when the message gives it. */
  readonly promptTokens: number | undefined;
  /** The model's context window in tokens, when the message gives it. */
  readonly contextLimit: number | undefined;
}

/** Anthropic: `prompt is too long: 210000 tokens > 200000 maximum`. */
const ANTHROPIC_TOO_LONG = /prompt is too long(?::\s*(\d+)\s*tokens?\s*>\s*(\d+)\s*maximum)?/i;
/** Anthropic (older models, Bedrock): `input length and max_tokens exceed context limit: 187254 + 20000 > 200000`. */
const ANTHROPIC_INPUT_AND_MAX =
  /input length and `?max_tokens`? exceed context limit(?::\s*(\d+)\s*\+\s*\d+\s*>\s*(\d+))?/i;
/** OpenAI and compatible APIs (DeepSeek, vLLM): `This model's maximum context length is 128000 tokens.` */
const OPENAI_LIMIT = /maximum context length is (\d+) tokens/i;
/** OpenAI's newer wording: `Input tokens exceed the configured limit of 272000 tokens.` */
const OPENAI_CONFIGURED_LIMIT = /exceeds? the configured limit of (\d+) tokens/i;
/** The prompt's part of an OpenAI-style message, most precise first. */
const OPENAI_PROMPT = [
  /(\d+) in (?:the messages|your prompt)/i,
  /messages resulted in (\d+) tokens/i,
];

/**
 * Recognises an API's refusal of a request as longer than the model's context window, and reads
 * the sizes from its message. Called only for error responses, never on the success path.
 *
 * Recognised: a 400 whose message says `prompt is too long` (Anthropic, with
 * `N tokens > W maximum`) or `input length and max_tokens exceed context limit` (Anthropic's
 * older models and Bedrock); a 400 whose error `code` is `context_length_exceeded` (OpenAI), or
 * whose message says `maximum context length is W tokens` (OpenAI, and compatible APIs that send
 * no code, such as DeepSeek and vLLM) or `exceed the configured limit of W tokens`.
 *
 * @param status - The HTTP status.
 * @param code - The API's error code (`error.code` in an OpenAI-style body), if any.
 * @param message - The API's error message, if any.
 * @returns The sizes (each `undefined` when the message does not give it), or `undefined` when
 *   the error is not a context overflow.
 */
export function parseContextOverflow(
  status: number,
  code: string | undefined,
  message: string | undefined,
): ContextOverflow | undefined {
  if (status !== 400) return undefined;
  const text = message ?? "";
  const anthropic = ANTHROPIC_TOO_LONG.exec(text) ?? ANTHROPIC_INPUT_AND_MAX.exec(text);
  if (anthropic !== null) {
    return { promptTokens: toNumber(anthropic[1]), contextLimit: toNumber(anthropic[2]) };
  }
  const limit = OPENAI_LIMIT.exec(text) ?? OPENAI_CONFIGURED_LIMIT.exec(text);
  if (limit === null && code !== "context_length_exceeded") return undefined;
  let promptTokens: number | undefined;
  for (const pattern of OPENAI_PROMPT) {
    const match = pattern.exec(text);
    if (match !== null) {
      promptTokens = toNumber(match[1]);
      break;
    }
  }
  return { promptTokens, contextLimit: toNumber(limit?.[1]) };
}

function toNumber(digits: string | undefined): number | undefined {
  if (digits === undefined) return undefined;
  const value = Number(digits);
  return Number.isSafeInteger(value) ? value : undefined;
}
