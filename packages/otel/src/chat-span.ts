import type { TraceEvent } from "@lattice/core";
import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  type Tracer,
} from "@opentelemetry/api";
import {
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_RESPONSE_MODEL,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_LATTICE_MODEL_MESSAGE_COUNT,
  ATTR_LATTICE_MODEL_RETRIES,
  ATTR_LATTICE_MODEL_TOOL_CALLS,
  ATTR_LATTICE_PROVIDER_REQUEST_ID,
  ATTR_LATTICE_TURN,
} from "./attribute-names.js";
import { epochMillis } from "./epoch-millis.js";
import { failSpan } from "./fail-span.js";
import type { Ending } from "./span-ends.js";

type EventOf<T extends TraceEvent["type"]> = Extract<TraceEvent, { type: T }>;

/**
 * A model request's `chat` span. It starts (at the time the request was sent, with the
 * attributes a sampler may look at) with the other spans of the event loop's turn, or at once
 * when something needs it (a retry's event); the request's other facts and its reply (or
 * failure) are set as it ends, with the turn's other spans (see `SpanEnds`). Internal.
 */
export class ChatSpan implements Ending {
  readonly turn: number;
  private readonly sessionId: string;
  private readonly messageCount: number;
  private readonly maxTokens: number | undefined;
  private reply: EventOf<"model_request_finished"> | undefined;
  private failure: EventOf<"model_request_failed"> | undefined;
  /** The run's end cut the request: `error.type`, when the run failed. */
  private cutBy: string | undefined;
  private endTime: number | undefined;
  private started: Span | undefined;
  private ended = false;
  private readonly tracer: Tracer;
  private readonly spanName: string;
  private readonly startAttributes: Attributes;
  private readonly parent: Context;
  private readonly startTime: number;

  constructor(
    tracer: Tracer,
    spanName: string,
    startAttributes: Attributes,
    parent: Context,
    event: EventOf<"model_request_started">,
    sessionId: string,
    maxTokens: number | undefined,
  ) {
    this.tracer = tracer;
    this.spanName = spanName;
    this.startAttributes = startAttributes;
    this.parent = parent;
    this.startTime = event.time;
    this.turn = event.turn;
    this.sessionId = sessionId;
    this.messageCount = event.messageCount;
    this.maxTokens = event.maxTokens ?? maxTokens;
  }

  /** The reply came. */
  finished(event: EventOf<"model_request_finished">): void {
    this.reply = event;
    this.endTime = event.time;
  }

  /** The request failed for good. */
  failed(event: EventOf<"model_request_failed">): void {
    this.failure = event;
    this.endTime = event.time;
  }

  /** The run ended first (at `time`, monotonic); `errorType` when it failed. */
  cut(time: number, errorType: string | undefined): void {
    this.cutBy = errorType;
    this.endTime = time;
  }

  /** The span, started now if it has not started yet. */
  get span(): Span {
    if (this.started !== undefined) return this.started;
    const span = this.tracer.startSpan(
      this.spanName,
      {
        kind: SpanKind.CLIENT,
        startTime: epochMillis(this.startTime),
        attributes: this.startAttributes,
      },
      this.parent,
    );
    this.started = span;
    return span;
  }

  end(): void {
    const span = this.span;
    const endTime = this.endTime;
    if (endTime === undefined || this.ended) return;
    this.ended = true;
    span.setAttribute(ATTR_GEN_AI_CONVERSATION_ID, this.sessionId);
    span.setAttribute(ATTR_LATTICE_TURN, this.turn);
    span.setAttribute(ATTR_LATTICE_MODEL_MESSAGE_COUNT, this.messageCount);
    if (this.maxTokens !== undefined)
      span.setAttribute(ATTR_GEN_AI_REQUEST_MAX_TOKENS, this.maxTokens);
    const reply = this.reply;
    const failure = this.failure;
    if (reply !== undefined) {
      const usage = reply.usage;
      span.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [reply.stopReason]);
      // Every input token, the cached ones included (Lattice's inputTokens leaves them out).
      span.setAttribute(
        ATTR_GEN_AI_USAGE_INPUT_TOKENS,
        usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
      );
      span.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.outputTokens);
      span.setAttribute(ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cacheReadInputTokens);
      span.setAttribute(
        ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
        usage.cacheCreationInputTokens,
      );
      span.setAttribute(ATTR_LATTICE_MODEL_RETRIES, reply.retries);
      span.setAttribute(ATTR_LATTICE_MODEL_TOOL_CALLS, reply.toolCalls);
      if (reply.responseId !== undefined)
        span.setAttribute(ATTR_GEN_AI_RESPONSE_ID, reply.responseId);
      if (reply.responseModel !== undefined)
        span.setAttribute(ATTR_GEN_AI_RESPONSE_MODEL, reply.responseModel);
      if (reply.requestId !== undefined)
        span.setAttribute(ATTR_LATTICE_PROVIDER_REQUEST_ID, reply.requestId);
    } else if (failure !== undefined) {
      const status = failure.status;
      if (status !== undefined) span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
      failSpan(
        span,
        status !== undefined ? String(status) : "model_request_failed",
        failure.message,
      );
    } else if (this.cutBy !== undefined) {
      failSpan(span, this.cutBy, `the run ended (${this.cutBy})`);
    }
    span.end(epochMillis(endTime));
  }
}
