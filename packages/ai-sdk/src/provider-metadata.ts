import type { SharedV3ProviderMetadata, SharedV3ProviderOptions } from "@ai-sdk/provider";

/**
 * AI SDK provider metadata, by provider name (for example
 * `{ anthropic: { signature: "…" } }` on a reasoning part, or
 * `{ google: { thoughtSignature: "…" } }` on a tool call).
 *
 * The bridge keeps it on the block it belongs to, in a `providerMetadata` field next to the
 * block's Lattice fields, and sends it back as that part's `providerOptions` on the next turn,
 * as the AI SDK itself does. The field is plain JSON, so it survives session stores.
 */
export type AiSdkProviderMetadata = SharedV3ProviderMetadata;

/**
 * `block` with `metadata` as its `providerMetadata` field, when `metadata` holds at least one
 * non-empty provider entry; else `block` itself.
 *
 * @param block - A Lattice content block.
 * @param metadata - The AI SDK part's provider metadata, if any.
 */
export function withProviderMetadata<Block extends object>(
  block: Block,
  metadata: AiSdkProviderMetadata | undefined,
): Block {
  if (!hasProviderMetadata(metadata)) return block;
  return { ...block, providerMetadata: metadata };
}

/**
 * The `providerMetadata` a bridged block carries, as AI SDK `providerOptions`; `undefined` when
 * it has none (for example a block from another adapter).
 *
 * @param block - Any content block.
 */
export function providerOptionsOf(block: object): SharedV3ProviderOptions | undefined {
  const metadata = (block as { providerMetadata?: unknown }).providerMetadata;
  return hasProviderMetadata(metadata) ? (metadata as SharedV3ProviderOptions) : undefined;
}

/**
 * Whether `metadata` holds at least one non-empty provider entry (`{ "openai-compatible": {} }`
 * does not).
 *
 * @param metadata - Any value.
 */
export function hasProviderMetadata(metadata: unknown): metadata is AiSdkProviderMetadata {
  if (metadata === null || typeof metadata !== "object" || Array.isArray(metadata)) return false;
  for (const key in metadata) {
    const entry = (metadata as Record<string, unknown>)[key];
    if (entry !== null && typeof entry === "object") {
      for (const _field in entry) return true;
    }
  }
  return false;
}

/**
 * Base64 text of `data`: returned as is when it is a string already (the AI SDK's convention
 * for generated files), else encoded.
 *
 * @param data - A generated file's data.
 */
export function toBase64(data: string | Uint8Array): string {
  if (typeof data === "string") return data;
  let binary = "";
  for (let offset = 0; offset < data.length; offset += 0x8000) {
    binary += String.fromCharCode(...data.subarray(offset, offset + 0x8000));
  }
  return btoa(binary);
}
