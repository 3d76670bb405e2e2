import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  type Tracer,
} from "@opentelemetry/api";
import {
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_LATTICE_BATCH_INDEX,
  ATTR_LATTICE_BATCH_PLAN,
  ATTR_LATTICE_BATCH_RUN_INDEX,
  ATTR_LATTICE_TOOL_CONCURRENCY_SAFE,
  ATTR_LATTICE_TOOL_DURATION_MS,
  ATTR_LATTICE_TOOL_IN_FLIGHT,
  ATTR_LATTICE_TOOL_IS_ERROR,
  ATTR_LATTICE_TOOL_KIND,
  ATTR_LATTICE_TOOL_QUEUED_MS,
  ATTR_LATTICE_TOOL_STATUS,
  ATTR_LATTICE_TURN,
  EVENT_LATTICE_TOOL_QUEUED,
  GEN_AI_OPERATION_EXECUTE_TOOL,
} from "./attribute-names.js";
import { epochMillis } from "./epoch-millis.js";
import { failSpan } from "./fail-span.js";
import type { Ending } from "./span-ends.js";

/** The human words for a tool status that is a failure, in the span's status message. */
const TOOL_FAILURES: { readonly [status: string]: string } = {
  failed: "the handler threw or returned an error result",
  invalid_input: "the input failed the tool's schema",
  unknown_tool: "the model called a tool the agent does not have",
  denied: "denied by the beforeToolCall hook or an approval decision",
  refused: "the batch policy refused the batch",
  policy_error: "the batch policy failed",
  cancelled: "the run was aborted before the call started",
  abandoned: "the run was aborted and the handler did not stop in time",
  timed_out: "the call ran past its time limit",
};

/** How a call's span ends: its status, and the error when the run's end cut it. */
interface ToolEnd {
  readonly time: number;
  readonly status: string;
  readonly isError?: boolean;
  readonly durationMs?: number;
  /** The run's end cut the call: `error.type` (`"aborted"`), or none (`"unfinished"`). */
  readonly cutBy?: string | undefined;
}

/** A span event that came before the span started: added when it starts. */
interface EarlyEvent {
  readonly name: string;
  readonly attributes: Attributes;
  readonly time: number;
}

/**
 * A call's `execute_tool` span (O2a). It covers the handler's run: it starts at the time the
 * handler started (with the attributes a sampler may look at), with the other spans of the
 * event loop's turn, or at once when something needs it (a child run); the wait before is
 * `lattice.tool.queued_ms`, and a `lattice.tool.queued` event at the queue time. A call whose
 * handler never started (refused, denied, an unknown tool, an invalid input, cancelled, waiting
 * for an approval when the run paused) gets a span of no length at the time Lattice settled it.
 * Events about the call that come before its span starts (a `beforeToolCall` hook, an approval
 * request) are kept and added when it does, at their own times.
 *
 * What the call's later events say (the plan, the start, the result) is kept in plain fields
 * and set on the span as it ends, in the order the events came: a processor reads a span's
 * attributes when it ends, and the SDK's work runs in one pass with the turn's other spans
 * (see `SpanEnds`). Internal.
 */
export class ToolSpan implements Ending {
  /** The call's tool_use id. */
  readonly id: string;
  readonly name: string;
  /** The run's context: `trace.setSpan(parent, span)` makes a child run a child of this call. */
  readonly parent: Context;
  /** Whether the observer shares it across runs (an agent tool's call, which starts child runs). */
  readonly shared: boolean;
  private readonly kind: string;
  private readonly turn: number;
  private readonly index: number;
  private readonly queuedAt: number;
  private plan: string | undefined;
  private concurrent = false;
  private runIndex = 0;
  /** When the handler started (monotonic). */
  private startedAt: number | undefined;
  private inFlight = 0;
  /** When the span started (monotonic). */
  private startTime: number;
  /** Events that came before the span started. */
  private early: EarlyEvent[] | undefined;
  private ending: ToolEnd | undefined;
  private started: Span | undefined;
  private ended = false;
  private readonly tracer: Tracer;
  private readonly spanName: string;

  constructor(
    tracer: Tracer,
    spanName: string,
    event: {
      readonly id: string;
      readonly name: string;
      readonly kind: string;
      readonly turn: number;
      readonly index: number;
      readonly time: number;
    },
    parent: Context,
  ) {
    this.tracer = tracer;
    this.spanName = spanName;
    this.id = event.id;
    this.name = event.name;
    this.kind = event.kind;
    this.turn = event.turn;
    this.index = event.index;
    this.queuedAt = event.time;
    this.startTime = event.time;
    this.parent = parent;
    this.shared = event.kind === "agent_tool";
  }

