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
  /** The longest wait for headers or between stream chunks, in milliseconds. */
  readonly timeoutMs: number;
}

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
    const control = new AttemptController(signal, call.timeoutMs);
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
          text = await response.text();
        } catch (error) {
          if (signal?.aborted) throw error;
        }
        failure = httpStatusError(call, response.status, text, headers, requestId, attempt);
        failureHeaders = headers;
        completed = true;
      } else if (stream && response.body !== null && isEventStream(headers)) {
        const decoder = codec.createStreamDecoder();
        const events = decoder.events;
        const parser = createParser({ onEvent: (message) => decoder.handle(message) });
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
          control.touch();
          parser.feed(text.decode(chunk.value, { stream: true }));
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
        try {
          text = await response.text();
        } catch (error) {
          throw transportFailure(call, control, error, attempt, false);
        }
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
  if (control.timedOut) {
    return new ProviderError({
      code: "provider_timeout",
      message: `${call.label} at ${call.endpoint} sent no data for ${call.timeoutMs} ms${after}. The server may be overloaded or unreachable: try again, or raise timeoutMs.`,
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
