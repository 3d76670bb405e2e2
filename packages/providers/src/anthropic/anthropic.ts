import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions } from "@lattice/tools/internal";
import type { ModelProviderV1 } from "../model-provider.js";
import type { ModelRequest, PromptCachingMode } from "../model-request.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import { resolveApiKey } from "../resolve-api-key.js";
import {
  type CallContext,
  callModel,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "../transport/call-model.js";
import {
  checkBoolean,
  checkHeaders,
  checkRetries,
  checkTimeout,
  trimBaseURL,
} from "../transport/provider-options.js";
import { collectSecrets, safeEndpoint } from "../transport/redact-secret.js";
import type { ResponseCodec } from "../transport/stream-decoder.js";
import { AnthropicStreamDecoder } from "./anthropic-stream-decoder.js";
import { countAnthropicTokens, countTokensCodec } from "./count-anthropic-tokens.js";
import { decodeAnthropicMessage } from "./decode-anthropic-message.js";
import { toAnthropicBody, toAnthropicCountTokensBody } from "./to-anthropic-body.js";

/** The Anthropic API's address. */
const DEFAULT_BASE_URL = "https://api.anthropic.com";
const OPTION_KEYS: ReadonlySet<string> = new Set([
  "apiKey",
  "authToken",
  "baseURL",
  "headers",
  "maxRetries",
  "timeoutMs",
  "requestTimeoutMs",
  "fetch",
  "promptCaching",
  "nativeOutput",
]);
/** The beta that `context_management` needs in the `anthropic-beta` header. */
const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";
/** DeepSeek's `/anthropic` endpoint: it ignores `output_config`. */
const NO_OUTPUT_CONFIG_HOSTS: ReadonlySet<string> = new Set(["api.deepseek.com"]);

/** Options of {@link anthropic}. Checked strictly: an unknown key throws. */
export interface AnthropicOptions {
  /**
   * The API key, sent as `x-api-key`. Default: `ANTHROPIC_API_KEY`, or `DEEPSEEK_API_KEY` when
   * `baseURL` is on deepseek.com. Never printed in errors, logs or traces.
   */
  readonly apiKey?: string;
  /** A bearer token, sent as `Authorization: Bearer …` instead of `x-api-key`. */
  readonly authToken?: string;
  /**
   * The API's base URL; requests go to `baseURL + "/v1/messages"`. Default
   * `https://api.anthropic.com`. DeepSeek: `https://api.deepseek.com/anthropic`.
   */
  readonly baseURL?: string;
  /** Extra headers sent with every request (for example `anthropic-beta`). */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Retries after the first attempt on 408, 409, 429, 5xx, 529 and connection failures. An integer ≥ 0 (0: no
   * retries). Default 2.
   */
  readonly maxRetries?: number;
  /**
   * The longest wait for progress, in ms: for the response headers, then between two complete
   * stream events (bytes and SSE comments that complete no event do not count, H4). A positive
   * number, `Infinity` for no timeout. Default 600000.
   */
  readonly timeoutMs?: number;
  /**
   * The longest one attempt may take as a whole, from sending the request to the last event of
   * the response, in ms (H4): a positive number, `Infinity` for no limit. Default 1200000 (20
   * minutes). Unlike `timeoutMs`, progress does not postpone it, so a server that keeps a
   * stream alive without finishing it ends in `provider_timeout`. Each retry gets its own.
   */
  readonly requestTimeoutMs?: number;
  /** A custom `fetch` (a proxy agent, a test double). Default: the platform's `fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Prompt caching for every request (a request's own `promptCaching` wins): `"auto"` places
   * `cache_control` breakpoints on the latest message, the system prompt and the tools (see
   * `ModelRequest.promptCaching`), `"off"` sends requests as they are. Default: `"auto"` when
   * `baseURL` is on api.anthropic.com, `"off"` for any other base URL (DeepSeek's
   * `/anthropic`, gateways), which may not accept or honour `cache_control`.
   */
  readonly promptCaching?: PromptCachingMode;
  /**
   * Whether the endpoint takes native structured output, `output_config: { format: { type:
   * "json_schema", schema } }` (exposed as `provider.nativeOutput`; see `ModelRequest.output`).
   * It tells callers whether to give `request.output`: core then uses it for `outputSchema`
   * instead of forcing a final-answer tool. Default `true`, except `false` for
   * api.deepseek.com, whose `/anthropic` endpoint ignores `output_config`. Set `false` for a
   * gateway that rejects or ignores `output_config`.
   */
  readonly nativeOutput?: boolean;
}

/**
 * A provider for the Anthropic Messages API and compatible endpoints (Claude, DeepSeek's
 * `/anthropic` endpoint, gateways).
 *
 * POSTs to `baseURL + "/v1/messages"` with `anthropic-version: 2023-06-01`; streams over SSE
 * unless the request says `stream: false`. Thinking blocks (with their signatures) and blocks
 * the SDK does not model (server tools such as web search, as `OpaqueBlock`s) are returned
 * whole so they can be sent back unchanged on the next turn. Prompt caching places
 * `cache_control` breakpoints (see {@link AnthropicOptions.promptCaching}); `thinking` turns on
 * extended thinking (see `ModelRequest.thinking`); `request.output` is sent as
 * `output_config.format` (see {@link AnthropicOptions.nativeOutput}). Usage reports cache reads
 * and writes.
 *
 * Context: `countTokens(request)` asks `POST baseURL + "/v1/messages/count_tokens"` how many
 * input tokens a request would use; `request.contextManagement` is sent as `context_management`
 * with the beta `context-management-2025-06-27` merged into the `anthropic-beta` header
 * (`provider.contextEditing` is `true`), and the edits the API applied come back as
 * `response.contextEdits`. A request longer than the model's context window fails with a
 * `ProviderError` coded `provider_context_overflow`.
 *
 * @example
 * ```ts
 * const provider = anthropic({ baseURL: "https://api.deepseek.com/anthropic" });
 * for await (const event of provider.stream({ model: "deepseek-v4-flash", maxTokens: 1024,
 *   messages: [{ role: "user", content: "Hello" }] })) {
 *   if (event.type === "text_delta") process.stdout.write(event.text);
 * }
 * ```
 *
 * @param options - {@link AnthropicOptions}.
 * @returns A {@link ModelProviderV1} named `"anthropic"`.
 * @throws `UnknownOptionError` for an unknown option; `InvalidOptionError` for a bad value
 *   (including a key or header value that cannot be sent in an HTTP header; the value is never
 *   printed).
 *   A missing key is reported when the first request is made, as a `ProviderError` with code
 *   `provider_missing_api_key`.
 */
export function anthropic(options: AnthropicOptions = {}): ModelProviderV1 {
  const prefix = "anthropic():";
  assertKnownOptions(options, OPTION_KEYS, prefix);
  const baseURL = trimBaseURL(options.baseURL ?? DEFAULT_BASE_URL, prefix, {
    example: DEFAULT_BASE_URL,
    keyOptions: "apiKey or authToken",
  });
  const maxRetries = checkRetries(options.maxRetries, 2, "maxRetries", prefix);
  const timeoutMs = checkTimeout(options.timeoutMs, 600_000, "timeoutMs", prefix);
  const requestTimeoutMs = checkTimeout(
    options.requestTimeoutMs,
    DEFAULT_REQUEST_TIMEOUT_MS,
    "requestTimeoutMs",
    prefix,
  );
  const host = hostOf(baseURL);
  const deepseek = /(^|\.)deepseek\.com$/i.test(host);
  const promptCaching =
    options.promptCaching ?? (host.toLowerCase() === "api.anthropic.com" ? "auto" : "off");
  if (promptCaching !== "auto" && promptCaching !== "off") {
    throw new InvalidOptionError(prefix, "promptCaching", 'must be "auto" or "off".');
  }
  const nativeOutput = checkBoolean(
    options.nativeOutput,
    !NO_OUTPUT_CONFIG_HOSTS.has(host.toLowerCase()),
    "nativeOutput",
    prefix,
    "true, or false for api.deepseek.com",
  );
  const resolved =
    options.authToken !== undefined && options.apiKey === undefined
      ? { key: options.authToken, hint: "the authToken option" }
      : resolveApiKey(options.apiKey, deepseek ? "DEEPSEEK_API_KEY" : "ANTHROPIC_API_KEY");
  const useBearer = options.authToken !== undefined && options.apiKey === undefined;
  const url = `${baseURL}/v1/messages`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    "anthropic-version": "2023-06-01",
    ...options.headers,
  };
  const keyHeader =
    resolved.key === undefined ? undefined : useBearer ? "authorization" : "x-api-key";
  if (resolved.key !== undefined) {
    if (useBearer) headers.authorization = `Bearer ${resolved.key}`;
    else headers["x-api-key"] = resolved.key;
  }
  checkHeaders(headers, keyHeader, useBearer ? "authToken" : "apiKey", resolved.hint, prefix);
  const call: CallContext = {
    label: deepseek ? "DeepSeek Anthropic API" : "Anthropic API",
    endpoint: safeEndpoint(url),
    url,
    headers,
    fetch: options.fetch ?? globalThis.fetch,
    maxRetries,
    timeoutMs,
    requestTimeoutMs,
    secrets: collectSecrets(resolved.key, headers),
    keyHint: resolved.hint,
  };
  const codec: ResponseCodec = {
    createStreamDecoder: () => new AnthropicStreamDecoder(call),
    decodeMessage: (body) => decodeAnthropicMessage(call, body),
  };
  const countUrl = `${url}/count_tokens`;
  const countCall: CallContext = { ...call, endpoint: safeEndpoint(countUrl), url: countUrl };
  const countCodec = countTokensCodec(countCall);
  // Made on first use: requests without context_management never pay for them.
  let editingCall: CallContext | undefined;
  let editingCountCall: CallContext | undefined;
  const publicBaseURL = safeEndpoint(baseURL).replace(/\/$/, "");
  return {
    specificationVersion: "v1",
    name: "anthropic",
    baseURL: publicBaseURL,
    nativeOutput,
    contextEditing: true,
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      if (resolved.key === undefined) return missingKey(call);
      const stream = request.stream !== false;
      const caching = (request.promptCaching ?? promptCaching) === "auto";
      const body = JSON.stringify(toAnthropicBody(request, stream, caching));
      if (request.contextManagement === undefined) {
        return callModel(call, codec, body, stream, request.signal);
      }
      editingCall ??= withBeta(call, CONTEXT_MANAGEMENT_BETA);
      return callModel(editingCall, codec, body, stream, request.signal);
    },
    async countTokens(request: ModelRequest): Promise<number> {
      if (resolved.key === undefined) throw missingKeyError(countCall);
      const caching = (request.promptCaching ?? promptCaching) === "auto";
      const body = JSON.stringify(toAnthropicCountTokensBody(request, caching));
      if (request.contextManagement === undefined) {
        return countAnthropicTokens(countCall, countCodec, body, request.signal);
      }
      editingCountCall ??= withBeta(countCall, CONTEXT_MANAGEMENT_BETA);
      return countAnthropicTokens(editingCountCall, countCodec, body, request.signal);
    },
  };
}

