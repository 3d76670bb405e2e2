import type {
  AnthropicCacheControl,
  AnthropicContentParam,
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicOpaqueParam,
} from "./anthropic-wire.js";

/** The most `cache_control` breakpoints the Messages API accepts in one request. */
export const MAX_CACHE_BREAKPOINTS = 4;
const EPHEMERAL: AnthropicCacheControl = { type: "ephemeral" };
/** Block types that accept `cache_control` (thinking blocks do not). */
const CACHEABLE: ReadonlySet<string> = new Set([
  "text",
  "image",
  "document",
  "search_result",
  "tool_use",
  "tool_result",
]);
type WireBlock = AnthropicContentParam | AnthropicOpaqueParam;

/**
 * Puts `cache_control: { type: "ephemeral" }` breakpoints on a Messages API body, in place,
 * without touching the caller's objects (a block that gets a breakpoint is copied). At most
 * {@link MAX_CACHE_BREAKPOINTS} in all, counting the ones the messages already carry, in this
 * order of priority:
 *
 * 1. the latest message's last block that accepts one (a string content becomes a text block);
 * 2. the system prompt, sent as one text block;
 * 3. the last tool;
 * 4. the last block of the user message before the latest assistant message: where the previous
 *    request of a tool loop put its breakpoint 1, so the cache is found even when the latest
 *    turn added more blocks than the API looks back over (20).
 *
 * The API caches the prefix up to each breakpoint (tools, then system, then messages), so a tool
 * loop re-reads its whole prefix on every turn and writes only the new part.
 *
 * @param body - The request body, changed in place.
 */
export function placeCacheBreakpoints(body: AnthropicMessagesBody): void {
  let budget = MAX_CACHE_BREAKPOINTS - countBreakpoints(body.messages);
  const messages = body.messages;
  const latest = messages.length - 1;
  if (budget > 0 && latest >= 0 && markMessage(messages, latest)) budget--;
  if (budget > 0 && typeof body.system === "string") {
    body.system = [{ type: "text", text: body.system, cache_control: EPHEMERAL }];
    budget--;
  }
  const tools = body.tools;
  if (budget > 0 && tools !== undefined && tools.length > 0) {
    const last = tools.length - 1;
    tools[last] = { ...tools[last]!, cache_control: EPHEMERAL };
    budget--;
  }
  if (budget > 0) {
    const previous = previousUserMessage(messages);
    if (previous >= 0) markMessage(messages, previous);
  }
}

/** Puts a breakpoint on a message's last cacheable block; `false` when it has none. */
function markMessage(messages: AnthropicMessageParam[], index: number): boolean {
  const message = messages[index]!;
  const content = message.content;
  if (typeof content === "string") {
    if (content === "") return false;
    messages[index] = {
      role: message.role,
      content: [{ type: "text", text: content, cache_control: EPHEMERAL }],
    };
    return true;
  }
  for (let position = content.length - 1; position >= 0; position--) {
    const block = content[position]!;
    if (!CACHEABLE.has(block.type)) continue;
    if (block.type === "text" && (block as { text?: unknown }).text === "") continue;
    if (hasCacheControl(block)) return false;
    const blocks: WireBlock[] = [...content];
    blocks[position] = { ...block, cache_control: EPHEMERAL } as WireBlock;
    messages[index] = { role: message.role, content: blocks };
    return true;
  }
  return false;
}

/** The user message before the latest assistant message, or -1. */
function previousUserMessage(messages: readonly AnthropicMessageParam[]): number {
  let index = messages.length - 2;
  while (index >= 0 && messages[index]!.role !== "assistant") index--;
  index--;
  while (index >= 0 && messages[index]!.role !== "user") index--;
  return index;
}

/** How many breakpoints the messages carry already, tool_result contents included. */
function countBreakpoints(messages: readonly AnthropicMessageParam[]): number {
  let count = 0;
  for (const message of messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) {
      if (hasCacheControl(block)) count++;
      const inner = (block as { content?: unknown }).content;
      if (block.type === "tool_result" && Array.isArray(inner)) {
        for (const item of inner) if (hasCacheControl(item)) count++;
      }
    }
  }
  return count;
}

function hasCacheControl(block: unknown): boolean {
  const value = (block as { cache_control?: unknown } | null)?.cache_control;
  return value !== undefined && value !== null;
}
