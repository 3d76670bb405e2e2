import type { LanguageModelV2Usage, LanguageModelV3Usage } from "@ai-sdk/provider";
import type { ModelUsage } from "@lattice/providers";

/**
 * Converts an AI SDK usage object to Lattice's {@link ModelUsage}, whose `inputTokens` excludes
 * tokens read from or written to the prompt cache.
 *
 * - V3 (`inputTokens: { total, noCache, cacheRead, cacheWrite }`): `inputTokens` is `noCache`
 *   (or `total` minus both cache counts when the provider leaves `noCache` out);
 *   `cacheRead` → `cacheReadInputTokens`, `cacheWrite` → `cacheCreationInputTokens`;
 *   `outputTokens` is `outputTokens.total` (reasoning included).
 * - V2 (`inputTokens` a number, `cachedInputTokens`): `inputTokens` counts the whole prompt,
 *   as the AI SDK itself reads it, so the cached tokens move to `cacheReadInputTokens`. V2
 *   reports no cache writes.
 *
 * The shape is read from the object, not the model's version, and missing counts are 0. A
 * cache count is set only when the provider reported one.
 *
 * @param usage - The usage of a `finish` stream part or a `doGenerate` result.
 */
export function toModelUsage(
  usage: LanguageModelV2Usage | LanguageModelV3Usage | null | undefined,
): ModelUsage {
  if (usage === null || typeof usage !== "object") return { inputTokens: 0, outputTokens: 0 };
  const input = usage.inputTokens as unknown;
  if (input !== null && typeof input === "object") {
    const v3 = usage as LanguageModelV3Usage;
    const cacheRead = count(v3.inputTokens.cacheRead);
    const cacheWrite = count(v3.inputTokens.cacheWrite);
    const noCache =
      count(v3.inputTokens.noCache) ??
      Math.max(0, (count(v3.inputTokens.total) ?? 0) - (cacheRead ?? 0) - (cacheWrite ?? 0));
    const output = v3.outputTokens as LanguageModelV3Usage["outputTokens"] | undefined;
    const result: ModelUsage = { inputTokens: noCache, outputTokens: count(output?.total) ?? 0 };
    if (cacheRead !== undefined) result.cacheReadInputTokens = cacheRead;
    if (cacheWrite !== undefined) result.cacheCreationInputTokens = cacheWrite;
    return result;
  }
  const v2 = usage as LanguageModelV2Usage;
  const cached = count(v2.cachedInputTokens);
  const result: ModelUsage = {
    inputTokens: Math.max(0, (count(v2.inputTokens) ?? 0) - (cached ?? 0)),
    outputTokens: count(v2.outputTokens) ?? 0,
  };
  if (cached !== undefined) result.cacheReadInputTokens = cached;
  return result;
}

function count(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}
