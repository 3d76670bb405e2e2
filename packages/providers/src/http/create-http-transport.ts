import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import {
  type CallContext,
  callModel,
  DEFAULT_REQUEST_TIMEOUT_MS,
} from "../transport/call-model.js";
import {
  authorityHasAt,
  checkHeaders,
  checkRetries,
  checkTimeout,
} from "../transport/provider-options.js";
import {
  collectSecrets,
  redactError,
  redactSecrets,
  redactUrls,
  safeEndpoint,
} from "../transport/redact-secret.js";
import type { DecodedMessage, ResponseCodec } from "../transport/stream-decoder.js";
import type {
  DecodedModelResponse,
  DecoderContext,
  ModelResponseCodec,
} from "./model-response-codec.js";

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "label",
  "url",
  "headers",
  "secrets",
  "keyHint",
  "fetch",
  "maxRetries",
  "timeoutMs",
  "requestTimeoutMs",
]);
const CALL_KEYS: ReadonlySet<string> = new Set([
  "body",
  "stream",
  "codec",
  "signal",
  "url",
  "headers",
]);
const PREFIX = "createHttpTransport():";
const CALL_PREFIX = "HttpTransport.call():";

/** Options of {@link createHttpTransport}. Checked strictly: an unknown key throws. */
export interface HttpTransportOptions {
  /** The API's name in error messages, for example `"Acme API"`. Required. */
  readonly label: string;
  /**
   * The URL requests are POSTed to, for example `"https://api.acme.dev/v1/messages"`: an
   * absolute http(s) URL without a user name or password. A query is allowed (it is never
   * printed). Required; one call can go elsewhere with {@link HttpCallOptions.url}.
   */
  readonly url: string;
  /**
   * Headers sent with every request, the key's header included (for example
   * `{ authorization: "Bearer …" }`). Names are sent in lower case. The values of credential
   * headers (any name with auth, key, token, secret, cookie, password, signature or
   * credential) are redacted from every message and `cause`. Default:
   * `content-type: application/json` only.
   */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * More values to redact from messages and causes, for a key sent elsewhere than in a
   * credential header (a query parameter, for example). Values shorter than 4 characters are
   * ignored.
   */
  readonly secrets?: readonly string[];
  /**
   * Where the user sets the key, for the message of a 401, for example
   * `"the ACME_API_KEY environment variable or the apiKey option"` (see `resolveApiKey`).
   * Default `"the provider's apiKey option"`.
   */
  readonly keyHint?: string;
  /** A custom `fetch` (a proxy agent, a test double). Default: the platform's `fetch`. */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Retries after the first attempt, on 408, 409, 429, 5xx and connection failures, and on a
   * stream that failed before it yielded anything: an integer ≥ 0. Default 2.
   */
  readonly maxRetries?: number;
  /**
   * The longest wait for progress, in ms: for the response headers, then between two complete
   * stream events (bytes and SSE comments that complete no event do not count). A positive
   * number, `Infinity` for none. Default 600000.
   */
  readonly timeoutMs?: number;
  /**
   * The longest one attempt may take as a whole, in ms, whatever it streams (each retry gets
   * its own). A positive number, `Infinity` for none. Default 1200000.
   */
  readonly requestTimeoutMs?: number;
}

/** Options of one {@link HttpTransport.call}. Checked strictly: an unknown key throws. */
export interface HttpCallOptions {
  /** The request body: a value sent as JSON, or a string sent as it is. Required. */
  readonly body: unknown;
  /** How to decode the response. Required. */
  readonly codec: ModelResponseCodec;
  /**
   * Whether the body asks for a stream. Default `true`. A response with a JSON content type
   * is decoded with `codec.decodeMessage` either way; any other 2xx response with
   * `stream: true` is read as server-sent events.
   */
  readonly stream?: boolean;
  /** Aborts the request at once; the iterator then throws an error named `AbortError`. */
  readonly signal?: AbortSignal | undefined;
  /**
   * Another URL for this call (an API that puts the model in the path). Checked like
   * {@link HttpTransportOptions.url}.
   */
  readonly url?: string;
  /** Headers for this call, added to the transport's (and replacing those of the same name). */
  readonly headers?: Readonly<Record<string, string>>;
}

/** Lattice's model transport, bound to one endpoint. */
export interface HttpTransport {
  /** The API's name in messages, as given. */
  readonly label: string;
  /** The URL requests go to, safe to print (no credentials, query or fragment). */
  readonly endpoint: string;
  /**
   * Sends one model request and yields its normalised events; the last one is `response`.
   *
   * Retries retryable failures (408, 409, 429, 5xx, connection failures, timeouts, a stream
   * that failed before anything was yielded) up to `maxRetries` times with exponential backoff
   * (500 ms doubled per retry, at most 8 s, with jitter; `retry-after-ms`, `retry-after` up to
   * 60 s and `x-should-retry` are honoured), yielding a `retry` event before each. A stream
   * that fails after events were yielded is never replayed. Reads at most 16 MiB per stream
   * event or JSON body, and 64 KiB of an error body.
   *
   * @param options - {@link HttpCallOptions}.
   * @returns The events, as the `stream` method of a `ModelProviderV1` returns them.
   * @throws `UnknownOptionError` or `InvalidOptionError` at once for bad options; from the
   *   iterator, `ProviderError` when the call fails after its retries (no key in its message or
   *   cause), or an error named `AbortError` when `signal` aborts.
   */
  call(options: HttpCallOptions): AsyncIterable<ModelStreamEvent>;
}

