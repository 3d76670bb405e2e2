import type { TraceEvent } from "@lattice/core";
import { type Attributes, type Context, type Span, type Tracer, trace } from "@opentelemetry/api";
import {
  ATTR_ERROR_TYPE,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_OUTPUT_TYPE,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_GEN_AI_TOOL_CALL_ARGUMENTS,
  ATTR_GEN_AI_TOOL_CALL_ID,
  ATTR_GEN_AI_TOOL_NAME,
  ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_LATTICE_COMPACTION,
  ATTR_LATTICE_OUTPUT_MODE,
  ATTR_LATTICE_RUN_NEXT_STEP,
  ATTR_LATTICE_RUN_NUM_TURNS,
  ATTR_LATTICE_RUN_STEP,
  ATTR_LATTICE_RUN_SUBTYPE,
  ATTR_LATTICE_TOOL_DURATION_MS,
  ATTR_LATTICE_TOOL_STATUS,
  ATTR_LATTICE_TURN,
  ATTR_LATTICE_USAGE_COST_USD,
  EVENT_LATTICE_APPROVAL_DECIDED,
  EVENT_LATTICE_APPROVAL_REQUESTED,
  EVENT_LATTICE_BATCH_POLICY,
  EVENT_LATTICE_COMPACTION,
  EVENT_LATTICE_GUARDRAIL,
  EVENT_LATTICE_HOOK,
  EVENT_LATTICE_MODEL_FALLBACK,
  EVENT_LATTICE_MODEL_RETRY,
  EVENT_LATTICE_RUN_ABORTED,
  EVENT_LATTICE_TOOL_PROGRESS,
  EVENT_LATTICE_TOOL_SETTLED_LATE,
  GEN_AI_OPERATION_CHAT,
  GEN_AI_OPERATION_EXECUTE_TOOL,
} from "./attribute-names.js";
import { ChatSpan } from "./chat-span.js";
import { epochMillis } from "./epoch-millis.js";
import { failSpan } from "./fail-span.js";
import type { SpanEnds } from "./span-ends.js";
import { ToolSpan } from "./tool-span.js";

type EventOf<T extends TraceEvent["type"]> = Extract<TraceEvent, { type: T }>;

/** What the spans of one run share: the settings of the observer and the run's facts. */
export interface RunSpanSettings {
  readonly tracer: Tracer;
  readonly recordContent: boolean;
  readonly model: string;
  readonly providerName: string | undefined;
  readonly maxTokens: number | undefined;
  readonly sessionId: string;
  /** Where calls' spans wait to be started, and ended, with the others of the loop's turn. */
  readonly ends: SpanEnds;
  /**
   * Called when the span of an agent tool's call (`kind: "agent_tool"`, the calls that start
   * child runs) opens or closes, so that a child run finds its parent call at a map lookup.
   */
  readonly toolOpened: (id: string, tool: ToolSpan) => void;
  readonly toolClosed: (id: string, tool: ToolSpan) => void;
}

/**
 * The spans of one run: its `invoke_agent` span, and the `chat` and `execute_tool` spans of
 * its model and tool calls, built from the run's trace events. Internal.
 *
 * A run's tool calls come in batches, one at a time, and every per-call event of the
 * scheduler carries the call's index in its batch: the open calls are kept by index (an
 * array lookup and an id check per event), and a map by id is built only when an event
 * names a call by id alone (hooks, progress, approvals, a child run's parent).
 */
export class RunSpans {
  readonly span: Span;
  readonly context: Context;
  private readonly settings: RunSpanSettings;
  /** The open `chat` span (a run sends one model request at a time). */
  private chat: ChatSpan | undefined;
  /** The current batch's open calls by index (a finished call's slot is emptied). */
  private batch: (ToolSpan | undefined)[] = [];
  /** Open calls of earlier batches (none unless a trace lost a call's end). */
  private earlier: ToolSpan[] | undefined;
  /** The open calls by id, built on the first lookup by id, then kept up to date. */
  private byId: Map<string, ToolSpan> | undefined;
  /** `chat {model}`: the same for every model call of the run. */
  private readonly chatName: string;
  /** `execute_tool {name}` by tool name: one string per tool, not one per call. */
  private readonly toolNames = new Map<string, string>();

