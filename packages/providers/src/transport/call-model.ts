import { createParser } from "eventsource-parser";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import { abortError } from "./abort-error.js";
import { AttemptController } from "./attempt-controller.js";
import { httpStatusError } from "./http-status-error.js";
import { redactError, redactSecrets, redactUrls } from "./redact-secret.js";
import { retryDelay } from "./retry-delay.js";
import type { DecodedMessage, EndpointContext, ResponseCodec } from "./stream-decoder.js";

/** Everything one provider needs to send a request: where, how, and how patiently. */
export interface CallContext extends EndpointContext {
  /** The full URL to POST to. */
  readonly url: string;
  /** The request headers, key included (never printed). */
  readonly headers: Readonly<Record<string, string>>;
  /** The fetch implementation. */
  readonly fetch: typeof globalThis.fetch;
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** The longest wait for headers or between decoded stream events, in milliseconds. */
  readonly timeoutMs: number;
  /** The longest one attempt may take as a whole, in milliseconds (H4). */
  readonly requestTimeoutMs: number;
}

/** The default `requestTimeoutMs`: 20 minutes for one attempt, whatever it streams. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 1_200_000;

/**
 * The largest single SSE event, in characters, and the largest non-streaming JSON body, in
 * bytes, that a provider reads (16 MiB), H7. Past it the call ends with
 * `provider_malformed_response` instead of buffering without end.
 */
export const MAX_RESPONSE_EVENT_SIZE = 16 * 1024 * 1024;

/** How much of an error body is read for the error message; the rest is not downloaded. */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * Sends one model request with retries and yields its normalised events; the last one is
 * `response`.
 *
 * Retries (with backoff, honouring retry-after) when the failure is retryable and no event has
 * reached the consumer yet; a stream that fails after events were yielded throws a
 * {@link ProviderError} instead of being replayed. Aborting `signal` aborts the HTTP request at
 * once and throws an `AbortError`.
 *
 * @param call - The endpoint and transport settings.
 * @param codec - The protocol's response decoding.
 * @param body - The serialised request body.
 * @param stream - Whether the body asks for SSE.
 * @param signal - The caller's abort signal.
 */
