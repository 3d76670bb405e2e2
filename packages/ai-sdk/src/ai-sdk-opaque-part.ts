import type { JSONValue, SharedV3ProviderMetadata } from "@ai-sdk/provider";
import type { OpaqueBlock } from "@lattice/providers";
import { hasProviderMetadata } from "./provider-metadata.js";

/** The `provider` of the opaque blocks the bridge keeps, and the bridge's provider name. */
export const AI_SDK_PROVIDER_NAME = "ai-sdk";

/**
 * An opaque block holding a provider-executed tool call (a server-side tool such as a web
 * search the provider ran itself) in the form the AI SDK sends it back: a `tool-call` prompt
 * part with the input parsed and `providerExecuted: true`. Lattice does not run it; the bridge
 * sends it back unchanged on the next turn, as the AI SDK does.
 *
 * @param toolCallId - The call's id.
 * @param toolName - The tool's name.
 * @param input - The call's input: JSON text, or a value.
 * @param metadata - The part's provider metadata, sent back as `providerOptions`.
 */
export function providerExecutedCall(
  toolCallId: string,
  toolName: string,
  input: unknown,
  metadata: SharedV3ProviderMetadata | undefined,
): OpaqueBlock {
  return opaque({
    type: "tool-call",
    toolCallId,
    toolName,
    input: typeof input === "string" ? parseOrKeep(input) : (input ?? {}),
    providerExecuted: true,
    ...(hasProviderMetadata(metadata) ? { providerOptions: metadata } : {}),
  });
}

/**
 * An opaque block holding the result of a provider-executed tool call, as the AI SDK sends it
 * back: a `tool-result` prompt part whose output is `text` (a string result), `json`, or
 * `error-json` when the provider marked it an error.
 *
 * @param toolCallId - The call's id.
 * @param toolName - The tool's name.
 * @param result - The provider's result.
 * @param isError - Whether the provider marked it an error.
 * @param metadata - The part's provider metadata, sent back as `providerOptions`.
 */
export function providerExecutedResult(
  toolCallId: string,
  toolName: string,
  result: unknown,
  isError: boolean | undefined,
  metadata: SharedV3ProviderMetadata | undefined,
): OpaqueBlock {
  const value = (result ?? null) as JSONValue;
  const output =
    isError === true
      ? { type: "error-json", value }
      : typeof value === "string"
        ? { type: "text", value }
        : { type: "json", value };
  return opaque({
    type: "tool-result",
    toolCallId,
    toolName,
    output,
    ...(hasProviderMetadata(metadata) ? { providerOptions: metadata } : {}),
  });
}

function opaque(block: { readonly type: string; readonly [key: string]: unknown }): OpaqueBlock {
  return { type: "opaque", provider: AI_SDK_PROVIDER_NAME, block };
}

function parseOrKeep(text: string): unknown {
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