  constructor(span: Span, parent: Context, settings: RunSpanSettings) {
    this.span = span;
    this.context = trace.setSpan(parent, span);
    this.settings = settings;
    this.chatName = `${GEN_AI_OPERATION_CHAT} ${settings.model}`;
  }

  /** Handles one of the run's events; `true` when the run ended. */
  handle(event: TraceEvent): boolean {
    // The per-call events first: they are most of a run's events.
    switch (event.type) {
      case "tool_call_started":
        this.toolStarted(event);
        return false;
      case "tool_call_finished":
        this.toolFinished(event);
        return false;
      case "tool_call_queued":
        this.toolQueued(event);
        return false;
      case "model_request_started":
        this.modelStarted(event);
        return false;
      case "model_request_finished": {
        const chat = this.chatOf(event.turn);
        if (chat !== undefined) {
          chat.finished(event);
          this.settings.ends.add(chat);
        }
        return false;
      }
      case "batch_planned":
        this.batchPlanned(event);
        return false;
      case "model_retry":
        this.modelRetry(event);
        return false;
      case "model_request_failed": {
        const chat = this.chatOf(event.turn);
        if (chat !== undefined) {
          chat.failed(event);
          this.settings.ends.add(chat);
        }
        return false;
      }
      case "batch_policy":
        this.batchPolicy(event);
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
      case "run_step_finished":
        this.stepFinished(event);
        return true;
      case "model_fallback":
        this.modelFallback(event);
        return false;
      case "guardrail":
        this.guardrail(event);
        return false;
      case "compaction":
        this.span.addEvent(
          EVENT_LATTICE_COMPACTION,
          {
            [ATTR_LATTICE_TURN]: event.turn,
            "lattice.compaction.strategy": event.strategy,
            "lattice.compaction.trigger": event.trigger,
            "lattice.compaction.messages_replaced": event.messagesReplaced,
            "lattice.compaction.tool_results_cleared": event.toolResultsCleared,
            "lattice.compaction.tokens_before": event.tokensBefore,
            "lattice.compaction.tokens_after": event.tokensAfter,
          },
          epochMillis(event.time),
        );
        return false;
      default:
        return false;
    }
  }

  /** The open call with this tool_use id, or `undefined`. */
  openTool(id: string): ToolSpan | undefined {
    let byId = this.byId;
    if (byId === undefined) {
      byId = new Map();
      for (const tool of this.batch) if (tool !== undefined) byId.set(tool.id, tool);
      if (this.earlier !== undefined) for (const tool of this.earlier) byId.set(tool.id, tool);
      this.byId = byId;
    }
    return byId.get(id);
  }

  /**
   * Ends every span of the run still open at `time` (monotonic), with `lattice.tool.status`
   * = `status` on tools, and `error.type` = `errorType` when the run failed.
   */
  endOpen(time: number, status: string, errorType?: string): void {
    const ends = this.settings.ends;
    const chat = this.chat;
    if (chat !== undefined) {
      chat.cut(time, errorType);
      ends.add(chat);
      this.chat = undefined;
    }
    const open = this.earlier !== undefined ? [...this.earlier, ...this.batch] : this.batch;
    for (const tool of open) {
      if (tool === undefined) continue;
      tool.finished({ time, status, cutBy: errorType });
      ends.add(tool);
      if (tool.shared) this.settings.toolClosed(tool.id, tool);
    }
    this.batch = [];
    this.earlier = undefined;
    this.byId = undefined;
  }

