import type { EventSourceMessage } from "eventsource-parser";
import type { ContentBlock } from "../content-blocks.js";
import type { ModelContextEdit, ModelUsage, StopReason } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";

/** Who a provider talks to, for error messages: never holds a key except to redact it. */
export interface EndpointContext {
  /** The API's name in messages, for example `"Anthropic API"`. */
  readonly label: string;
  /** The URL requests go to, safe to print. */
  readonly endpoint: string;
  /**
   * The key and credential header values, only so that they can be redacted from messages
   * and causes (see `collectSecrets`).
   */
  readonly secrets: readonly string[];
  /** Where the user sets the key, for 401 messages. */
  readonly keyHint: string;
}

/** A complete assistant message decoded from the wire, before timing and retries are added. */
export interface DecodedMessage {
  id: string | undefined;
  model: string;
  content: ContentBlock[];
  stopReason: StopReason;
  rawStopReason: string | undefined;
  usage: ModelUsage;
  /** Server-side context edits the API reported (Anthropic `context_management`), if any. */
  contextEdits?: readonly ModelContextEdit[] | undefined;
}

/**
 * Turns one protocol's SSE events into normalised events and, at the end, the whole message.
 * Events are pushed to `events`, which the caller drains after each chunk.
 */
export interface StreamDecoder {
  /** Normalised events not yet handed to the consumer. */
  readonly events: ModelStreamEvent[];
  /**
   * Handles one SSE event.
   *
   * @throws `ProviderError` for an error event or a malformed event.
   */
  handle(message: EventSourceMessage): void;
  /**
   * The assembled message, once the body has ended.
   *
   * @throws `ProviderError` (`provider_stream_truncated`) when the stream ended early.
   */
  finish(): DecodedMessage;
}

/** One protocol's response handling: streaming and non-streaming. */
export interface ResponseCodec {
  /** A fresh decoder for one streamed response. */
  createStreamDecoder(): StreamDecoder;
  /**
   * Decodes a non-streaming response body.
   *
   * @throws `ProviderError` (`provider_malformed_response`) when it is not the protocol.
   */
  decodeMessage(body: unknown): DecodedMessage;
}
