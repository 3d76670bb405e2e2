import type { TraceEvent } from "@lattice/core";
import {
  type Attributes,
  type Context,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MAX_TOKENS,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_RESPONSE_FINISH_REASONS,
  ATTR_GEN_AI_RESPONSE_ID,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_TOOL_TYPE,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_LATTICE_BATCH_INDEX,
  ATTR_LATTICE_BATCH_PLAN,
  ATTR_LATTICE_BATCH_RUN_INDEX,
  ATTR_LATTICE_MODEL_MESSAGE_COUNT,
  ATTR_LATTICE_MODEL_RETRIES,
  ATTR_LATTICE_MODEL_TOOL_CALLS,
  ATTR_LATTICE_RUN_NUM_TURNS,
  ATTR_LATTICE_RUN_SUBTYPE,
  ATTR_LATTICE_TOOL_CONCURRENCY_SAFE,
  ATTR_LATTICE_TOOL_DURATION_MS,
  ATTR_LATTICE_TOOL_IN_FLIGHT,
  ATTR_LATTICE_TOOL_IS_ERROR,
  ATTR_LATTICE_TOOL_KIND,
  ATTR_LATTICE_TOOL_QUEUED_MS,
  ATTR_LATTICE_TOOL_STATUS,
  ATTR_LATTICE_TURN,
  EVENT_LATTICE_APPROVAL_DECIDED,
  EVENT_LATTICE_APPROVAL_REQUESTED,
  EVENT_LATTICE_BATCH_PLANNED,
  EVENT_LATTICE_BATCH_POLICY,
  EVENT_LATTICE_HOOK,
  EVENT_LATTICE_MODEL_RETRY,
  EVENT_LATTICE_RUN_ABORTED,
  EVENT_LATTICE_TOOL_PROGRESS,
  EVENT_LATTICE_TOOL_SETTLED_LATE,
  EVENT_LATTICE_TOOL_STARTED,
  GEN_AI_OPERATION_CHAT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
} from "./attribute-names.js";

type EventOf<T extends TraceEvent["type"]> = Extract<TraceEvent, { type: T }>;

/** A trace event's monotonic `time` (`performance.now()`) as epoch milliseconds. */
export function epochMillis(time: number): number {
  return performance.timeOrigin + time;
}

/** What the spans of one run share: the settings of the observer and the run's facts. */
export interface RunSpanSettings {
  readonly tracer: Tracer;
  readonly recordContent: boolean;
  readonly model: string;
  readonly providerName: string | undefined;
  readonly maxTokens: number | undefined;
  readonly sessionId: string;
  /** Called when a tool span opens or closes, so that a child run can find its parent call. */
  readonly toolOpened: (id: string, tool: ToolSpan) => void;
  readonly toolClosed: (id: string, tool: ToolSpan) => void;
}

/** An open `execute_tool` span. */
export interface ToolSpan {
  readonly span: Span;
  readonly name: string;
  readonly queuedAt: number;
  /** The run's context: `trace.setSpan(parent, span)` makes a child run a child of this call. */
  readonly parent: Context;
}

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

/**
 * The spans of one run: its `invoke_agent` span, and the `chat` and `execute_tool` spans of
 * its model and tool calls, built from the run's trace events. Internal.
 */
export class RunSpans {
  readonly span: Span;
  readonly context: Context;
  private readonly settings: RunSpanSettings;
  private readonly chats = new Map<number, Span>();
  private readonly tools = new Map<string, ToolSpan>();
  /** The current batch's calls by index, for the plan's per-call facts. */
  private batch: (ToolSpan | undefined)[] = [];
  /** `chat {model}`: the same for every model call of the run. */
  private readonly chatName: string;

  constructor(span: Span, parent: Context, settings: RunSpanSettings) {
    this.span = span;
    this.context = trace.setSpan(parent, span);
    this.settings = settings;
    this.chatName = `${GEN_AI_OPERATION_CHAT} ${settings.model}`;
  }

