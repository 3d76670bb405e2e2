import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions } from "@lattice/tools/internal";
import type { ModelProviderV1 } from "../model-provider.js";
import type { ModelRequest } from "../model-request.js";
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
import { decodeOpenAiCompletion } from "./decode-openai-completion.js";
import {
  OpenAiStreamDecoder,
  type OutputSchema,
  type StrictSchemas,
} from "./openai-stream-decoder.js";
import { type MaxTokensParameter, toOpenAiBody } from "./to-openai-body.js";

const DEFAULT_BASE_URL = "https://api.openai.com/v1";
const OPTION_KEYS: ReadonlySet<string> = new Set([
  "apiKey",
  "baseURL",
  "headers",
  "maxRetries",
  "timeoutMs",
  "requestTimeoutMs",
  "fetch",
  "maxTokensParameter",
  "nativeOutput",
]);
/** DeepSeek's chat API: JSON mode (`json_object`), but no `json_schema` response format. */
const NO_JSON_SCHEMA_HOSTS: ReadonlySet<string> = new Set(["api.deepseek.com"]);

/** Options of {@link openaiCompatible}. Checked strictly: an unknown key throws. */
export interface OpenAiCompatibleOptions {
  /**
   * The API key, sent as `Authorization: Bearer …`. Default: `OPENAI_API_KEY`. Without any key,
   * requests to api.openai.com fail with `provider_missing_api_key`; other servers (vLLM,
   * llama.cpp, Ollama) get no Authorization header. Never printed in errors, logs or traces.
   */
  readonly apiKey?: string;
  /**
   * The API's base URL, including `/v1` as in OpenAI's own SDK; requests go to
   * `baseURL + "/chat/completions"`. Default `https://api.openai.com/v1`.
   */
  readonly baseURL?: string;
  /** Extra headers sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * Retries after the first attempt on 408, 409, 429, 5xx and connection failures. An integer ≥ 0 (0: no
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
   * Which field carries `maxTokens`. Default: `"max_completion_tokens"` for api.openai.com
   * (its reasoning models reject `max_tokens`), else `"max_tokens"` (what compatible servers
   * all accept).
   */
  readonly maxTokensParameter?: MaxTokensParameter;
  /**
   * Whether the endpoint takes native structured output, `response_format: { type:
   * "json_schema", … }` (exposed as `provider.nativeOutput`; see `ModelRequest.output`). It
   * tells callers whether to give `request.output`: core then uses it for `outputSchema`
   * instead of forcing a final-answer tool. Default `true`, except `false` for
   * api.deepseek.com, whose chat API has JSON mode but no `json_schema` format. Set `false` for
   * a server that rejects or ignores `response_format`.
   */
  readonly nativeOutput?: boolean;
}

/**
 * A provider for OpenAI-compatible Chat Completions APIs (OpenAI, vLLM, llama.cpp, Ollama,
 * gateways).
 *
 * POSTs to `baseURL + "/chat/completions"`. Tools are sent as functions (strict ones with the
 * strict-mode schema), tool calls are assembled from deltas by index, tool results are sent as
 * `role: "tool"` messages, usage comes from `stream_options.include_usage`, and
 * `finish_reason` is mapped to the common stop reasons. `request.output` is sent as a strict
 * `json_schema` `response_format`; a refusal ends with stop reason `"refusal"`, its text as a
 * text block.
 *
 * Context: these APIs have no token-counting endpoint, so the provider has no `countTokens`
 * (callers estimate), and no server-side context editing, so `request.contextManagement` is
 * ignored and `contextEditing` is absent. A 400 `context_length_exceeded` (or a compatible API's
 * "maximum context length is … tokens" message, as DeepSeek sends it) fails with a
 * `ProviderError` coded `provider_context_overflow`.
 *
 * @example
 * ```ts
 * const provider = openaiCompatible({ baseURL: "http://localhost:11434/v1" });
 * ```
 *
 * @param options - {@link OpenAiCompatibleOptions}.
 * @returns A {@link ModelProviderV1} named `"openai-compatible"`.
 * @throws `UnknownOptionError` for an unknown option; `InvalidOptionError` for a bad value
 *   (including a key or header value that cannot be sent in an HTTP header; the value is never
 *   printed).
 */
