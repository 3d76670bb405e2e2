import { ProviderError, type ProviderErrorCode } from "@lattice/providers";
import { type HeaderReader, statusCode } from "@lattice/providers/internal";
import type { BridgeContext } from "./bridge-context.js";
import { redactUrls, safeEndpoint } from "./safe-endpoint.js";

/**
 * Where a failure surfaced: thrown by `doStream()`/`doGenerate()` (`call`), thrown while
 * reading the stream (`read`), or sent as an `error` stream part (`part`).
 */
export type FailurePhase = "call" | "read" | "part";

/** The fields of an AI SDK `APICallError` the bridge reads. */
interface ApiCallErrorFields {
  readonly message: string;
  readonly url?: unknown;
  readonly statusCode?: unknown;
  readonly responseHeaders?: unknown;
  readonly isRetryable?: unknown;
  readonly data?: unknown;
}

const AI_SDK_MARKER = Symbol.for("vercel.ai.error");

/**
 * Turns whatever an AI SDK model threw or streamed as an error into a {@link ProviderError}
 * whose message names the model, the endpoint when known, and what to do next.
 *
 * - `APICallError` (marked `AI_APICallError`): the HTTP status decides the code as in
 *   Lattice's adapters (401 → `provider_authentication`, 429 → `provider_rate_limited`, 529 or
 *   an `overloaded_error` → `provider_overloaded`, 5xx → `provider_server_error`, …; no
 *   status → `provider_connection`), and `isRetryable` whether the bridge retries. A 2xx
 *   status is the AI SDK's wrapper for a response that could not be read: mid-stream it is
 *   `provider_stream_truncated`, else `provider_connection` (both retryable).
 * - `LoadAPIKeyError` → `provider_missing_api_key`; `NoSuchModelError` → `provider_not_found`;
 *   `UnsupportedFunctionalityError`, `InvalidPromptError`, `InvalidArgumentError` and
 *   `LoadSettingError` → `provider_invalid_request`.
 * - `InvalidResponseDataError`, `JSONParseError`, `TypeValidationError`,
 *   `EmptyResponseBodyError` → `provider_malformed_response` (retryable mid-stream only).
 * - Any other `error` stream part → `provider_stream_error`; any other error thrown while
 *   reading → `provider_stream_truncated` (retryable); any other error thrown by the call →
 *   `provider_connection` when it looks like a network failure, else
 *   `provider_invalid_request`.
 *
 * The original error is kept as `cause`.
 *
 * @param error - What the model threw or streamed.
 * @param context - The model, for the message.
 * @param retries - Retries made so far, for the message.
 * @param phase - Where the failure surfaced.
 */
