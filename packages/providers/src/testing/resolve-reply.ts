import type { ModelContextEdit, StopReason } from "../model-response.js";
import type { ScriptedReply } from "./scripted-turn.js";

/** A scripted block with everything the renderers need filled in. */
export type ResolvedBlock =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly json: string }
  | { readonly type: "thinking"; readonly thinking: string; readonly signature: string }
  | { readonly type: "refusal"; readonly text: string }
  | {
      readonly type: "anthropic_block";
      readonly block: { readonly type: string; readonly [key: string]: unknown };
    };

/** A scripted reply ready to render: ids generated, inputs serialised, defaults applied. */
export interface ResolvedReply {
  readonly blocks: readonly ResolvedBlock[];
  readonly stopReason: StopReason;
  readonly inputTokens: number;
  readonly outputTokens: number;
  /** Cache reads to report; absent: not reported. */
  readonly cacheReadInputTokens?: number;
  /** Cache writes to report; absent: not reported. */
  readonly cacheCreationInputTokens?: number;
  readonly model: string;
  /** Delta size in characters; 0 means one delta per block. */
  readonly chunkSize: number;
  /** Context edits to report as `context_management.applied_edits`; absent: not reported. */
  readonly contextEdits?: readonly ModelContextEdit[];
}

/**
 * Fills in a scripted reply's defaults: tool call ids (`toolu_…` for Anthropic, `call_…` for
 * OpenAI), input JSON text, the stop reason (`refusal` with a refusal block), usage, the
 * model name and, for Anthropic, the context edits to report.
 *
 * @param reply - The scripted reply.
 * @param protocol - The request's protocol, for id prefixes.
 * @param serial - A number unique to this response, for ids.
 * @param requestModel - The request's model, the default model name.
 * @param requestTokens - The request's estimate (`estimateRequestTokens`), for the default
 *   input token count.
 * @param cache - The prompt-cache model's counts for this request, if it has breakpoints.
 * @param editsRequested - Whether the request asked for context editing: the reply then reports
 *   its `contextEdits`, or none applied (`[]`).
 */
export function resolveReply(
  reply: ScriptedReply,
  protocol: "anthropic" | "openai",
  serial: number,
  requestModel: string,
  requestTokens: number,
  cache?: CacheUsage,
  editsRequested = false,
): ResolvedReply {
  const prefix = protocol === "anthropic" ? "toolu_scripted_" : "call_scripted_";
  let hasToolUse = false;
  let hasRefusal = false;
  let characters = 0;
  const blocks = reply.content.map((block, index): ResolvedBlock | undefined => {
    if (block.type === "tool_use") {
      hasToolUse = true;
      const json = block.inputJson ?? JSON.stringify(block.input ?? {});
      characters += json.length;
      return {
        type: "tool_use",
        id: block.id ?? `${prefix}${serial}_${index}`,
        name: block.name,
        json,
      };
    }
    if (block.type === "anthropic_block") {
      if (protocol === "openai") return undefined;
      characters += JSON.stringify(block.block).length;
      return block;
    }
    if (block.type === "refusal") hasRefusal = true;
    characters += block.type === "thinking" ? block.thinking.length : block.text.length;
    return block;
  });
  const usage = reply.usage;
  const cacheRead = usage?.cacheReadInputTokens ?? cache?.cacheReadInputTokens;
  const cacheCreation = usage?.cacheCreationInputTokens ?? cache?.cacheCreationInputTokens;
  const cached = (cacheRead ?? 0) + (cacheCreation ?? 0);
  const resolved: {
    -readonly [K in keyof ResolvedReply]: ResolvedReply[K];
  } = {
    blocks: blocks.filter((block) => block !== undefined),
    stopReason: reply.stopReason ?? (hasRefusal ? "refusal" : hasToolUse ? "tool_use" : "end_turn"),
    inputTokens: usage?.inputTokens ?? Math.max(1, requestTokens - cached),
    outputTokens: usage?.outputTokens ?? Math.max(1, Math.ceil(characters / 4)),
    model: reply.model ?? requestModel,
    chunkSize: reply.chunkSize ?? 0,
  };
  if (cacheRead !== undefined) resolved.cacheReadInputTokens = cacheRead;
  if (cacheCreation !== undefined) resolved.cacheCreationInputTokens = cacheCreation;
  if (protocol === "anthropic" && (reply.contextEdits !== undefined || editsRequested)) {
    resolved.contextEdits = reply.contextEdits ?? [];
  }
  return resolved;
}

/** Cache reads and writes of one request, in tokens. */
export interface CacheUsage {
  readonly cacheReadInputTokens: number;
  readonly cacheCreationInputTokens: number;
}

/**
 * Splits text into pieces of `size` characters (the whole text when `size` is 0 or larger).
 *
 * @param text - The text.
 * @param size - The piece size.
 */
export function splitText(text: string, size: number): string[] {
  if (size <= 0 || text.length <= size) return [text];
  const pieces: string[] = [];
  for (let start = 0; start < text.length; start += size)
    pieces.push(text.slice(start, start + size));
  return pieces;
}
