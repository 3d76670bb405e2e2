import type { StopReason } from "../model-response.js";

/**
 * Maps an Anthropic `stop_reason` to the common {@link StopReason}:
 * `end_turn`, `tool_use`, `max_tokens`, `stop_sequence`, `pause_turn` and `refusal` keep their
 * names; `model_context_window_exceeded` is `max_tokens` (the reply was cut short); anything
 * else is `other`.
 *
 * @param reason - The API's stop reason, if any.
 */
export function anthropicStopReason(reason: string | null | undefined): StopReason {
  switch (reason) {
    case "end_turn":
    case "tool_use":
    case "max_tokens":
    case "stop_sequence":
    case "pause_turn":
    case "refusal":
      return reason;
    case "model_context_window_exceeded":
      return "max_tokens";
    default:
      return "other";
  }
}
