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
   * Makes one model call and yields its events.
   *
   * @throws `ProviderError` when the call fails after retries; an `AbortError` when aborted.
   */
  stream(request: ModelRequest): AsyncIterable<ModelStreamEvent>;
}
