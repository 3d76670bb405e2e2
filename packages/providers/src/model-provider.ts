import type { ModelRequest } from "./model-request.js";
import type { ModelStreamEvent } from "./model-stream-event.js";

/**
 * Version 1 of the provider contract: a normalised request in, normalised events out.
 *
 * Adapters outside the repository implement this interface; the version in the name lets them
 * follow the contract as it changes.
 *
 * - `stream(request)` makes one model call (with retries) and yields {@link ModelStreamEvent}s.
 *   The last event of a successful call is `{ type: "response", response }`.
 * - With `request.stream === false` it makes one non-streaming request and yields only the final
 *   events (`usage`, `stop`, `response`), preceded by any `retry` events.
 * - Failures throw a `ProviderError` from the iterator, after retries. An aborted
 *   `request.signal` makes the iterator throw an error named `"AbortError"` promptly.
 */
export interface ModelProviderV1 {
  /** The contract version this provider implements. */
  readonly specificationVersion: "v1";
  /** The adapter's name, for example `"anthropic"` or `"openai-compatible"`. */
  readonly name: string;
  /** The base URL requests go to (never with credentials). */
  readonly baseURL: string;
  /**
   * Whether this endpoint accepts `request.output` (native JSON-schema output). Absent means
   * `false`: callers then use another way (core forces a final-answer tool). Adapters send
   * `request.output` whenever it is given; this only tells callers whether to give it.
   */
  readonly nativeOutput?: boolean;
  /**
   * Whether this endpoint applies server-side context editing, `request.contextManagement`
   * (Anthropic's `context_management`). Absent means `false`: callers then manage the context
   * themselves (core's `contextManagement` strategies). Adapters that do not support it ignore
   * `request.contextManagement`; this only tells callers whether to give it. `true` for the
   * Anthropic adapter.
   */
  readonly contextEditing?: boolean;
  /**
   * Makes one model call and yields its events.
   *
   * @throws `ProviderError` when the call fails after retries; an `AbortError` when aborted.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
  /**
   * Counts the input tokens `request` would use, as the API counts them (system prompt, tools
   * and messages, cached or not), without making a model call. Optional: absent when the API
   * has no token-counting endpoint (the OpenAI-compatible adapter), and callers then estimate.
   * The Anthropic adapter posts to `/v1/messages/count_tokens`, with the same headers, retries
   * and errors as `stream`.
   *
   * @param request - The request to measure; `maxTokens`, `temperature`, `stopSequences` and
   *   `stream` do not count and are not sent. `request.signal` aborts it.
   * @returns The number of input tokens.
   * @throws `ProviderError` when the call fails after retries; an `AbortError` when aborted.
   */
  countTokens?(request: ModelRequest): Promise<number>;
}
