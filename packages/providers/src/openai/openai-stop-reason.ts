import type { StopReason } from "../model-response.js";

/**
 * Maps a Chat Completions `finish_reason` to the common {@link StopReason}: `stop` →
 * `end_turn` (or `tool_use` when the reply has tool calls, as some servers say `stop` then),
 * `tool_calls` and `function_call` → `tool_use`, `length` → `max_tokens`, `content_filter` →
 * `refusal`, anything else → `other`.
 *
 * @param reason - The API's finish reason, if any.
 * @param hasToolCalls - Whether the reply carries tool calls.
 */
export function openAiStopReason(
  reason: string | null | undefined,
  hasToolCalls: boolean,
): StopReason {
  switch (reason) {
    case "stop":
      return hasToolCalls ? "tool_use" : "end_turn";
    case "tool_calls":
    case "function_call":
      return "tool_use";
    case "length":
      return "max_tokens";
    case "content_filter":
      return "refusal";
    default:
      return hasToolCalls ? "tool_use" : "other";
  }
}
