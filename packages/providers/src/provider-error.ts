import { LatticeError } from "@lattice/tools";

/**
 * The stable codes a {@link ProviderError} carries, one per kind of failure.
 *
 * - `provider_invalid_request` — 400 (and other 4xx without a finer code): the request is wrong.
 * - `provider_authentication` — 401: the key is missing, wrong or revoked.
 * - `provider_permission` — 403: the key may not use this model or endpoint.
 * - `provider_not_found` — 404: wrong `baseURL` or model.
 * - `provider_request_too_large` — 413.
 * - `provider_context_overflow` — the API refused the request as longer than the model's context
 *   window (Anthropic's 400 "prompt is too long", OpenAI's 400 `context_length_exceeded`, or the
 *   same said in words by a compatible API such as DeepSeek). Never retryable: shorten the
 *   conversation. `promptTokens` and `contextLimit` carry the numbers when the API gave them.
 * - `provider_rate_limited` — 429, after retries.
 * - `provider_overloaded` — 529 or an `overloaded_error`, after retries.
 * - `provider_server_error` — 408, 409 or 5xx, after retries.
 * - `provider_connection` — the connection failed or was cut before a response.
 * - `provider_redirect` — the endpoint answered with a redirect; set `baseURL` to its target.
 * - `provider_timeout` — no response (or no stream data) within `timeoutMs`.
 * - `provider_stream_error` — the API sent an error event mid-stream.
 * - `provider_stream_truncated` — the stream ended before the message was complete.
 * - `provider_malformed_response` — the API sent something that is not the protocol.
 * - `provider_missing_api_key` — no key was given or found in the environment.
 */
export type ProviderErrorCode =
  | "provider_invalid_request"
  | "provider_authentication"
  | "provider_permission"
  | "provider_not_found"
  | "provider_request_too_large"
  | "provider_context_overflow"
  | "provider_rate_limited"
  | "provider_overloaded"
  | "provider_server_error"
  | "provider_connection"
  | "provider_redirect"
  | "provider_timeout"
  | "provider_stream_error"
  | "provider_stream_truncated"
  | "provider_malformed_response"
  | "provider_missing_api_key";

/** Everything a {@link ProviderError} is built from. */
export interface ProviderErrorDetails {
  /** The stable failure code. */
  readonly code: ProviderErrorCode;
  /** What happened, to which endpoint, and what to do next; never contains a key. */
  readonly message: string;
  /** The URL the request went to, without credentials. */
  readonly endpoint: string;
  /** The HTTP status, when the API answered with one. */
  readonly status?: number;
  /** The API's error type, for example `"overloaded_error"` or `"invalid_request_error"`. */
  readonly type?: string;
  /** The API's own error message. */
  readonly apiMessage?: string;
  /** Whether trying the same request again may succeed. */
  readonly retryable: boolean;
  /** The API's request id, when it sent one. */
  readonly requestId?: string;
  /** The underlying error, if any. */
  readonly cause?: unknown;
  /** For `provider_context_overflow`: the prompt's size in tokens, as the API reported it. */
  readonly promptTokens?: number;
  /** For `provider_context_overflow`: the model's context window in tokens, as the API reported it. */
  readonly contextLimit?: number;
}

/**
 * A model call failed: the API answered with an error, the connection failed, or the stream
 * was cut or malformed. Thrown by a provider's stream after its retries are spent.
 *
 * The message names the endpoint (never a key) and what to do next, for example which
 * environment variable to check after a 401.
 */
export class ProviderError extends LatticeError {
  declare readonly code: ProviderErrorCode;
  /** The HTTP status, when the API answered with one. */
  readonly status: number | undefined;
  /** The API's error type, for example `"rate_limit_error"`. */
  readonly type: string | undefined;
  /** The API's own error message. */
  readonly apiMessage: string | undefined;
  /** Whether trying the same request again may succeed. */
  readonly retryable: boolean;
  /** The API's request id, when it sent one. */
  readonly requestId: string | undefined;
  /** The URL the request went to, without credentials. */
  readonly endpoint: string;
  /**
   * How many tokens the refused prompt had, as the API's message says (`210000` in Anthropic's
   * "prompt is too long: 210000 tokens > 200000 maximum"; the messages' count in OpenAI's
   * `context_length_exceeded` message). Set only on `provider_context_overflow` errors whose
   * message gives the number; `undefined` otherwise.
   */
  readonly promptTokens?: number;
  /**
   * The model's context window in tokens, as the API's message says (`200000` above; OpenAI's
   * "maximum context length is 128000 tokens"). Set only on `provider_context_overflow` errors
   * whose message gives the number; `undefined` otherwise.
   */
  readonly contextLimit?: number;

  /**
   * @param details - The failure; see {@link ProviderErrorDetails}.
   */
  constructor(details: ProviderErrorDetails) {
    super(
      details.code,
      details.message,
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = "ProviderError";
    this.status = details.status;
    this.type = details.type;
    this.apiMessage = details.apiMessage;
    this.retryable = details.retryable;
    this.requestId = details.requestId;
    this.endpoint = details.endpoint;
    this.promptTokens = details.promptTokens;
    this.contextLimit = details.contextLimit;
  }
}
