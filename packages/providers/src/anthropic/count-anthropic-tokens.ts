import { ProviderError } from "../provider-error.js";
import { type CallContext, callModel } from "../transport/call-model.js";
import type {
  DecodedMessage,
  EndpointContext,
  ResponseCodec,
} from "../transport/stream-decoder.js";

/**
 * The codec of `POST /v1/messages/count_tokens`: its JSON answer, `{ "input_tokens": N }`, is
 * decoded as a message with no content whose `usage.inputTokens` is `N`, so that the count goes
 * through the model transport (retries, timeouts, error mapping, abort) unchanged.
 *
 * @param context - The count endpoint, for error messages.
 */
export function countTokensCodec(context: EndpointContext): ResponseCodec {
  return {
    createStreamDecoder() {
      // Never called: the count is requested without streaming and read as a JSON body.
      throw new Error("count_tokens does not stream");
    },
    decodeMessage(body: unknown): DecodedMessage {
      const count = (body as { input_tokens?: unknown } | null)?.input_tokens;
      if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
        throw new ProviderError({
          code: "provider_malformed_response",
          message: `${context.label} at ${context.endpoint} answered 200 with a body that is not a token count (no input_tokens integer). Check that baseURL points at an Anthropic-compatible API that serves /v1/messages/count_tokens.`,
          endpoint: context.endpoint,
          retryable: false,
        });
      }
      return {
        id: undefined,
        model: "",
        content: [],
        stopReason: "end_turn",
        rawStopReason: undefined,
        usage: { inputTokens: count, outputTokens: 0 },
      };
    },
  };
}

/**
 * Posts a count_tokens body and returns `input_tokens`, with the retries, timeouts, error
 * mapping and abort handling of a model call.
 *
 * @param call - The count endpoint and transport settings.
 * @param codec - {@link countTokensCodec} for `call`.
 * @param body - The serialised count_tokens body.
 * @param signal - The caller's abort signal.
 * @throws `ProviderError` when the call fails after retries; an `AbortError` when aborted.
 */
export async function countAnthropicTokens(
  call: CallContext,
  codec: ResponseCodec,
  body: string,
  signal: AbortSignal | undefined,
): Promise<number> {
  for await (const event of callModel(call, codec, body, false, signal)) {
    if (event.type === "response") return event.response.usage.inputTokens;
  }
  // callModel always ends with a response or throws.
  throw new Error("count_tokens ended without a response");
}
