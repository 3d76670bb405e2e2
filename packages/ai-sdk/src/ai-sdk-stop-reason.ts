import type { LanguageModelV2FinishReason, LanguageModelV3FinishReason } from "@ai-sdk/provider";
import type { StopReason } from "@lattice/providers";

/** A Lattice stop reason and the provider's raw finish reason, when it gave one. */
export interface MappedStopReason {
  /** The normalised reason. */
  readonly stopReason: StopReason;
  /** The provider's own finish reason (V3 `finishReason.raw`); absent for V2 models. */
  readonly rawStopReason: string | undefined;
}

/**
 * Maps an AI SDK finish reason (V3 `{ unified, raw }` or a V2 string) to a Lattice
 * {@link StopReason}:
 *
 * - `tool-calls` → `tool_use`;
 * - `stop` → `end_turn`, or `stop_sequence` when the raw reason says `stop_sequence`, or
 *   `tool_use` when the reply carries tool calls (some servers say `stop` then);
 * - `length` → `max_tokens`; `content-filter` → `refusal`;
 * - `other`, `error`, V2 `unknown` and anything else → `tool_use` when the reply carries tool
 *   calls, else `other`;
 * - whatever the unified reason, a raw `pause_turn` (Anthropic pausing a long server-tool turn)
 *   without tool calls → `pause_turn`.
 *
 * @param finishReason - The finish reason of a `finish` stream part or a `doGenerate` result.
 * @param hasToolCalls - Whether the reply carries tool calls Lattice will run.
 */
export function toStopReason(
  finishReason: LanguageModelV2FinishReason | LanguageModelV3FinishReason | null | undefined,
  hasToolCalls: boolean,
): MappedStopReason {
  let unified: string | undefined;
  let raw: string | undefined;
  if (typeof finishReason === "string") unified = finishReason;
  else if (finishReason !== null && typeof finishReason === "object") {
    unified = finishReason.unified;
    raw = typeof finishReason.raw === "string" ? finishReason.raw : undefined;
  }
  return { stopReason: normalise(unified, raw, hasToolCalls), rawStopReason: raw };
}

function normalise(
  unified: string | undefined,
  raw: string | undefined,
  hasToolCalls: boolean,
): StopReason {
  // Anthropic's server-tool pause, whatever unified reason the provider package gives it.
  if (raw === "pause_turn" && !hasToolCalls) return "pause_turn";
  switch (unified) {
    case "tool-calls":
      return "tool_use";
    case "stop":
      if (hasToolCalls) return "tool_use";
      return raw === "stop_sequence" ? "stop_sequence" : "end_turn";
    case "length":
      return "max_tokens";
    case "content-filter":
      return "refusal";
    default:
      return hasToolCalls ? "tool_use" : "other";
  }
}