export async function* callModel(
  call: CallContext,
  codec: ResponseCodec,
  body: string,
  stream: boolean,
  signal: AbortSignal | undefined,
): AsyncGenerator<ModelStreamEvent, void, undefined> {
  const started = performance.now();
  if (signal?.aborted) throw abortError(signal);
  for (let attempt = 0; ; attempt++) {
    const control = new AttemptController(signal, call.timeoutMs, call.requestTimeoutMs);
    let completed = false;
    let yielded = false;
    let failure: ProviderError;
    let failureHeaders: Headers | undefined;
    try {
      let response: Response;
      try {
        response = await call.fetch(call.url, {
          method: "POST",
          headers: call.headers,
          body,
          signal: control.signal,
          // Model APIs do not redirect a POST. Refusing redirects (and having no window) also
          // spares fetch a copy of every request body (a clone and a tee per call).
          redirect: "error",
          window: null,
        });
      } catch (error) {
        throw transportFailure(call, control, error, attempt, false);
      }
      control.touch();
      const headers = response.headers;
      const requestId = headers.get("request-id") ?? headers.get("x-request-id") ?? undefined;
      if (!response.ok) {
        let text = "";
        try {
          text = (await readBody(response, MAX_ERROR_BODY_BYTES, control)).text;
        } catch (error) {
          if (signal?.aborted) throw error;
        }
        failure = httpStatusError(call, response.status, text, headers, requestId, attempt);
        failureHeaders = headers;
        completed = true;
      } else if (stream && response.body !== null && isEventStream(headers)) {
        const decoder = codec.createStreamDecoder();
        const events = decoder.events;
        // Progress is a complete SSE event, not a byte (H4); one event has a bounded size (H7).
        let progressed = false;
        let pendingLength = 0;
        // (Comment lines do not reset the size: the parser keeps collecting the open event's
        // data lines across them.)
        const parser = createParser({
          onEvent: (message) => {
            progressed = true;
            pendingLength = 0;
            decoder.handle(message);
          },
        });
        const reader = response.body.getReader();
        const text = new TextDecoder();
        for (;;) {
          let chunk: ReadableStreamReadResult<Uint8Array>;
          try {
            chunk = await reader.read();
          } catch (error) {
            throw transportFailure(call, control, error, attempt, true);
          }
          if (chunk.done) break;
          const piece = text.decode(chunk.value, { stream: true });
          pendingLength += piece.length;
          parser.feed(piece);
          if (progressed) {
            progressed = false;
            control.touch();
          } else if (pendingLength > MAX_RESPONSE_EVENT_SIZE) {
            throw oversized(call, "one stream event", requestId);
          }
          if (events.length > 0) {
            yielded = true;
            for (let index = 0; index < events.length; index++) yield events[index]!;
            events.length = 0;
          }
        }
        completed = true;
        parser.feed(text.decode());
        const decoded = decoder.finish();
        if (events.length > 0) {
          for (let index = 0; index < events.length; index++) yield events[index]!;
          events.length = 0;
        }
        yield { type: "response", response: toResponse(decoded, requestId, attempt, started) };
        return;
      } else {
        let text: string;
        let tooLarge: boolean;
        try {
          ({ text, tooLarge } = await readBody(response, MAX_RESPONSE_EVENT_SIZE, control));
        } catch (error) {
          throw transportFailure(call, control, error, attempt, false);
        }
        if (tooLarge) throw oversized(call, "a response body", requestId);
        completed = true;
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch (error) {
          throw new ProviderError({
            code: "provider_malformed_response",
            message: `${call.label} at ${call.endpoint} answered 200 with a body that is not JSON. Check that baseURL points at a compatible API.`,
            endpoint: call.endpoint,
            status: response.status,
            retryable: false,
            requestId,
            cause: safeCause(error, call),
          });
        }
        const decoded = codec.decodeMessage(json);
        yield { type: "usage", usage: decoded.usage };
        yield { type: "stop", stopReason: decoded.stopReason };
        yield { type: "response", response: toResponse(decoded, requestId, attempt, started) };
        return;
      }
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      if (!(error instanceof ProviderError)) throw error;
      failure = error;
    } finally {
      control.dispose();
      if (!completed) control.abort();
    }
    if (!failure.retryable || yielded || attempt >= call.maxRetries) throw failure;
    const delayMs = retryDelay(attempt + 1, failureHeaders);
    yield {
      type: "retry",
      attempt: attempt + 1,
      delayMs,
      status: failure.status,
      message: failure.message,
    };
    await sleep(delayMs, signal);
  }
}

/**
 * Reads a body as text, at most `limit` bytes: `tooLarge` (and the body left unread) when it
 * is longer. An uncompressed body with a `content-length` within the limit is read in one
 * piece; a compressed one is counted as it is decoded (its `content-length` is the compressed
 * size).
 */
async function readBody(
  response: Response,
  limit: number,
  control: AttemptController,
): Promise<{ readonly text: string; readonly tooLarge: boolean }> {
  const declared = Number(response.headers.get("content-length") ?? Number.NaN);
  const encoded = response.headers.get("content-encoding");
  const plain = encoded === null || encoded === "" || encoded === "identity";
  if ((plain && declared <= limit) || response.body === null) {
    return { text: await response.text(), tooLarge: false };
  }
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  let bytes = 0;
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return { text: text + decoder.decode(), tooLarge: false };
    const room = limit - bytes;
    bytes += chunk.value.byteLength;
    if (bytes > limit) {
      control.abort();
      return { text: text + decoder.decode(chunk.value.subarray(0, room)), tooLarge: true };
    }
    text += decoder.decode(chunk.value, { stream: true });
  }
}

/** The error for a response (or one stream event) larger than the provider reads (H7). */
function oversized(call: CallContext, what: string, requestId: string | undefined): ProviderError {
  return new ProviderError({
    code: "provider_malformed_response",
    message: `${call.label} at ${call.endpoint} sent ${what} larger than ${MAX_RESPONSE_EVENT_SIZE} bytes, more than any model response holds; it was not read. Check that baseURL points at a compatible API.`,
    endpoint: call.endpoint,
    retryable: false,
    requestId,
  });
}

