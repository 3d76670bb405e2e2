import { ProviderError, type ProviderErrorCode } from "../provider-error.js";
import { type ContextOverflow, parseContextOverflow } from "./context-overflow.js";
import { redactSecrets } from "./redact-secret.js";
import { type HeaderReader, isRetryableStatus } from "./retry-delay.js";
import type { EndpointContext } from "./stream-decoder.js";

/** The error type and message an API put in an error body, whatever its dialect. */
export interface ApiErrorBody {
  readonly type: string | undefined;
  readonly message: string | undefined;
  /** OpenAI's `error.code` (for example `"context_length_exceeded"`), when it sent one. */
  readonly code?: string | undefined;
}

/**
 * Reads an error body in the Anthropic (`{ type: "error", error: { type, message } }`), OpenAI
 * (`{ error: { message, type, code } }`) or common gateway (`{ message }`, `{ detail }`) shape.
 *
 * @param text - The body as received.
 */
export function readApiErrorBody(text: string): ApiErrorBody {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    const trimmed = text.trim();
    return { type: undefined, message: trimmed === "" ? undefined : trimmed.slice(0, 500) };
  }
  if (body === null || typeof body !== "object") return { type: undefined, message: undefined };
  const record = body as Record<string, unknown>;
  const inner = record.error;
  if (inner !== null && typeof inner === "object") {
    const error = inner as Record<string, unknown>;
    return {
      type: stringOr(error.type) ?? stringOr(error.code),
      message: stringOr(error.message),
      code: stringOr(error.code),
    };
  }
  if (typeof inner === "string") return { type: stringOr(record.type), message: inner };
  return {
    type: stringOr(record.type),
    message: stringOr(record.message) ?? stringOr(record.detail),
  };
}

function stringOr(value: unknown): string | undefined {
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * Builds the {@link ProviderError} for an HTTP error response: the code and retryability from
 * the status (and `x-should-retry` when the API sends it), and a message that names the
 * endpoint and what to do next.
 *
 * @param context - The endpoint, for the message.
 * @param status - The HTTP status.
 * @param bodyText - The error body as received.
 * @param headers - The response headers.
 * @param requestId - The API's request id, if any.
 * @param retries - How many retries were already made.
 */
export function httpStatusError(
  context: EndpointContext,
  status: number,
  bodyText: string,
  headers: HeaderReader,
  requestId: string | undefined,
  retries: number,
): ProviderError {
  // Redact before parsing: the body is cut to 500 characters, which could split a key.
  const body = readApiErrorBody(redactSecrets(bodyText, context.secrets));
  const apiMessage =
    body.message === undefined ? undefined : redactSecrets(body.message, context.secrets);
  const type = body.type === undefined ? undefined : redactSecrets(body.type, context.secrets);
  const shouldRetry = headers.get("x-should-retry");
  const retryable =
    shouldRetry === "true" ? true : shouldRetry === "false" ? false : isRetryableStatus(status);
  const overloaded = status === 529 || type === "overloaded_error";
  const overflow = parseContextOverflow(status, body.code, apiMessage);
  if (overflow !== undefined) {
    return contextOverflowError(context, status, type, apiMessage, requestId, overflow);
  }
  const code = statusCode(status, overloaded);
  const said = `${status}${type === undefined ? "" : ` ${type}`}${apiMessage === undefined ? "" : `: ${apiMessage}`}`;
  const where = `${context.label} at ${context.endpoint}`;
  const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
  const next = nextStep(status, overloaded, retryable, context.keyHint);
  return new ProviderError({
    code,
    message: `${where} answered ${said}${after}. ${next}${requestId === undefined ? "" : ` (request id ${requestId})`}`,
    endpoint: context.endpoint,
    status,
    type: type,
    apiMessage,
    retryable,
    requestId,
  });
}

/**
 * The `provider_context_overflow` error: what the API refused, the sizes when it gave them, and
 * what to do next. Never retryable, whatever `x-should-retry` says: the same request would be
 * refused again.
 */
function contextOverflowError(
  context: EndpointContext,
  status: number,
  type: string | undefined,
  apiMessage: string | undefined,
  requestId: string | undefined,
  overflow: ContextOverflow,
): ProviderError {
  const { promptTokens, contextLimit } = overflow;
  const sizes =
    promptTokens !== undefined && contextLimit !== undefined
      ? ` (${promptTokens} tokens > ${contextLimit} maximum)`
      : contextLimit !== undefined
        ? ` (${contextLimit} tokens maximum)`
        : promptTokens !== undefined
          ? ` (${promptTokens} tokens)`
          : "";
  const said = `${status}${type === undefined ? "" : ` ${type}`}${apiMessage === undefined ? "" : `: ${apiMessage}`}`;
  return new ProviderError({
    code: "provider_context_overflow",
    message: `${context.label} at ${context.endpoint} refused the request as longer than the model's context window${sizes}; it answered ${said}. Retrying it unchanged will not help: shorten the conversation (drop or summarise old turns and large tool results, or lower maxTokens), or set contextManagement on the Lattice agent so that it compacts the conversation before the window is full.${requestId === undefined ? "" : ` (request id ${requestId})`}`,
    endpoint: context.endpoint,
    status,
    type,
    apiMessage,
    retryable: false,
    requestId,
    promptTokens,
    contextLimit,
  });
}

/**
 * The {@link ProviderErrorCode} of an HTTP status (`overloaded`: the API said it is overloaded,
 * as Anthropic's 529 does). Internal: shared with the AI SDK bridge.
 */
export function statusCode(status: number, overloaded: boolean): ProviderErrorCode {
  if (overloaded) return "provider_overloaded";
  switch (status) {
    case 401:
      return "provider_authentication";
    case 403:
      return "provider_permission";
    case 404:
      return "provider_not_found";
    case 413:
      return "provider_request_too_large";
    case 429:
      return "provider_rate_limited";
    case 408:
    case 409:
      return "provider_server_error";
    default:
      return status >= 500 ? "provider_server_error" : "provider_invalid_request";
  }
}

function nextStep(
  status: number,
  overloaded: boolean,
  retryable: boolean,
  keyHint: string,
): string {
  if (status === 401) {
    return `The API key was missing, wrong or revoked: check ${keyHint}.`;
  }
  if (status === 403) {
    return "The key may not use this model or endpoint: check the key's permissions and the model name.";
  }
  if (status === 404) {
    return 'Check baseURL and the model name (the Anthropic adapter posts to baseURL + "/v1/messages"; the OpenAI-compatible adapter to baseURL + "/chat/completions", so its baseURL ends in /v1).';
  }
  if (status === 413) {
    return "The request is too large: shorten the conversation, the system prompt or the tool results.";
  }
  if (status === 429) {
    return "The rate limit was hit: wait and try again, lower the concurrency, or raise maxRetries.";
  }
  if (overloaded) return "The API is overloaded: try again later, or raise maxRetries.";
  if (retryable) return "This is a transient server fault: try again later, or raise maxRetries.";
  return "The API rejected the request itself, so retrying it unchanged will not help: check the model name, maxTokens and the conversation (every tool_use answered by a tool_result in the next user message).";
}
