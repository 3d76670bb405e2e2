import type { ModelUsage } from "../model-response.js";

/**
 * Reads a Chat Completions `usage` object with Anthropic's meaning: cached prompt tokens
 * (`prompt_tokens_details.cached_tokens`, or DeepSeek's `prompt_cache_hit_tokens` when that is
 * absent) move from `inputTokens` to `cacheReadInputTokens`, which is set only when some were
 * cached. These APIs cache by themselves and report no cache writes, so
 * `cacheCreationInputTokens` is never set.
 *
 * @param wire - The API's usage object.
 * @returns The usage, or `undefined` when `wire` is not a usage object.
 */
export function readOpenAiUsage(wire: unknown): ModelUsage | undefined {
  if (wire === null || typeof wire !== "object") return undefined;
  const record = wire as Record<string, unknown>;
  const prompt = typeof record.prompt_tokens === "number" ? record.prompt_tokens : 0;
  const completion = typeof record.completion_tokens === "number" ? record.completion_tokens : 0;
  const details = record.prompt_tokens_details as Record<string, unknown> | null | undefined;
  const cached =
    typeof details?.cached_tokens === "number"
      ? details.cached_tokens
      : typeof record.prompt_cache_hit_tokens === "number"
        ? record.prompt_cache_hit_tokens
        : 0;
  const usage: ModelUsage = { inputTokens: prompt - cached, outputTokens: completion };
  if (cached > 0) usage.cacheReadInputTokens = cached;
  return usage;
}