  /** Handles one of the run's events; `true` when the run ended. */
  handle(event: TraceEvent): boolean {
    switch (event.type) {
      case "model_request_started":
        this.modelStarted(event);
        return false;
      case "model_retry":
        this.modelRetry(event);
        return false;
      case "model_request_finished":
        this.modelFinished(event);
        return false;
      case "model_request_failed":
        this.modelFailed(event);
        return false;
      case "tool_call_queued":
        this.toolQueued(event);
        return false;
      case "batch_policy":
        this.batchPolicy(event);
        return false;
      case "batch_planned":
        this.batchPlanned(event);
        return false;
      case "tool_call_started":
        this.toolStarted(event);
        return false;
      case "tool_call_finished":
        this.toolFinished(event);
        return false;
      case "tool_call_settled_late":
        this.span.addEvent(
          EVENT_LATTICE_TOOL_SETTLED_LATE,
          {
            [ATTR_GEN_AI_TOOL_CALL_ID]: event.id,
            [ATTR_GEN_AI_TOOL_NAME]: event.name,
            [ATTR_LATTICE_TOOL_STATUS]: event.givenStatus,
            "lattice.tool.late_is_error": event.lateIsError,
            [ATTR_LATTICE_TOOL_DURATION_MS]: event.durationMs,
          },
          epochMillis(event.time),
        );
        return false;
      case "hook":
        this.hook(event);
        return false;
      case "tool_progress":
        this.toolProgress(event);
        return false;
      case "approval_requested":
        this.approvalRequested(event);
        return false;
      case "approval_decided":
        this.approvalDecided(event);
        return false;
      case "run_finished":
        this.runFinished(event);
        return true;
      case "run_aborted":
        this.runAborted(event);
        return true;
      default:
        return false;
    }
  }

  /** Ends every span of the run still open, with `lattice.tool.status` = `status` on tools. */
  endOpen(time: number, status: string, errorType?: string): void {
    const end = epochMillis(time);
    for (const chat of this.chats.values()) {
      if (errorType !== undefined) fail(chat, errorType, `the run ended (${errorType})`);
      chat.end(end);
    }
    this.chats.clear();
    for (const [id, tool] of this.tools) {
      tool.span.setAttribute(ATTR_LATTICE_TOOL_STATUS, status);
      if (errorType !== undefined) fail(tool.span, errorType, `the run ended (${errorType})`);
      tool.span.end(end);
      this.settings.toolClosed(id, tool);
    }
    this.tools.clear();
    this.batch = [];
  }

  /** Records `approval_decided` (which core emits before the resumed run's `run_started`). */
  approvalDecided(event: EventOf<"approval_decided">): void {
    let approved = 0;
    let edited = 0;
    for (const decision of event.decisions) {
      if (decision.approved) approved++;
      if (decision.edited === true) edited++;
    }
    this.span.addEvent(
      EVENT_LATTICE_APPROVAL_DECIDED,
      {
        "lattice.approval.approved_count": approved,
        "lattice.approval.denied_count": event.decisions.length - approved,
        "lattice.approval.edited_count": edited,
      },
      epochMillis(event.time),
    );
  }