/**
 * Creates the HTTP transport Lattice's own adapters use, for a provider of your own: retries
 * with backoff and `retry` events, idle and per-attempt timeouts, server-sent event decoding,
 * size limits, HTTP errors mapped to {@link ProviderError} codes, and keys redacted from every
 * message. Your provider turns a `ModelRequest` into a body and supplies a
 * {@link ModelResponseCodec}; the transport does the rest.
 *
 * @example
 * ```ts
 * const transport = createHttpTransport({
 *   label: "Acme API",
 *   url: "https://api.acme.dev/v1/messages",
 *   headers: { "x-api-key": apiKey },
 * });
 * for await (const event of transport.call({ body, codec, signal })) {
 *   if (event.type === "response") console.log(event.response.usage);
 * }
 * ```
 *
 * @param options - {@link HttpTransportOptions}.
 * @throws `UnknownOptionError` for an unknown option; `InvalidOptionError` for a bad value
 *   (a header name or value fetch would refuse is named, never printed).
 */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  if (options === undefined || typeof options.label !== "string" || options.label.trim() === "") {
    throw new InvalidOptionError(
      PREFIX,
      "label",
      `must be a non-empty string naming the API in error messages, for example "Acme API"; received ${describeValue(options?.label)}.`,
    );
  }
  const label = options.label;
  const url = checkUrl(options.url, PREFIX, "url");
  const secrets = checkSecrets(options.secrets);
  const keyHint = options.keyHint ?? "the provider's apiKey option";
  if (typeof keyHint !== "string") {
    throw new InvalidOptionError(PREFIX, "keyHint", "must be a string, or omitted.");
  }
  const fetch = options.fetch ?? globalThis.fetch;
  if (typeof fetch !== "function") {
    throw new InvalidOptionError(
      PREFIX,
      "fetch",
      `must be a fetch function, received ${describeValue(fetch)}.`,
    );
  }
  const headers = lowerCaseNames(options.headers, PREFIX);
  if (headers["content-type"] === undefined) headers["content-type"] = "application/json";
  checkHeaders(headers, undefined, "headers", keyHint, PREFIX);
  const base: CallContext = {
    label,
    endpoint: safeEndpoint(url),
    url,
    headers,
    fetch,
    maxRetries: checkRetries(options.maxRetries, 2, "maxRetries", PREFIX),
    timeoutMs: checkTimeout(options.timeoutMs, 600_000, "timeoutMs", PREFIX),
    requestTimeoutMs: checkTimeout(
      options.requestTimeoutMs,
      DEFAULT_REQUEST_TIMEOUT_MS,
      "requestTimeoutMs",
      PREFIX,
    ),
    secrets: allSecrets(headers, secrets),
    keyHint,
  };
  return {
    label,
    endpoint: base.endpoint,
    call(callOptions: HttpCallOptions): AsyncIterable<ModelStreamEvent> {
      assertKnownOptions(callOptions, CALL_KEYS, CALL_PREFIX);
      const codec = callOptions?.codec;
      if (typeof codec?.createStreamDecoder !== "function") {
        throw new InvalidOptionError(
          CALL_PREFIX,
          "codec",
          "must be a ModelResponseCodec (createStreamDecoder and decodeMessage functions).",
        );
      }
      if (typeof codec.decodeMessage !== "function") {
        throw new InvalidOptionError(CALL_PREFIX, "codec", "has no decodeMessage function.");
      }
      const body =
        typeof callOptions.body === "string"
          ? callOptions.body
          : (JSON.stringify(callOptions.body) as string | undefined);
      if (body === undefined) {
        throw new InvalidOptionError(
          CALL_PREFIX,
          "body",
          `must be a value JSON can represent or a string, received ${describeValue(callOptions.body)}.`,
        );
      }
      const call = forCall(base, callOptions, secrets);
      return callModel(
        call,
        toResponseCodec(codec, call),
        body,
        callOptions.stream !== false,
        callOptions.signal,
      );
    },
  };
}

