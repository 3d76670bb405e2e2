import type { ModelUsage } from "../model-response.js";

/**
 * Merges an Anthropic `usage` object into `usage`, in place. Counts in `message_delta` are
 * cumulative, so a present field replaces the earlier value.
 *
 * @param usage - The usage so far.
 * @param wire - The API's usage object, if any.
 */
export function mergeAnthropicUsage(usage: ModelUsage, wire: unknown): void {
  if (wire === null || typeof wire !== "object") return;
  const record = wire as Record<string, unknown>;
  const input = record.input_tokens;
  if (typeof input === "number") usage.inputTokens = input;
  const output = record.output_tokens;
  if (typeof output === "number") usage.outputTokens = output;
  const cacheRead = record.cache_read_input_tokens;
  if (typeof cacheRead === "number") usage.cacheReadInputTokens = cacheRead;
  const cacheCreation = record.cache_creation_input_tokens;
  if (typeof cacheCreation === "number") usage.cacheCreationInputTokens = cacheCreation;
}