export function toProviderError(
  error: unknown,
  context: BridgeContext,
  retries: number,
  phase: FailurePhase,
): ProviderError {
  if (error instanceof ProviderError) return error;
  const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
  const name = aiSdkErrorName(error);
  const text = redactUrls(describe(error));
  const make = (
    code: ProviderErrorCode,
    message: string,
    retryable: boolean,
    extra: { endpoint?: string; status?: number; type?: string; apiMessage?: string } = {},
  ): ProviderError =>
    new ProviderError({
      code,
      message,
      endpoint: extra.endpoint ?? context.endpoint,
      retryable,
      cause: error,
      ...(extra.status !== undefined ? { status: extra.status } : {}),
      ...(extra.type !== undefined ? { type: extra.type } : {}),
      ...(extra.apiMessage !== undefined ? { apiMessage: extra.apiMessage } : {}),
      ...(requestIdOf(error) !== undefined ? { requestId: requestIdOf(error) } : {}),
    });
  switch (name) {
    case "AI_APICallError":
      return apiCallError(error as ApiCallErrorFields, context, after, phase, make);
    case "AI_LoadAPIKeyError":
      return make(
        "provider_missing_api_key",
        `${context.label} has no API key (${text}). Give the AI SDK provider its apiKey option or set the environment variable it names.`,
        false,
      );
    case "AI_NoSuchModelError":
      return make(
        "provider_not_found",
        `${context.label} does not exist (${text}). Check the model id given to the AI SDK provider.`,
        false,
      );
    case "AI_UnsupportedFunctionalityError":
    case "AI_InvalidPromptError":
    case "AI_InvalidArgumentError":
    case "AI_LoadSettingError":
      return make(
        "provider_invalid_request",
        `${context.label} refused the request before sending it (${text}). Change the request or the provider's settings: retrying it unchanged will not help.`,
        false,
      );
    case "AI_InvalidResponseDataError":
    case "AI_JSONParseError":
    case "AI_TypeValidationError":
    case "AI_EmptyResponseBodyError":
      return make(
        "provider_malformed_response",
        `${context.label} answered with something its AI SDK provider could not read (${text})${after}. ${phase === "call" ? "Check that the provider's baseURL points at a compatible API." : "The partial reply was discarded: retry the turn."}`,
        phase !== "call",
      );
    default:
      break;
  }
  if (phase === "part") return streamErrorPart(error, context, text, after, make);
  if (phase === "read") {
    return make(
      "provider_stream_truncated",
      `The ${context.label} stream was cut before the message was complete (${text})${after}. The partial reply was discarded: retry the turn.`,
      true,
    );
  }
  if (looksLikeNetworkFailure(error)) {
    return make(
      "provider_connection",
      `Could not get a response from ${context.label}${after} (${text}). Check the provider's baseURL and the network connection.`,
      true,
    );
  }
  return make(
    "provider_invalid_request",
    `${context.label} failed (${text}). Check the AI SDK provider's settings and the request.`,
    false,
  );
}

/**
 * The headers of the failed response behind `error` (a `ProviderError` whose cause is an
 * `APICallError`), for `retry-after`; `undefined` when there were none.
 *
 * @param error - The failure.
 */
export function failureHeaders(error: ProviderError): HeaderReader | undefined {
  const cause = (error as { cause?: unknown }).cause;
  if (aiSdkErrorName(cause) !== "AI_APICallError") return undefined;
  const headers = headersOf(cause);
  return headers === undefined ? undefined : { get: (name) => headers[name] ?? null };
}

type Make = (
  code: ProviderErrorCode,
  message: string,
  retryable: boolean,
  extra?: { endpoint?: string; status?: number; type?: string; apiMessage?: string },
) => ProviderError;

function apiCallError(
  error: ApiCallErrorFields,
  context: BridgeContext,
  after: string,
  phase: FailurePhase,
  make: Make,
): ProviderError {
  const endpoint = typeof error.url === "string" ? safeEndpoint(error.url) : context.endpoint;
  const where = `${context.label} at ${endpoint}`;
  const retryable = error.isRetryable === true;
  const apiMessage = redactUrls(error.message);
  const status = typeof error.statusCode === "number" ? error.statusCode : undefined;
  if (status === undefined) {
    return make(
      "provider_connection",
      `Could not get a response from ${where}${after} (${apiMessage}). Check the provider's baseURL and the network connection.`,
      retryable,
      { endpoint, apiMessage },
    );
  }
  if (status >= 200 && status < 300) {
    // The AI SDK's wrapper for a response that began well and then failed to be read.
    const cause = (error as { cause?: unknown }).cause;
    const reason = redactUrls(cause instanceof Error ? cause.message : apiMessage);
    return phase === "call"
      ? make(
          "provider_connection",
          `${where} answered ${status} but the response could not be read${after} (${reason}). Check the provider's baseURL and the network connection.`,
          true,
          { endpoint, status },
        )
      : make(
          "provider_stream_truncated",
          `The ${context.label} stream from ${endpoint} was cut before the message was complete (${reason})${after}. The partial reply was discarded: retry the turn.`,
          true,
          { endpoint, status },
        );
  }
  const type = errorType(error.data);
  const overloaded = status === 529 || type === "overloaded_error";
  const requestId = requestIdOf(error);
  const said = `${status}${type === undefined ? "" : ` ${type}`}: ${apiMessage}`;
  return make(
    statusCode(status, overloaded),
    `${where} answered ${said}${after}. ${nextStep(status, overloaded, retryable)}${requestId === undefined ? "" : ` (request id ${requestId})`}`,
    retryable,
    { endpoint, status, apiMessage, ...(type !== undefined ? { type } : {}) },
  );
}