export function openaiCompatible(options: OpenAiCompatibleOptions = {}): ModelProviderV1 {
  const prefix = "openaiCompatible():";
  assertKnownOptions(options, OPTION_KEYS, prefix);
  const baseURL = trimBaseURL(options.baseURL ?? DEFAULT_BASE_URL, prefix, {
    example: DEFAULT_BASE_URL,
    keyOptions: "apiKey",
  });
  const maxRetries = checkRetries(options.maxRetries, 2, "maxRetries", prefix);
  const timeoutMs = checkTimeout(options.timeoutMs, 600_000, "timeoutMs", prefix);
  const requestTimeoutMs = checkTimeout(
    options.requestTimeoutMs,
    DEFAULT_REQUEST_TIMEOUT_MS,
    "requestTimeoutMs",
    prefix,
  );
  const host = new URL(baseURL).hostname.toLowerCase();
  const official = /(^|\.)openai\.com$/.test(host);
  const maxTokensParameter =
    options.maxTokensParameter ?? (official ? "max_completion_tokens" : "max_tokens");
  if (maxTokensParameter !== "max_tokens" && maxTokensParameter !== "max_completion_tokens") {
    throw new InvalidOptionError(
      prefix,
      "maxTokensParameter",
      'must be "max_tokens" or "max_completion_tokens".',
    );
  }
  const nativeOutput = checkBoolean(
    options.nativeOutput,
    !NO_JSON_SCHEMA_HOSTS.has(host),
    "nativeOutput",
    prefix,
    "true, or false for api.deepseek.com",
  );
  const resolved = resolveApiKey(options.apiKey, "OPENAI_API_KEY");
  const url = `${baseURL}/chat/completions`;
  const headers: Record<string, string> = {
    "content-type": "application/json",
    accept: "application/json",
    ...options.headers,
  };
  if (resolved.key !== undefined) headers.authorization = `Bearer ${resolved.key}`;
  const keyHeader = resolved.key === undefined ? undefined : "authorization";
  checkHeaders(headers, keyHeader, "apiKey", resolved.hint, prefix);
  const call: CallContext = {
    label: official ? "OpenAI API" : "OpenAI-compatible API",
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
  const plainCodec: ResponseCodec = codecFor(call, undefined, undefined);
  return {
    specificationVersion: "v1",
    name: "openai-compatible",
    baseURL: safeEndpoint(baseURL).replace(/\/$/, ""),
    nativeOutput,
    stream(request: ModelRequest): AsyncIterable<ModelStreamEvent> {
      if (resolved.key === undefined && official) return missingKey(call);
      const stream = request.stream !== false;
      const body = JSON.stringify(toOpenAiBody(request, stream, maxTokensParameter));
      const strict = strictSchemas(request);
      const output = request.output?.schema;
      const codec =
        strict === undefined && output === undefined ? plainCodec : codecFor(call, strict, output);
      return callModel(call, codec, body, stream, request.signal);
    },
  };
}

function codecFor(
  call: CallContext,
  strict: StrictSchemas | undefined,
  output: OutputSchema | undefined,
): ResponseCodec {
  return {
    createStreamDecoder: () => new OpenAiStreamDecoder(call, strict, output),
    decodeMessage: (body) => decodeOpenAiCompletion(call, body, strict, output),
  };
}

function strictSchemas(request: ModelRequest): StrictSchemas | undefined {
  const tools = request.tools;
  if (tools === undefined) return undefined;
  let map: Map<string, { [keyword: string]: unknown }> | undefined;
  for (const tool of tools) {
    if (tool.strict !== true) continue;
    map ??= new Map();
    map.set(tool.name, tool.inputSchema);
  }
  return map;
}

/** Fails the first iteration with a `provider_missing_api_key` error. */
// biome-ignore lint/correctness/useYield: the iterator only throws.
async function* missingKey(call: CallContext): AsyncGenerator<ModelStreamEvent> {
  throw new ProviderError({
    code: "provider_missing_api_key",
    message: `No API key for ${call.label} at ${call.endpoint}: set ${call.keyHint}.`,
    endpoint: call.endpoint,
    retryable: false,
  });
}