  private modelStarted(event: EventOf<"model_request_started">): void {
    const { model, providerName, maxTokens, sessionId } = this.settings;
    // What a sampler may look at goes in at the start (the GenAI conventions' "sampling
    // relevant" attributes); the rest is set on the span itself: the SDK copies start
    // attributes twice before setting them, a direct setAttribute is one check and one store.
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_CHAT,
      [ATTR_GEN_AI_REQUEST_MODEL]: model,
    };
    if (providerName !== undefined) attributes[ATTR_GEN_AI_PROVIDER_NAME] = providerName;
    const span = this.settings.tracer.startSpan(
      this.chatName,
      { kind: SpanKind.CLIENT, startTime: epochMillis(event.time), attributes },
      this.context,
    );
    span.setAttribute(ATTR_GEN_AI_CONVERSATION_ID, sessionId);
    span.setAttribute(ATTR_LATTICE_TURN, event.turn);
    span.setAttribute(ATTR_LATTICE_MODEL_MESSAGE_COUNT, event.messageCount);
    const requestMaxTokens = event.maxTokens ?? maxTokens;
    if (requestMaxTokens !== undefined) {
      span.setAttribute(ATTR_GEN_AI_REQUEST_MAX_TOKENS, requestMaxTokens);
    }
    this.chats.set(event.turn, span);
  }

  private modelRetry(event: EventOf<"model_retry">): void {
    const chat = this.chats.get(event.turn);
    if (chat === undefined) return;
    const attributes: Attributes = {
      "lattice.retry.attempt": event.attempt,
      "lattice.retry.delay_ms": event.delayMs,
      "lattice.retry.reason": event.message,
    };
    if (event.status !== undefined) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = event.status;
    chat.addEvent(EVENT_LATTICE_MODEL_RETRY, attributes, epochMillis(event.time));
  }

  private modelFinished(event: EventOf<"model_request_finished">): void {
    const chat = this.chats.get(event.turn);
    if (chat === undefined) return;
    this.chats.delete(event.turn);
    const usage = event.usage;
    chat.setAttribute(ATTR_GEN_AI_RESPONSE_FINISH_REASONS, [event.stopReason]);
    chat.setAttribute(ATTR_GEN_AI_USAGE_INPUT_TOKENS, usage.inputTokens);
    chat.setAttribute(ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, usage.outputTokens);
    chat.setAttribute(ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS, usage.cacheReadInputTokens);
    chat.setAttribute(
      ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
      usage.cacheCreationInputTokens,
    );
    chat.setAttribute(ATTR_LATTICE_MODEL_RETRIES, event.retries);
    chat.setAttribute(ATTR_LATTICE_MODEL_TOOL_CALLS, event.toolCalls);
    if (event.requestId !== undefined) chat.setAttribute(ATTR_GEN_AI_RESPONSE_ID, event.requestId);
    chat.end(epochMillis(event.time));
  }

  private modelFailed(event: EventOf<"model_request_failed">): void {
    const chat = this.chats.get(event.turn);
    if (chat === undefined) return;
    this.chats.delete(event.turn);
    if (event.status !== undefined) chat.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, event.status);
    fail(
      chat,
      event.status !== undefined ? String(event.status) : "model_request_failed",
      event.message,
    );
    chat.end(epochMillis(event.time));
  }

  private toolQueued(event: EventOf<"tool_call_queued">): void {
    if (event.index === 0) this.batch = [];
    const span = this.settings.tracer.startSpan(
      `${GEN_AI_OPERATION_EXECUTE_TOOL} ${event.name}`,
      {
        kind: SpanKind.INTERNAL,
        startTime: epochMillis(event.time),
        attributes: {
          [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_EXECUTE_TOOL,
          [ATTR_GEN_AI_TOOL_NAME]: event.name,
        },
      },
      this.context,
    );
    span.setAttribute(ATTR_GEN_AI_TOOL_CALL_ID, event.id);
    span.setAttribute(ATTR_GEN_AI_TOOL_TYPE, event.kind === "mcp" ? "extension" : "function");
    span.setAttribute(ATTR_LATTICE_TOOL_KIND, event.kind);
    span.setAttribute(ATTR_LATTICE_TURN, event.turn);
    span.setAttribute(ATTR_LATTICE_BATCH_INDEX, event.index);
    const tool: ToolSpan = {
      span,
      name: event.name,
      queuedAt: event.time,
      parent: this.context,
    };
    this.tools.set(event.id, tool);
    this.batch[event.index] = tool;
    this.settings.toolOpened(event.id, tool);
  }

  private batchPolicy(event: EventOf<"batch_policy">): void {
    const attributes: Attributes = { [ATTR_LATTICE_TURN]: event.turn };
    const decision = event.decision;
    if (decision !== undefined) {
      attributes["lattice.policy.allowed"] = decision.allowed;
      if (!decision.allowed) {
        attributes["lattice.policy.code"] = decision.code;
        attributes["lattice.policy.message"] = decision.message;
        if (decision.conflictingToolCallIds !== undefined) {
          attributes["lattice.policy.conflicting_tool_call_ids"] = [
            ...decision.conflictingToolCallIds,
          ];
        }
      }
    }
    if (event.error !== undefined) {
      attributes["lattice.policy.allowed"] = false;
      attributes[ATTR_ERROR_TYPE] = "policy_error";
      attributes["lattice.policy.error"] = event.error.message;
    }
    this.span.addEvent(EVENT_LATTICE_BATCH_POLICY, attributes, epochMillis(event.time));
  }

  private batchPlanned(event: EventOf<"batch_planned">): void {
    // Serialized once per batch; every call's span shares the one string.
    const plan = JSON.stringify(event.plan);
    this.span.addEvent(
      EVENT_LATTICE_BATCH_PLANNED,
      { [ATTR_LATTICE_TURN]: event.turn, [ATTR_LATTICE_BATCH_PLAN]: plan },
      epochMillis(event.time),
    );
    const runs = event.plan.runs;
    const batch = this.batch;
    for (let runIndex = 0; runIndex < runs.length; runIndex++) {
      const run = runs[runIndex]!;
      const indices = run.indices;
      for (let position = 0; position < indices.length; position++) {
        const span = batch[indices[position]!]?.span;
        if (span === undefined) continue;
        span.setAttribute(ATTR_LATTICE_TOOL_CONCURRENCY_SAFE, run.concurrent);
        span.setAttribute(ATTR_LATTICE_BATCH_RUN_INDEX, runIndex);
        span.setAttribute(ATTR_LATTICE_BATCH_PLAN, plan);
      }
    }
  }

  private toolStarted(event: EventOf<"tool_call_started">): void {
    const tool = this.tools.get(event.id);
    if (tool === undefined) return;
    const span = tool.span;
    span.setAttribute(ATTR_LATTICE_TOOL_QUEUED_MS, event.time - tool.queuedAt);
    span.setAttribute(ATTR_LATTICE_TOOL_IN_FLIGHT, event.inFlight);
    span.addEvent(EVENT_LATTICE_TOOL_STARTED, epochMillis(event.time));
  }

  private toolFinished(event: EventOf<"tool_call_finished">): void {
    const tool = this.tools.get(event.id);
    if (tool === undefined) return;
    this.tools.delete(event.id);
    const span = tool.span;
    span.setAttribute(ATTR_LATTICE_TOOL_STATUS, event.status);
    span.setAttribute(ATTR_LATTICE_TOOL_IS_ERROR, event.isError);
    span.setAttribute(ATTR_LATTICE_TOOL_DURATION_MS, event.durationMs);
    if (event.status !== "completed") {
      fail(span, event.status, TOOL_FAILURES[event.status] ?? event.status);
    } else if (event.isError) {
      fail(span, "tool_error", "the tool returned an is_error result");
    }
    span.end(epochMillis(event.time));
    this.settings.toolClosed(event.id, tool);
  }

  private hook(event: EventOf<"hook">): void {
    const attributes: Attributes = {
      "lattice.hook.name": event.hook,
      [ATTR_GEN_AI_TOOL_CALL_ID]: event.toolUseId,
      "lattice.hook.duration_ms": event.durationMs,
    };
    if (event.error !== undefined) {
      attributes[ATTR_ERROR_TYPE] = "hook_error";
      attributes["lattice.hook.error"] = event.error;
    }
    const target = this.tools.get(event.toolUseId)?.span ?? this.span;
    target.addEvent(EVENT_LATTICE_HOOK, attributes, epochMillis(event.time));
  }

  private toolProgress(event: EventOf<"tool_progress">): void {
    const tool = this.tools.get(event.toolUseId);
    if (tool === undefined) return;
    const attributes: Attributes = { "lattice.progress.value": event.progress };
    if (event.total !== undefined) attributes["lattice.progress.total"] = event.total;
    if (this.settings.recordContent && event.message !== undefined) {
      attributes["lattice.progress.message"] = event.message;
    }
    tool.span.addEvent(EVENT_LATTICE_TOOL_PROGRESS, attributes, epochMillis(event.time));
  }

  private approvalRequested(event: EventOf<"approval_requested">): void {
    const time = epochMillis(event.time);
    // The approval ids are left out on purpose: whoever holds one can decide the call.
    for (const approval of event.approvals) {
      const attributes: Attributes = {
        [ATTR_GEN_AI_TOOL_CALL_ID]: approval.toolUseId,
        [ATTR_GEN_AI_TOOL_NAME]: approval.toolName,
      };
      if (this.settings.recordContent) {
        attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = JSON.stringify(approval.input);
      }
      const target = this.tools.get(approval.toolUseId)?.span ?? this.span;
      target.addEvent(EVENT_LATTICE_APPROVAL_REQUESTED, attributes, time);
    }
  }

  private runFinished(event: EventOf<"run_finished">): void {
    const interrupted = event.subtype === "interrupted";
    this.endOpen(event.time, interrupted ? "awaiting_approval" : "unfinished");
    const usage = event.usage;
    this.span.setAttributes({
      [ATTR_LATTICE_RUN_SUBTYPE]: event.subtype,
      [ATTR_LATTICE_RUN_NUM_TURNS]: event.numTurns,
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]: usage.inputTokens,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.outputTokens,
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cacheReadInputTokens,
      [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: usage.cacheCreationInputTokens,
    });
    if (event.subtype !== "success" && !interrupted) {
      fail(this.span, event.subtype, `the run ended with ${event.subtype}`);
    }
    this.span.end(epochMillis(event.time));
  }

  private runAborted(event: EventOf<"run_aborted">): void {
    this.endOpen(event.time, "aborted", "aborted");
    this.span.setAttributes({
      [ATTR_LATTICE_RUN_SUBTYPE]: "aborted",
      [ATTR_LATTICE_RUN_NUM_TURNS]: event.numTurns,
    });
    this.span.addEvent(EVENT_LATTICE_RUN_ABORTED, undefined, epochMillis(event.time));
    fail(this.span, "aborted", "the run was aborted through its signal");
    this.span.end(epochMillis(event.time));
  }
}

/** Marks a span failed: `error.type` and status ERROR. */
function fail(span: Span, errorType: string, message: string): void {
  span.setAttribute(ATTR_ERROR_TYPE, errorType);
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}