  /**
   * Ends the run's span at `time` (monotonic), after its calls' and every other span waiting:
   * when `run()` returns, its spans have all reached the span processor.
   */
  end(time: number): void {
    this.settings.ends.flush();
    try {
      this.span.end(epochMillis(time));
    } catch {
      // A span processor's or exporter's fault: it costs this span, never the run.
    }
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

  /** The open call of a per-call event: its batch slot, or (another batch's call) by id. */
  private callOf(index: number, id: string): ToolSpan | undefined {
    const tool = this.batch[index];
    return tool !== undefined && tool.id === id ? tool : this.openTool(id);
  }

  /** The open `chat` span of this turn, or `undefined`. */
  private chatOf(turn: number): ChatSpan | undefined {
    const chat = this.chat;
    if (chat === undefined || chat.turn !== turn) return undefined;
    this.chat = undefined;
    return chat;
  }

  private modelStarted(event: EventOf<"model_request_started">): void {
    const { providerName, maxTokens, sessionId } = this.settings;
    // What a sampler may look at goes in at the start (the GenAI conventions' "sampling
    // relevant" attributes); the rest is set as the span ends (see ChatSpan).
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_CHAT,
      [ATTR_GEN_AI_REQUEST_MODEL]: event.model ?? this.settings.model,
    };
    if (providerName !== undefined) attributes[ATTR_GEN_AI_PROVIDER_NAME] = providerName;
    if (event.outputMode !== undefined) {
      attributes[ATTR_GEN_AI_OUTPUT_TYPE] = "json";
      attributes[ATTR_LATTICE_OUTPUT_MODE] = event.outputMode;
    }
    if (event.purpose === "compaction") attributes[ATTR_LATTICE_COMPACTION] = true;
    // A request still open (its end lost) ends where the next one starts.
    const open = this.chat;
    if (open !== undefined) {
      open.cut(event.time, undefined);
      this.settings.ends.add(open);
    }
    const chat = new ChatSpan(
      this.settings.tracer,
      // A call to another model (a `prepareStep` override, a fallback) is named after it.
      event.model === undefined ? this.chatName : `${GEN_AI_OPERATION_CHAT} ${event.model}`,
      attributes,
      this.context,
      event,
      sessionId,
      maxTokens,
    );
    this.chat = chat;
    this.settings.ends.add(chat);
  }

  private modelRetry(event: EventOf<"model_retry">): void {
    const chat = this.chat;
    if (chat === undefined || chat.turn !== event.turn) return;
    const attributes: Attributes = {
      "lattice.retry.attempt": event.attempt,
      "lattice.retry.delay_ms": event.delayMs,
      "lattice.retry.reason": event.message,
    };
    if (event.status !== undefined) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = event.status;
    chat.span.addEvent(EVENT_LATTICE_MODEL_RETRY, attributes, epochMillis(event.time));
  }

  private modelFallback(event: EventOf<"model_fallback">): void {
    // The request that failed ends failed, as a last failure would; the next one's span opens
    // at its own model_request_started.
    const chat = this.chatOf(event.turn);
    if (chat !== undefined) {
      const { time, sessionId, runId, turn, message, status } = event;
      chat.failed({ type: "model_request_failed", time, sessionId, runId, turn, message, status });
      this.settings.ends.add(chat);
    }
    const attributes: Attributes = {
      [ATTR_LATTICE_TURN]: event.turn,
      "lattice.fallback.from_model": event.fromModel,
      "lattice.fallback.from_provider": event.fromProvider,
      "lattice.fallback.to_model": event.toModel,
      "lattice.fallback.to_provider": event.toProvider,
      "lattice.fallback.index": event.fallback,
      "lattice.fallback.reason": event.message,
    };
    if (event.status !== undefined) attributes[ATTR_HTTP_RESPONSE_STATUS_CODE] = event.status;
    this.span.addEvent(EVENT_LATTICE_MODEL_FALLBACK, attributes, epochMillis(event.time));
  }

