import type { ContentBlock } from "../content-blocks.js";
import type { ModelUsage } from "../model-response.js";
import { ProviderError } from "../provider-error.js";
import { objectToolCallInput } from "../transport/parse-tool-input.js";
import type { DecodedMessage, EndpointContext } from "../transport/stream-decoder.js";
import { anthropicStopReason } from "./anthropic-stop-reason.js";
import { mergeAnthropicUsage } from "./anthropic-usage.js";
import { decodeAnthropicContextEdits } from "./decode-anthropic-context-edits.js";

/**
 * Decodes a non-streaming Messages API response (`{ type: "message", content, stop_reason,
 * usage }`). Text, thinking, redacted thinking and tool_use blocks are decoded; blocks of any
 * other type (`server_tool_use`, `web_search_tool_result`, future types) are kept verbatim as
 * opaque blocks, to be sent back unchanged. Usage includes the cache reads and writes;
 * `context_management.applied_edits`, when present, becomes `contextEdits`.
 *
 * @param context - The endpoint, for error messages.
 * @param body - The parsed JSON body.
 * @throws {@link ProviderError} (`provider_malformed_response`) when it is not a message.
 */
export function decodeAnthropicMessage(context: EndpointContext, body: unknown): DecodedMessage {
  const message = body as Record<string, unknown> | null;
  if (message === null || typeof message !== "object" || !Array.isArray(message.content)) {
    throw new ProviderError({
      code: "provider_malformed_response",
      message: `${context.label} at ${context.endpoint} answered 200 with a body that is not a message (no content array). Check that baseURL points at an Anthropic-compatible API.`,
      endpoint: context.endpoint,
      retryable: false,
    });
  }
  const content: ContentBlock[] = [];
  for (const item of message.content as unknown[]) {
    const block = item as Record<string, unknown>;
    switch (block?.type) {
      case "text":
        content.push({ type: "text", text: String(block.text ?? "") });
        break;
      case "thinking":
        content.push({
          type: "thinking",
          thinking: String(block.thinking ?? ""),
          signature: String(block.signature ?? ""),
        });
        break;
      case "redacted_thinking":
        content.push({ type: "redacted_thinking", data: String(block.data ?? "") });
        break;
      case "tool_use": {
        const name = String(block.name ?? "");
        const parsed = objectToolCallInput(name, block.input);
        const id = String(block.id ?? `toolu_lattice_${content.length}`);
        content.push(
          parsed.inputError === undefined
            ? { type: "tool_use", id, name, input: parsed.input }
            : { type: "tool_use", id, name, input: parsed.input, inputError: parsed.inputError },
        );
        break;
      }
      default:
        if (block !== null && typeof block === "object" && typeof block.type === "string") {
          content.push({
            type: "opaque",
            provider: "anthropic",
            block: block as { type: string; [key: string]: unknown },
          });
        }
        break;
    }
  }
  const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  mergeAnthropicUsage(usage, message.usage);
  const raw = typeof message.stop_reason === "string" ? message.stop_reason : undefined;
  const decoded: DecodedMessage = {
    id: typeof message.id === "string" ? message.id : undefined,
    model: typeof message.model === "string" ? message.model : "",
    content,
    stopReason: anthropicStopReason(raw),
    rawStopReason: raw,
    usage,
  };
  const management = message.context_management;
  if (management !== undefined && management !== null) {
    decoded.contextEdits = decodeAnthropicContextEdits(management);
  }
  return decoded;
}