  /** The batch's plan (JSON, shared by the batch's calls) and the call's place in it. */
  planned(plan: string, runIndex: number, concurrent: boolean): void {
    this.plan = plan;
    this.runIndex = runIndex;
    this.concurrent = concurrent;
  }

  /** The handler started at `time` (monotonic), with `inFlight` handlers running. */
  handlerStarted(time: number, inFlight: number): void {
    this.startedAt = time;
    this.inFlight = inFlight;
  }

  /** Adds an event at `time` (monotonic) to the span, or, until it starts, keeps it for then. */
  addEvent(name: string, attributes: Attributes, time: number): void {
    const started = this.started;
    if (started !== undefined) {
      started.addEvent(name, attributes, epochMillis(time));
      return;
    }
    if (this.early === undefined) this.early = [];
    this.early.push({ name, attributes, time });
  }

  /** The call finished (or the run's end cut it): the span ends with the turn's others. */
  finished(ending: ToolEnd): void {
    // The first ending stands: the run's end does not overwrite a call's own.
    if (this.ending === undefined) this.ending = ending;
  }

  /** The span, started now if it has not started yet. */
  get span(): Span {
    return this.start();
  }

  /**
   * Starts the span now, if it has not started yet: at the handler's start, or, for a call
   * that never ran, at its end (or, asked for before either, at the queue time).
   */
  start(): Span {
    if (this.started !== undefined) return this.started;
    const startTime = this.startedAt ?? this.ending?.time ?? this.queuedAt;
    this.startTime = startTime;
    const span = this.tracer.startSpan(
      this.spanName,
      {
        kind: SpanKind.INTERNAL,
        startTime: epochMillis(startTime),
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
          [ATTR_GEN_AI_TOOL_NAME]: this.name,
        },
      },
      this.parent,
    );
    this.started = span;
    span.addEvent(EVENT_LATTICE_TOOL_QUEUED, epochMillis(this.queuedAt));
    const early = this.early;
    if (early !== undefined) {
      this.early = undefined;
      for (const event of early)
        span.addEvent(event.name, event.attributes, epochMillis(event.time));
    }
    return span;
  }

  end(): void {
    const span = this.span;
    const ending = this.ending;
    if (ending === undefined || this.ended) return;
    this.ended = true;
    span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ID, this.id);
    span.setAttribute(ATTR_GEN_AI_TOOL_TYPE, this.kind === "mcp" ? "extension" : "function");
    span.setAttribute(ATTR_LATTICE_TOOL_KIND, this.kind);
    span.setAttribute(ATTR_LATTICE_TURN, this.turn);
    span.setAttribute(ATTR_LATTICE_BATCH_INDEX, this.index);
    if (this.plan !== undefined) {
      span.setAttribute(ATTR_LATTICE_TOOL_CONCURRENCY_SAFE, this.concurrent);
      span.setAttribute(ATTR_LATTICE_BATCH_RUN_INDEX, this.runIndex);
      span.setAttribute(ATTR_LATTICE_BATCH_PLAN, this.plan);
    }
    // The wait before the span: until the handler started, or (a call that never ran) until
    // Lattice settled it.
    span.setAttribute(ATTR_LATTICE_TOOL_QUEUED_MS, this.startTime - this.queuedAt);
    if (this.startedAt !== undefined) span.setAttribute(ATTR_LATTICE_TOOL_IN_FLIGHT, this.inFlight);
    const status = ending.status;
    span.setAttribute(ATTR_LATTICE_TOOL_STATUS, status);
    if (ending.cutBy !== undefined) {
      failSpan(span, ending.cutBy, `the run ended (${ending.cutBy})`);
    } else if (ending.isError !== undefined) {
      span.setAttribute(ATTR_LATTICE_TOOL_IS_ERROR, ending.isError);
      span.setAttribute(ATTR_LATTICE_TOOL_DURATION_MS, ending.durationMs ?? 0);
      if (status !== "completed") {
        failSpan(span, status, TOOL_FAILURES[status] ?? status);
      } else if (ending.isError) {
        failSpan(span, "tool_error", "the tool returned an is_error result");
      }
    }
    span.end(epochMillis(ending.time));
  }
}