function isEventStream(headers: Headers): boolean {
  const type = headers.get("content-type");
  return type === null || !type.includes("application/json");
}

function toResponse(
  decoded: DecodedMessage,
  requestId: string | undefined,
  retries: number,
  started: number,
): ModelResponse {
  const response: ModelResponse = {
    model: decoded.model,
    message: { role: "assistant", content: decoded.content },
    stopReason: decoded.stopReason,
    usage: decoded.usage,
    retries,
    latencyMs: performance.now() - started,
  };
  if (decoded.id !== undefined) response.id = decoded.id;
  if (decoded.rawStopReason !== undefined) response.rawStopReason = decoded.rawStopReason;
  if (requestId !== undefined) response.requestId = requestId;
  if (decoded.contextEdits !== undefined) response.contextEdits = decoded.contextEdits;
  return response;
}

function transportFailure(
  call: CallContext,
  control: AttemptController,
  error: unknown,
  retries: number,
  midStream: boolean,
): unknown {
  if (control.signal.aborted && !control.timedOut) return error;
  const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
  if (control.timedOut === "deadline") {
    return new ProviderError({
      code: "provider_timeout",
      message: `${call.label} at ${call.endpoint} did not finish its response within requestTimeoutMs (${call.requestTimeoutMs} ms)${after}. The server may be overloaded or stalling: try again, or raise requestTimeoutMs for very long responses.`,
      endpoint: call.endpoint,
      retryable: !midStream,
      cause: safeCause(error, call),
    });
  }
  if (control.timedOut === "idle") {
    return new ProviderError({
      code: "provider_timeout",
      message: `${call.label} at ${call.endpoint} made no progress (no response headers, or no complete stream event) for ${call.timeoutMs} ms${after}. The server may be overloaded or unreachable: try again, or raise timeoutMs.`,
      endpoint: call.endpoint,
      retryable: !midStream,
      cause: safeCause(error, call),
    });
  }
  const reason = describeCause(error, call);
  if (!midStream && /redirect/i.test(reason)) {
    return new ProviderError({
      code: "provider_redirect",
      message: `${call.label} at ${call.endpoint} answered with a redirect, which Lattice does not follow for model requests (the request body would be sent to another address). Set baseURL to the address the server redirects to.`,
      endpoint: call.endpoint,
      retryable: false,
      cause: safeCause(error, call),
    });
  }
  if (midStream) {
    return new ProviderError({
      code: "provider_stream_truncated",
      message: `The ${call.label} stream from ${call.endpoint} was cut before the message was complete (${reason}). The partial reply was discarded: retry the turn.`,
      endpoint: call.endpoint,
      retryable: true,
      cause: safeCause(error, call),
    });
  }
  return new ProviderError({
    code: "provider_connection",
    message: `Could not get a response from ${call.label} at ${call.endpoint}${after} (${reason}). Check baseURL and the network connection.`,
    endpoint: call.endpoint,
    retryable: true,
    cause: safeCause(error, call),
  });
}

/**
 * The failure's text for a message: the error's message and its cause's, with every URL reduced
 * to a safe endpoint (no credentials, query or fragment) and the key redacted, since fetch
 * implementations may put the request URL or a header value into their messages.
 */
function describeCause(error: unknown, call: CallContext): string {
  let text: string;
  if (!(error instanceof Error)) text = String(error);
  else {
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      text = `${error.message}: ${typeof code === "string" ? `${code} ` : ""}${cause.message}`;
    } else text = error.message;
  }
  return redactText(text, call);
}

/** A text without the request URL's secrets or any key. */
function redactText(text: string, call: CallContext): string {
  return redactSecrets(redactUrls(text.split(call.url).join(call.endpoint)), call.secrets);
}

/** The cause to keep on a ProviderError: redacted like the message (see `redactError`). */
function safeCause(error: unknown, call: CallContext): unknown {
  return redactError(error, (text) => redactText(text, call));
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
