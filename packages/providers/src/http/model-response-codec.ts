import type { ContentBlock } from "../content-blocks.js";
import type { ModelUsage, StopReason } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";

/**
 * One server-sent event, as the transport decoded it from the response body: `data` holds
 * the event's data lines joined with line breaks. Comment lines and keep-alives never reach a
 * decoder.
 */
export interface ServerSentEvent {
  /** The `event:` field, when the server sent one (Anthropic does; OpenAI does not). */
  readonly event?: string | undefined;
  /** The `id:` field, when the server sent one. */
  readonly id?: string | undefined;
  /** The data, for most model APIs one JSON document (OpenAI ends with `[DONE]`). */
  readonly data: string;
}

/**
 * An event a decoder may emit: any {@link ModelStreamEvent} but `retry` and `response`, which
 * only the transport emits.
 */
export type DecodedStreamEvent = Exclude<
  ModelStreamEvent,
  { readonly type: "retry" } | { readonly type: "response" }
>;

/**
 * A complete assistant message as a codec decoded it. The transport turns it into the final
 * `response` event's `ModelResponse`, adding `requestId`, `retries` and `latencyMs`.
 */
export interface DecodedModelResponse {
  /** The API's message id, when it sent one. */
  readonly id?: string | undefined;
  /** The model that answered, as the API names it (`""` when it did not say). */
  readonly model: string;
  /**
   * The assistant message's blocks in order: `text`, `thinking`, `tool_use` (with the input
   * parsed by `parseToolInput`), and any other `ContentBlock`.
   */
  readonly content: ContentBlock[];
  /** Why the model stopped, mapped to the common values (`"other"` when none fits). */
  readonly stopReason: StopReason;
  /** The stop reason exactly as the API sent it, when it sent one. */
  readonly rawStopReason?: string | undefined;
  /** Token counts, with Anthropic's meaning (`inputTokens` excludes cached tokens). */
  readonly usage: ModelUsage;
}

/** Who a decoder works for, for its error messages. Never holds a key. */
export interface DecoderContext {
  /** The API's name in messages, as given to `createHttpTransport` (`"Acme API"`). */
  readonly label: string;
  /** The URL of the request, safe to print (no credentials, query or fragment). */
  readonly endpoint: string;
  /**
   * Removes the key and every credential header value from a text; use it on anything taken
   * from the response before putting it in an error message.
   */
  redact(text: string): string;
}

/** What a stream decoder gets: the {@link DecoderContext}, and where its events go. */
export interface StreamDecoderContext extends DecoderContext {
  /**
   * Hands one normalised event to the consumer. Events are delivered once the chunk being
   * decoded is done (and, at the end, once `finish` returned), in the order emitted.
   */
  emit(event: DecodedStreamEvent): void;
}

/**
 * Decodes one streamed response: the transport calls `handle` for each server-sent event, in
 * order, and `finish` once the body has ended. One decoder per attempt: a retry gets a fresh
 * one.
 */
export interface ModelStreamDecoder {
  /**
   * Handles one server-sent event, emitting the normalised events it means (`message_start`,
   * `block_start`, `text_delta`, `tool_input_delta`, `block_stop`, `usage`, `stop`, …).
   *
   * @throws `ProviderError` for an error event (`provider_stream_error`, `retryable` when the
   *   API says it is transient). Anything else it throws ends the call as
   *   `provider_malformed_response`, with the thrown error (redacted) as `cause`.
   */
  handle(event: ServerSentEvent): void;
  /**
   * The whole message, once the body has ended.
   *
   * @throws `ProviderError` (`provider_stream_truncated`, `retryable: true`) when the stream
   *   ended before the API's end-of-message event.
   */
  finish(): DecodedModelResponse;
}

/**
 * One wire protocol's response decoding, streaming and not: the part of a provider that
 * `createHttpTransport` cannot know.
 */
export interface ModelResponseCodec {
  /**
   * A fresh decoder for one streamed attempt.
   *
   * @param context - The endpoint, a redactor and `emit`.
   */
  createStreamDecoder(context: StreamDecoderContext): ModelStreamDecoder;
  /**
   * Decodes a non-streaming response body (already parsed from JSON).
   *
   * @param body - The parsed body of a 2xx response.
   * @param context - The endpoint and a redactor.
   * @throws `ProviderError` when the body is not the protocol; anything else it throws ends
   *   the call as `provider_malformed_response`.
   */
  decodeMessage(body: unknown, context: DecoderContext): DecodedModelResponse;
}