/**
 * The same call with `beta` added to its `anthropic-beta` header: after the betas already sent
 * (whatever the header name's case), comma-separated, and not twice.
 */
function withBeta(call: CallContext, beta: string): CallContext {
  const headers: Record<string, string> = {};
  const betas: string[] = [];
  for (const name of Object.keys(call.headers)) {
    const value = call.headers[name]!;
    if (name.toLowerCase() !== "anthropic-beta") headers[name] = value;
    else {
      for (const item of value.split(",")) {
        const trimmed = item.trim();
        if (trimmed !== "" && !betas.includes(trimmed)) betas.push(trimmed);
      }
    }
  }
  if (!betas.includes(beta)) betas.push(beta);
  headers["anthropic-beta"] = betas.join(",");
  return { ...call, headers };
}

/** The `provider_missing_api_key` error of a call. */
function missingKeyError(call: CallContext): ProviderError {
  return new ProviderError({
    code: "provider_missing_api_key",
    message: `No API key for ${call.label} at ${call.endpoint}: set ${call.keyHint}.`,
    endpoint: call.endpoint,
    retryable: false,
  });
}

/** Fails the first iteration with a `provider_missing_api_key` error. */
// biome-ignore lint/correctness/useYield: the iterator only throws.
async function* missingKey(call: CallContext): AsyncGenerator<ModelStreamEvent> {
  throw missingKeyError(call);
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