  private guardrail(event: EventOf<"guardrail">): void {
    const attributes: Attributes = {
      [ATTR_LATTICE_TURN]: event.turn,
      "lattice.guardrail.kind": event.kind,
      "lattice.guardrail.name": event.name,
      "lattice.guardrail.tripwire": event.tripwire,
      "lattice.guardrail.duration_ms": event.durationMs,
    };
    if (event.reason !== undefined) attributes["lattice.guardrail.reason"] = event.reason;
    if (event.retry === true) attributes["lattice.guardrail.retry"] = true;
    this.span.addEvent(EVENT_LATTICE_GUARDRAIL, attributes, epochMillis(event.time));
  }

  private toolQueued(event: EventOf<"tool_call_queued">): void {
    const index = event.index;
    if (index === 0) this.newBatch();
    const name = event.name;
    let spanName = this.toolNames.get(name);
    if (spanName === undefined) {
      spanName = `${GEN_AI_OPERATION_EXECUTE_TOOL} ${name}`;
      this.toolNames.set(name, spanName);
    }
    const tool = new ToolSpan(this.settings.tracer, spanName, event, this.context);
    const previous = this.batch[index];
    if (previous !== undefined) this.keepEarlier(previous);
    this.batch[index] = tool;
    this.byId?.set(tool.id, tool);
    // The span starts when the handler does (O2a), or, if it never does, when the call ends.
  }

  private toolStarted(event: EventOf<"tool_call_started">): void {
    const tool = this.callOf(event.index, event.id);
    if (tool === undefined) return;
    tool.handlerStarted(event.time, event.inFlight);
    // An agent tool's span starts now: its child run starts under it before the turn ends.
    if (tool.shared) {
      tool.start();
      this.settings.toolOpened(tool.id, tool);
    } else this.settings.ends.add(tool);
  }

  /** A batch starts: the calls of the last one still open (their end lost) are kept apart. */
  private newBatch(): void {
    for (const tool of this.batch) if (tool !== undefined) this.keepEarlier(tool);
    this.batch = [];
  }

  private keepEarlier(tool: ToolSpan): void {
    if (this.earlier === undefined) this.earlier = [];
    this.earlier.push(tool);
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
    const plan = planJson(event.plan);
    const runs = event.plan.runs;
    const batch = this.batch;
    for (let runIndex = 0; runIndex < runs.length; runIndex++) {
      const run = runs[runIndex]!;
      const indices = run.indices;
      for (let position = 0; position < indices.length; position++) {
        batch[indices[position]!]?.planned(plan, runIndex, run.concurrent);
      }
    }
  }

  private toolFinished(event: EventOf<"tool_call_finished">): void {
    const index = event.index;
    const tool = this.callOf(index, event.id);
    if (tool === undefined) return;
    // The call leaves its slot, wherever it is (an event from elsewhere may name another index).
    const slot = this.batch[index] === tool ? index : this.batch.indexOf(tool);
    if (slot >= 0) this.batch[slot] = undefined;
    else if (this.earlier !== undefined) {
      this.earlier = this.earlier.filter((other) => other !== tool);
      if (this.earlier.length === 0) this.earlier = undefined;
    }
    this.byId?.delete(tool.id);
    tool.finished({
      time: event.time,
      status: event.status,
      isError: event.isError,
      durationMs: event.durationMs,
    });
    this.settings.ends.add(tool);
    if (tool.shared) this.settings.toolClosed(tool.id, tool);
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
    const tool = this.openTool(event.toolUseId);
    if (tool !== undefined) tool.addEvent(EVENT_LATTICE_HOOK, attributes, event.time);
    else this.span.addEvent(EVENT_LATTICE_HOOK, attributes, epochMillis(event.time));
  }

  private toolProgress(event: EventOf<"tool_progress">): void {
    const tool = this.openTool(event.toolUseId);
    if (tool === undefined) return;
    const attributes: Attributes = { "lattice.progress.value": event.progress };
    if (event.total !== undefined) attributes["lattice.progress.total"] = event.total;
    if (this.settings.recordContent && event.message !== undefined) {
      attributes["lattice.progress.message"] = event.message;
    }
    tool.addEvent(EVENT_LATTICE_TOOL_PROGRESS, attributes, event.time);
  }