function streamErrorPart(
  error: unknown,
  context: BridgeContext,
  text: string,
  after: string,
  make: Make,
): ProviderError {
  const type = errorType(error);
  const retryable = type === undefined || /server|overload|rate|timeout|unavailable/i.test(type);
  return make(
    type !== undefined && /overload/i.test(type) ? "provider_overloaded" : "provider_stream_error",
    `The ${context.label} stream ended with an error (${type === undefined ? "" : `${type}: `}${text})${after}. ${retryable ? "This may be transient: retry the turn." : "Check the request."}`,
    retryable,
    { ...(type !== undefined ? { type } : {}), apiMessage: text },
  );
}

function nextStep(status: number, overloaded: boolean, retryable: boolean): string {
  if (status === 401) {
    return "The API key was missing, wrong or revoked: check the apiKey option of the AI SDK provider or the environment variable it reads.";
  }
  if (status === 403) {
    return "The key may not use this model or endpoint: check the key's permissions and the model id.";
  }
  if (status === 404) return "Check the model id and the AI SDK provider's baseURL.";
  if (status === 413) {
    return "The request is too large: shorten the conversation, the system prompt or the tool results.";
  }
  if (status === 429) {
    return "The rate limit was hit: wait and try again, lower the concurrency, or raise maxRetries.";
  }
  if (overloaded) return "The API is overloaded: try again later, or raise maxRetries.";
  if (retryable) return "This is a transient server fault: try again later, or raise maxRetries.";
  return "The API rejected the request itself, so retrying it unchanged will not help: check the model id, maxTokens and the conversation.";
}

/** The `AI_…` name of an AI SDK error (every one carries the `vercel.ai.error` marker). */
function aiSdkErrorName(error: unknown): string | undefined {
  if (error === null || typeof error !== "object" || !(AI_SDK_MARKER in error)) return undefined;
  const name = (error as { name?: unknown }).name;
  return typeof name === "string" ? name : undefined;
}

/** The API's error type in an error body or error chunk (`{ error: { type | code } }`, …). */
function errorType(data: unknown): string | undefined {
  if (data === null || typeof data !== "object") return undefined;
  const record = data as Record<string, unknown>;
  const inner = record.error;
  const source =
    inner !== null && typeof inner === "object" ? (inner as Record<string, unknown>) : record;
  const type = source.type ?? source.code;
  return typeof type === "string" && type !== "" ? type : undefined;
}

function headersOf(error: unknown): Readonly<Record<string, string | undefined>> | undefined {
  const headers = (error as { responseHeaders?: unknown } | null)?.responseHeaders;
  return headers !== null && typeof headers === "object"
    ? (headers as Record<string, string | undefined>)
    : undefined;
}

function requestIdOf(error: unknown): string | undefined {
  if (aiSdkErrorName(error) !== "AI_APICallError") return undefined;
  const headers = headersOf(error);
  return headers?.["request-id"] ?? headers?.["x-request-id"];
}

function looksLikeNetworkFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const cause = (error as { cause?: unknown }).cause;
  const code = (cause as { code?: unknown } | undefined)?.code;
  return (
    (error.name === "TypeError" && /fetch failed|network|terminated/i.test(error.message)) ||
    (typeof code === "string" && /^(ECONN|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EPIPE|UND_ERR)/.test(code))
  );
}

function describe(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "string") return error;
  if (error !== null && typeof error === "object") {
    const record = error as Record<string, unknown>;
    const inner = record.error;
    const source =
      inner !== null && typeof inner === "object" ? (inner as Record<string, unknown>) : record;
    if (typeof source.message === "string") return source.message;
    try {
      return JSON.stringify(error).slice(0, 300);
    } catch {
      return "an error object";
    }
  }
  return String(error);
}
