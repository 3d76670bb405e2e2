import type {
  LanguageModelV2,
  LanguageModelV3,
  LanguageModelV3CallOptions,
  SharedV3Headers,
} from "@ai-sdk/provider";
import {
  type ModelRequest,
  type ModelResponse,
  type ModelStreamEvent,
  ProviderError,
} from "@lattice/providers";
import { abortError, retryDelay } from "@lattice/providers/internal";
import { describeValue } from "@lattice/tools/internal";
import { sleep } from "./abort-error.js";
import { type FailurePhase, failureHeaders, toProviderError } from "./ai-sdk-provider-error.js";
import {
  AiSdkStreamAssembler,
  type AiSdkStreamPart,
  type AssembledMessage,
  StreamErrorPart,
} from "./ai-sdk-stream-assembler.js";
import { AttemptControl } from "./attempt-control.js";
import type { BridgeContext } from "./bridge-context.js";
import { checkStreamResult, malformedAnswer, type StreamResult } from "./check-model-answer.js";
import { decodeGenerateResult, type GenerateResult } from "./decode-generate-result.js";
import {
  type AiSdkSpecificationVersion,
  type CallExtras,
  toAiSdkCallOptions,
} from "./to-ai-sdk-call-options.js";

/** Everything one bridged provider needs to call its model. */
export interface BridgeSettings {
  /** The AI SDK model. */
  readonly model: LanguageModelV2 | LanguageModelV3;
  /** Its specification version, checked when the bridge was made. */
  readonly version: AiSdkSpecificationVersion;
  /** The model, for messages. */
  readonly context: BridgeContext;
  /** Provider options and headers for every call. */
  readonly extras: CallExtras;
  /** Retries after the first attempt. */
  readonly maxRetries: number;
  /** The longest wait for progress, in milliseconds. */
  readonly timeoutMs: number;
}

/**
 * Makes one model call through an AI SDK model, with retries, and yields Lattice's normalised
 * events; the last one is `response`.
 *
 * Streams with `doStream` unless `request.stream` is `false` (then `doGenerate`, yielding only
 * `usage`, `stop` and `response`). Retries a retryable failure (an `APICallError` the AI SDK
 * marks `isRetryable`, a cut or erroring stream, a timeout) while no event has reached the
 * consumer, with backoff that honours `retry-after`, announcing each retry with a `retry`
 * event. Aborting `request.signal` aborts the model call and throws an `AbortError` promptly,
 * even when the model ignores its signal (the stream reader is cancelled).
 *
 * @param settings - The model and the bridge's settings.
 * @param request - The Lattice request.
 */
export async function* callAiSdkModel(
  settings: BridgeSettings,
  request: ModelRequest,
): AsyncGenerator<ModelStreamEvent, void, undefined> {
  const started = performance.now();
  const signal = request.signal;
  if (signal?.aborted) throw abortError(signal);
  const stream = request.stream !== false;
  const context = settings.context;
  const model = settings.model as LanguageModelV3;
  for (let attempt = 0; ; attempt++) {
    const control = new AttemptControl(signal, settings.timeoutMs);
    const failed = (error: unknown, phase: FailurePhase): ProviderError =>
      toProviderError(error, context, attempt, phase);
    let completed = false;
    let yielded = false;
    let failure: ProviderError;
    try {
      let options: LanguageModelV3CallOptions;
      try {
        options = toAiSdkCallOptions(request, settings.version, settings.extras, control.signal);
      } catch (error) {
        throw failed(error, "call");
      }
      if (stream) {
        let answer: unknown;
        const pending = model.doStream(options) as PromiseLike<unknown>;
        try {
          answer = await Promise.race([pending, control.aborted()]);
        } catch (error) {
          if (!control.signal.aborted) throw failed(error, "call");
          // A model that ignored the abort may still hand over a stream: cancel it unread.
          pending.then((late) => cancelUnread(late), ignore);
          throw error;
        }
        // A model object that breaks the contract ends in a ProviderError, not a TypeError (H27).
        const result: StreamResult = checkStreamResult(answer, context);
        control.touch();
        const reader = readerOf(result, context);
        control.onAbort = () => {
          Promise.resolve()
            .then(() => reader.cancel())
            .catch(ignore);
        };
        const assembler = new AiSdkStreamAssembler(context);
        const events = assembler.events;
        for (let index = 0; ; index++) {
          let chunk: unknown;
          try {
            chunk = await reader.read();
          } catch (error) {
            throw control.signal.aborted ? error : failed(error, "read");
          }
          if (control.signal.aborted) throw control.signal.reason;
          if (chunk === null || typeof chunk !== "object") {
            throw malformedAnswer(
              context,
              `answered doStream() with a "stream" whose read() resolved to ${describeValue(chunk)}, not a { done, value } result`,
            );
          }
          const { done, value } = chunk as ReadableStreamReadResult<AiSdkStreamPart>;
          if (done === true) break;
          control.touch();
          try {
            assembler.handle(value as AiSdkStreamPart);
          } catch (error) {
            throw error instanceof StreamErrorPart
              ? failed(error.error, "part")
              : unreadable(error, context, `sent stream part ${index}`);
          }
          if (events.length > 0) {
            yielded = true;
            for (let at = 0; at < events.length; at++) yield events[at]!;
            events.length = 0;
          }
        }
        completed = true;
        let message: AssembledMessage;
        try {
          message = assembler.finish();
        } catch (error) {
          throw unreadable(error, context, "ended its stream");
        }
        for (let index = 0; index < events.length; index++) yield events[index]!;
        events.length = 0;
        yield {
          type: "response",
          response: toResponse(message, result.response?.headers, attempt, started),
        };
        return;
      }
      let result: GenerateResult & { readonly response?: { readonly headers?: SharedV3Headers } };
      try {
        result = await Promise.race([model.doGenerate(options), control.aborted()]);
      } catch (error) {
        throw control.signal.aborted ? error : failed(error, "call");
      }
      completed = true;
      let message: AssembledMessage;
      try {
        message = decodeGenerateResult(result, context);
      } catch (error) {
        throw failed(error, "call");
      }
      yield { type: "usage", usage: message.usage };
      yield { type: "stop", stopReason: message.stopReason };
      yield {
        type: "response",
        response: toResponse(message, result.response?.headers, attempt, started),
      };
      return;
    } catch (error) {
      if (signal?.aborted) throw abortError(signal);
      if (control.timedOut) failure = timeoutError(settings, attempt, yielded, error);
      else if (error instanceof ProviderError) failure = error;
      else throw error;
    } finally {
      control.dispose();
      if (!completed) control.abort();
    }
    if (!failure.retryable || yielded || attempt >= settings.maxRetries) throw failure;
    const delayMs = retryDelay(attempt + 1, failureHeaders(failure));
    yield {
      type: "retry",
      attempt: attempt + 1,
      delayMs,
      ...(failure.status !== undefined ? { status: failure.status } : {}),
      message: failure.message,
    };
    await sleep(delayMs, signal);
  }
}

