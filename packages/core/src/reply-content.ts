import type { ContentBlock, ToolUseBlock } from "@lattice/providers";

/** The `tool_use` blocks of a reply, in order. */
export function toolUsesOf(content: readonly ContentBlock[]): ToolUseBlock[] {
  const toolUses: ToolUseBlock[] = [];
  for (const block of content) if (block.type === "tool_use") toolUses.push(block);
  return toolUses;
}

/** The text of an assistant reply: its text blocks, joined by newlines. */
export function textOf(content: readonly ContentBlock[]): string {
  let text = "";
  for (const block of content) {
    if (block.type === "text") text += text === "" ? block.text : `\n${block.text}`;
  }
  return text;
}

/** The first tool_use id that appears twice in a reply, if any (H13). */
export function duplicateToolUseId(toolUses: readonly ToolUseBlock[]): string | undefined {
  if (toolUses.length < 2) return undefined;
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (seen.has(block.id)) return block.id;
    seen.add(block.id);
  }
  return undefined;
}
