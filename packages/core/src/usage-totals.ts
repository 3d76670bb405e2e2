import type { RunUsage } from "./sdk-message.js";

/** Token counts being added up (a mutable {@link RunUsage}). */
export type UsageTotals = { -readonly [K in keyof RunUsage]: RunUsage[K] };

/** Fresh zero totals. */
export function zeroUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

/**
 * Adds `more` to `totals`. Cache counts may be absent (logs written before they were kept,
 * or APIs that do not report them): they count as 0.
 */
export function addUsage(totals: UsageTotals, more: Partial<RunUsage>): void {
  totals.inputTokens += more.inputTokens ?? 0;
  totals.outputTokens += more.outputTokens ?? 0;
  totals.cacheReadInputTokens += more.cacheReadInputTokens ?? 0;
  totals.cacheCreationInputTokens += more.cacheCreationInputTokens ?? 0;
}