/** The transport's context, with this call's URL and headers when it has its own. */
function forCall(
  base: CallContext,
  options: HttpCallOptions,
  secrets: readonly string[],
): CallContext {
  if (options.url === undefined && options.headers === undefined) return base;
  const url = options.url === undefined ? base.url : checkUrl(options.url, CALL_PREFIX, "url");
  let headers = base.headers;
  if (options.headers !== undefined) {
    headers = { ...base.headers, ...lowerCaseNames(options.headers, CALL_PREFIX) };
    checkHeaders(headers, undefined, "headers", base.keyHint, CALL_PREFIX);
  }
  return {
    ...base,
    url,
    endpoint: safeEndpoint(url),
    headers,
    secrets: headers === base.headers ? base.secrets : allSecrets(headers, secrets),
  };
}

/** Adapts a public codec to the transport's internal one. */
function toResponseCodec(codec: ModelResponseCodec, call: CallContext): ResponseCodec {
  const redact = (text: string): string =>
    redactSecrets(redactUrls(text.split(call.url).join(call.endpoint)), call.secrets);
  const context: DecoderContext = { label: call.label, endpoint: call.endpoint, redact };
  return {
    createStreamDecoder() {
      const events: ModelStreamEvent[] = [];
      const decoder = codec.createStreamDecoder({
        label: context.label,
        endpoint: context.endpoint,
        redact,
        emit: (event) => {
          events.push(event);
        },
      });
      return {
        events,
        handle(message) {
          try {
            decoder.handle(message);
          } catch (error) {
            throw unreadable(error, call, redact, true);
          }
        },
        finish() {
          try {
            return toDecodedMessage(decoder.finish());
          } catch (error) {
            throw unreadable(error, call, redact, true);
          }
        },
      };
    },
    decodeMessage(body) {
      try {
        return toDecodedMessage(codec.decodeMessage(body, context));
      } catch (error) {
        throw unreadable(error, call, redact, false);
      }
    },
  };
}

function toDecodedMessage(decoded: DecodedModelResponse): DecodedMessage {
  return {
    id: decoded.id,
    model: decoded.model ?? "",
    content: decoded.content,
    stopReason: decoded.stopReason,
    rawStopReason: decoded.rawStopReason,
    usage: decoded.usage,
  };
}

/** A decoder's failure as a `ProviderError`: kept when it is one, else a malformed response. */
function unreadable(
  error: unknown,
  call: CallContext,
  redact: (text: string) => string,
  stream: boolean,
): ProviderError {
  if (error instanceof ProviderError) return error;
  const raw = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const reason = redact(raw.length > 200 ? `${raw.slice(0, 200)}…` : raw);
  return new ProviderError({
    code: "provider_malformed_response",
    message: stream
      ? `The ${call.label} stream from ${call.endpoint} sent an event its decoder could not read (${reason}). The partial reply was discarded: retry the turn, and check that the URL points at the API the provider was written for.`
      : `${call.label} at ${call.endpoint} answered with a body its decoder could not read (${reason}). Check that the URL points at the API the provider was written for.`,
    endpoint: call.endpoint,
    retryable: stream,
    cause: redactError(error, redact),
  });
}

/**
 * Checks a request URL: an absolute http(s) URL without credentials.
 *
 * @throws `InvalidOptionError`, never printing the URL (it may hold a key).
 */
function checkUrl(value: unknown, prefix: string, name: string): string {
  let parsed: URL | undefined;
  if (typeof value === "string") {
    try {
      parsed = new URL(value);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new InvalidOptionError(
      prefix,
      name,
      "must be an absolute http(s) URL, for example https://api.acme.dev/v1/messages.",
    );
  }
  if (parsed.username !== "" || parsed.password !== "" || authorityHasAt(value as string)) {
    throw new InvalidOptionError(
      prefix,
      name,
      'must not contain a user name or password ("user:password@"): credentials in a URL end up in logs. Send the key in a header.',
    );
  }
  return parsed.href;
}

function checkSecrets(value: unknown): readonly string[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.some((secret) => typeof secret !== "string")) {
    throw new InvalidOptionError(PREFIX, "secrets", "must be an array of strings (not printed).");
  }
  return value as string[];
}

/** A copy of `headers` with lower-case names, so that two spellings never both go out. */
function lowerCaseNames(
  headers: Readonly<Record<string, string>> | undefined,
  prefix: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (headers === null || typeof headers !== "object" || Array.isArray(headers)) {
    throw new InvalidOptionError(
      prefix,
      "headers",
      `must be an object of header names to string values, received ${describeValue(headers)}.`,
    );
  }
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (typeof value !== "string") {
      throw new InvalidOptionError(
        prefix,
        "headers",
        `has a value for "${name}" that is not a string (${typeof value}; the value is not printed).`,
      );
    }
    out[name.toLowerCase()] = value;
  }
  return out;
}

/** The credential header values and the extra secrets, longest first. */
function allSecrets(
  headers: Readonly<Record<string, string>>,
  extra: readonly string[],
): readonly string[] {
  if (extra.length === 0) return collectSecrets(undefined, headers);
  const all = new Set(collectSecrets(undefined, headers));
  for (const secret of extra) if (secret.trim().length >= 4) all.add(secret.trim());
  return [...all].sort((a, b) => b.length - a.length);
}