function timeoutError(
  settings: BridgeSettings,
  retries: number,
  midStream: boolean,
  cause: unknown,
): ProviderError {
  const after = retries === 0 ? "" : ` after ${retries} ${retries === 1 ? "retry" : "retries"}`;
  return new ProviderError({
    code: "provider_timeout",
    message: `${settings.context.label} made no progress (no answer to the call, or no stream part) for ${settings.timeoutMs} ms${after}. The server may be overloaded or unreachable: try again, or raise timeoutMs.`,
    endpoint: settings.context.endpoint,
    retryable: !midStream,
    cause,
  });
}

function toResponse(
  message: AssembledMessage,
  headers: SharedV3Headers | undefined,
  retries: number,
  started: number,
): ModelResponse {
  const response: ModelResponse = {
    model: message.model,
    message: { role: "assistant", content: message.content },
    stopReason: message.stopReason,
    usage: message.usage,
    retries,
    latencyMs: performance.now() - started,
  };
  if (message.id !== undefined) response.id = message.id;
  if (message.rawStopReason !== undefined) response.rawStopReason = message.rawStopReason;
  const requestId = headers?.["request-id"] ?? headers?.["x-request-id"];
  if (requestId !== undefined) response.requestId = requestId;
  return response;
}

/**
 * The reader of a checked `doStream()` answer's stream.
 *
 * @throws `ProviderError` `provider_malformed_response` when `getReader()` throws or gives
 *   something without a `read()` method (H27).
 */
function readerOf(
  result: StreamResult,
  context: BridgeContext,
): ReadableStreamDefaultReader<AiSdkStreamPart> {
  let reader: unknown;
  try {
    reader = result.stream.getReader();
  } catch (error) {
    throw malformedAnswer(
      context,
      `answered doStream() with a "stream" whose getReader() threw (${shortMessage(error)})`,
    );
  }
  if (
    reader === null ||
    typeof reader !== "object" ||
    typeof (reader as { read?: unknown }).read !== "function" ||
    typeof (reader as { cancel?: unknown }).cancel !== "function"
  ) {
    throw malformedAnswer(
      context,
      `answered doStream() with a "stream" whose getReader() gave ${describeValue(reader)}, not a reader with read() and cancel()`,
    );
  }
  return reader as ReadableStreamDefaultReader<AiSdkStreamPart>;
}

/**
 * A failure of the bridge on something the model handed over, other than a `ProviderError`
 * (a value the assembler cannot read): the malformed-answer error naming the model and the
 * part (H27), never a bare `TypeError`.
 */
function unreadable(error: unknown, context: BridgeContext, where: string): ProviderError {
  if (error instanceof ProviderError) return error;
  return malformedAnswer(
    context,
    `${where}, which the bridge could not read (${shortMessage(error)})`,
  );
}

/** An error's message, cut short: its first line, at most 200 characters. */
function shortMessage(error: unknown): string {
  const text = (error instanceof Error ? error.message : String(error)).split("\n")[0]!;
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}

/** Cancels the stream of a late `doStream()` answer, when it has one. */
function cancelUnread(late: unknown): void {
  const stream = (late as { stream?: unknown } | null | undefined)?.stream as
    | { cancel?: () => Promise<void> }
    | null
    | undefined;
  if (typeof stream?.cancel !== "function") return;
  Promise.resolve()
    .then(() => stream.cancel!())
    .catch(ignore);
}

function ignore(): void {
  // Cancelling a reader whose stream already failed may reject; nothing is waiting for it.
}
