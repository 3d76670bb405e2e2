import type {
  LanguageModelV2Content,
  LanguageModelV2FinishReason,
  LanguageModelV2Usage,
  LanguageModelV3Content,
  LanguageModelV3FinishReason,
  LanguageModelV3Usage,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import type { ContentBlock } from "@lattice/providers";
import { parseToolInput } from "@lattice/providers/http";
import { providerExecutedCall, providerExecutedResult } from "./ai-sdk-opaque-part.js";
import { toStopReason } from "./ai-sdk-stop-reason.js";
import type { AssembledMessage } from "./ai-sdk-stream-assembler.js";
import { toModelUsage } from "./ai-sdk-usage.js";
import type { BridgeContext } from "./bridge-context.js";
import { checkGenerateResult, toolCallInputText } from "./check-model-answer.js";
import { hasProviderMetadata, toBase64, withProviderMetadata } from "./provider-metadata.js";

/** The fields of a V2 or V3 `doGenerate` result the bridge reads. */
export interface GenerateResult {
  readonly content: ReadonlyArray<LanguageModelV2Content | LanguageModelV3Content>;
  readonly finishReason: LanguageModelV2FinishReason | LanguageModelV3FinishReason;
  readonly usage: LanguageModelV2Usage | LanguageModelV3Usage;
  readonly response?: { readonly id?: string; readonly modelId?: string };
}

/**
 * Reads a `doGenerate` result as the stream assembler reads a stream: text and reasoning parts
 * become text and thinking blocks (empty ones only when they carry provider metadata, which is
 * kept on the block), tool calls become tool_use blocks with input parsed as Lattice's adapters
 * parse it, generated images become image blocks, provider-executed calls and their results
 * become opaque blocks (provider `"ai-sdk"`); sources and other files are left out.
 *
 * @param answer - The model's result, checked first (H27).
 * @param context - The model, for the default model name and messages.
 * @throws `ProviderError` `provider_malformed_response` when the result lacks `content`,
 *   `finishReason` or `usage`, or a part lacks a field the bridge reads.
 */
export function decodeGenerateResult(answer: unknown, context: BridgeContext): AssembledMessage {
  const result = checkGenerateResult(answer, context);
  const content: ContentBlock[] = [];
  let toolCalls = 0;
  for (let index = 0; index < result.content.length; index++) {
    const part = result.content[index]!;
    const metadata = (part as { providerMetadata?: SharedV3ProviderMetadata }).providerMetadata;
    switch (part.type) {
      case "text":
        if (part.text !== "" || hasProviderMetadata(metadata)) {
          content.push(withProviderMetadata({ type: "text", text: part.text }, metadata));
        }
        break;
      case "reasoning":
        if (part.text !== "" || hasProviderMetadata(metadata)) {
          content.push(
            withProviderMetadata(
              { type: "thinking", thinking: part.text, signature: "" },
              metadata,
            ),
          );
        }
        break;
      case "tool-call": {
        // The input as JSON text: a value JSON cannot take ends the call here (H27).
        const text = toolCallInputText(
          part.input,
          `answered doGenerate() with content part ${index}`,
          context,
        );
        if (part.providerExecuted === true) {
          content.push(providerExecutedCall(part.toolCallId, part.toolName, text, metadata));
          break;
        }
        toolCalls++;
        content.push(
          withProviderMetadata(
            {
              type: "tool_use",
              id: part.toolCallId,
              name: part.toolName,
              ...parseToolInput(part.toolName, text),
            },
            metadata,
          ),
        );
        break;
      }
      case "file":
        if (part.mediaType.startsWith("image/")) {
          content.push(
            withProviderMetadata(
              {
                type: "image",
                source: { type: "base64", media_type: part.mediaType, data: toBase64(part.data) },
              },
              metadata,
            ),
          );
        }
        break;
      case "tool-result":
        content.push(
          providerExecutedResult(
            part.toolCallId,
            part.toolName,
            part.result,
            part.isError,
            metadata,
          ),
        );
        break;
      default:
        break;
    }
  }
  const mapped = toStopReason(result.finishReason, toolCalls > 0);
  const modelId = result.response?.modelId;
  return {
    id: result.response?.id,
    model: typeof modelId === "string" && modelId !== "" ? modelId : context.modelId,
    content,
    stopReason: mapped.stopReason,
    rawStopReason: mapped.rawStopReason,
    usage: toModelUsage(result.usage),
  };
}
