import type { ModelContextEdit } from "../model-response.js";

/**
 * Decodes Anthropic's `context_management` response field (`{ applied_edits: [{ type,
 * cleared_input_tokens, cleared_tool_uses | cleared_thinking_turns }] }`) into
 * {@link ModelContextEdit}s. Edits without a string `type` are left out; a count that is not a
 * number is 0 (`cleared_input_tokens`) or left out (the others).
 *
 * @param wire - The `context_management` value of a message or a `message_delta` event.
 * @returns The applied edits, or `undefined` when the field is absent, `null` or has no
 *   `applied_edits` array.
 */
export function decodeAnthropicContextEdits(wire: unknown): ModelContextEdit[] | undefined {
  if (wire === null || typeof wire !== "object") return undefined;
  const applied = (wire as { applied_edits?: unknown }).applied_edits;
  if (!Array.isArray(applied)) return undefined;
  const edits: ModelContextEdit[] = [];
  for (const item of applied) {
    if (item === null || typeof item !== "object") continue;
    const record = item as Record<string, unknown>;
    if (typeof record.type !== "string") continue;
    const edit: {
      type: string;
      clearedInputTokens: number;
      clearedToolUses?: number;
      clearedThinkingTurns?: number;
    } = {
      type: record.type,
      clearedInputTokens:
        typeof record.cleared_input_tokens === "number" ? record.cleared_input_tokens : 0,
    };
    if (typeof record.cleared_tool_uses === "number") {
      edit.clearedToolUses = record.cleared_tool_uses;
    }
    if (typeof record.cleared_thinking_turns === "number") {
      edit.clearedThinkingTurns = record.cleared_thinking_turns;
    }
    edits.push(edit);
  }
  return edits;
}