  private approvalRequested(event: EventOf<"approval_requested">): void {
    // The approval ids are left out on purpose: whoever holds one can decide the call.
    for (const approval of event.approvals) {
      const attributes: Attributes = {
        [ATTR_GEN_AI_TOOL_CALL_ID]: approval.toolUseId,
        [ATTR_GEN_AI_TOOL_NAME]: approval.toolName,
      };
      if (this.settings.recordContent) {
        attributes[ATTR_GEN_AI_TOOL_CALL_ARGUMENTS] = JSON.stringify(approval.input);
      }
      const tool = this.openTool(approval.toolUseId);
      if (tool !== undefined)
        tool.addEvent(EVENT_LATTICE_APPROVAL_REQUESTED, attributes, event.time);
      else
        this.span.addEvent(EVENT_LATTICE_APPROVAL_REQUESTED, attributes, epochMillis(event.time));
    }
  }

  private runFinished(event: EventOf<"run_finished">): void {
    const interrupted = event.subtype === "interrupted";
    this.endOpen(event.time, interrupted ? "awaiting_approval" : "unfinished");
    const usage = event.usage;
    this.span.setAttributes({
      [ATTR_LATTICE_RUN_SUBTYPE]: event.subtype,
      [ATTR_LATTICE_RUN_NUM_TURNS]: event.numTurns,
      [ATTR_GEN_AI_USAGE_INPUT_TOKENS]:
        usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
      [ATTR_GEN_AI_USAGE_OUTPUT_TOKENS]: usage.outputTokens,
      [ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS]: usage.cacheReadInputTokens,
      [ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS]: usage.cacheCreationInputTokens,
    });
    if (usage.costUsd !== undefined)
      this.span.setAttribute(ATTR_LATTICE_USAGE_COST_USD, usage.costUsd);
    if (event.subtype !== "success" && !interrupted) {
      failSpan(this.span, event.subtype, `the run ended with ${event.subtype}`);
    }
    this.end(event.time);
  }

  /**
   * A step of a stepped run (`agent.step()`) ended and the run goes on, maybe in another
   * process: this process's span of the run ends, and the next step's run links to it.
   */
  private stepFinished(event: EventOf<"run_step_finished">): void {
    this.endOpen(event.time, "unfinished");
    if (event.step !== undefined) this.span.setAttribute(ATTR_LATTICE_RUN_STEP, event.step);
    this.span.setAttribute(ATTR_LATTICE_RUN_NEXT_STEP, event.nextStep);
    this.end(event.time);
  }

  private runAborted(event: EventOf<"run_aborted">): void {
    this.endOpen(event.time, "aborted", "aborted");
    this.span.setAttributes({
      [ATTR_LATTICE_RUN_SUBTYPE]: "aborted",
      [ATTR_LATTICE_RUN_NUM_TURNS]: event.numTurns,
    });
    this.span.addEvent(EVENT_LATTICE_RUN_ABORTED, undefined, epochMillis(event.time));
    failSpan(this.span, "aborted", "the run was aborted through its signal");
    this.end(event.time);
  }
}

/**
 * The plan as JSON, as `JSON.stringify(plan)` writes it: its three fields in their order
 * (`{"mode":"safe","maxConcurrency":10,"runs":[{"concurrent":true,"indices":[0,1]}]}`).
 * Written out by hand, once per batch: the generic serializer costs several times more.
 */
export function planJson(plan: EventOf<"batch_planned">["plan"]): string {
  // A plan from elsewhere (a trace file) with odd values goes the generic way.
  if (!Number.isSafeInteger(plan.maxConcurrency)) return JSON.stringify(plan);
  let runs = "";
  for (const run of plan.runs) {
    if (runs !== "") runs += ",";
    runs += `{"concurrent":${run.concurrent === true},"indices":[${run.indices.join(",")}]}`;
  }
  return `{"mode":${JSON.stringify(plan.mode)},"maxConcurrency":${plan.maxConcurrency},"runs":[${runs}]}`;
}
