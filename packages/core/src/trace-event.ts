import type { StopReason } from "@lattice/providers";
import type { ToolBatchEvent } from "@lattice/scheduler";
import type { PendingApproval } from "./run-log-entry.js";
import type { RunUsage, SDKResultSubtype } from "./sdk-message.js";

/** Fields every trace event carries. `time` is monotonic (`performance.now()`, milliseconds). */
export interface TraceEventBase {
  /** Monotonic timestamp in milliseconds (`performance.now()`). */
  readonly time: number;
  /** The conversation this event belongs to (R7): the session, or a one-off run's fresh id. */
  readonly sessionId: string;
  /** The run this event belongs to; a resumed run keeps its id. */
  readonly runId: string;
}

/** A run started. */
export interface RunStartedTraceEvent extends TraceEventBase {
  readonly type: "run_started";
  /** The running agent's name (`"agent"` when it has none). */
  readonly agentName: string;
  /** The provider's name (`"anthropic"`, `"openai-compatible"`, `"ai-sdk"`, ...). */
  readonly provider: string;
  readonly model: string;
  readonly tools: readonly string[];
  readonly parentToolUseId: string | null;
  /** `true` when `resume()` took up an unfinished run (R18); absent for a new run. */
  readonly resumed?: true;
}

/** A model request is about to be sent. */
export interface ModelRequestStartedTraceEvent extends TraceEventBase {
  readonly type: "model_request_started";
  /** 1-based turn number. */
  readonly turn: number;
  readonly messageCount: number;
  /** The request's `maxTokens`. */
  readonly maxTokens: number;
  /** The model asked, when it is not the run's own (a `prepareStep` override or a fallback). */
  readonly model?: string;
  /** How the call asks for the typed answer, with `outputSchema` (L2). */
  readonly outputMode?: "native_json_schema" | "forced_tool";
  /** `"compaction"` for the call that writes a `compact` summary (C5); absent for the run's own calls. */
  readonly purpose?: "compaction";
}

/**
 * A model call failed with a retryable error after its retries, and its request goes to the
 * next `fallback` entry (L10).
 */
export interface ModelFallbackTraceEvent extends TraceEventBase {
  readonly type: "model_fallback";
  readonly turn: number;
  /** The model and provider that failed. */
  readonly fromModel: string;
  readonly fromProvider: string;
  /** The ones the request goes to now. */
  readonly toModel: string;
  readonly toProvider: string;
  /** The 1-based `fallback` entry moved to. */
  readonly fallback: number;
  /** What failed. */
  readonly message: string;
  readonly status?: number | undefined;
}

/** A guardrail ran (L9): its outcome, as its `guardrail` log entry keeps it. */
export interface GuardrailTraceEvent extends TraceEventBase {
  readonly type: "guardrail";
  readonly kind: "input" | "output";
  readonly name: string;
  readonly turn: number;
  readonly tripwire: boolean;
  readonly reason?: string | undefined;
  /** Whether an output guardrail asked the model to try again. */
  readonly retry?: true;
  readonly durationMs: number;
}

/** A model request is being retried after a retryable failure. */
export interface ModelRetryTraceEvent extends TraceEventBase {
  readonly type: "model_retry";
  readonly turn: number;
  readonly attempt: number;
  readonly delayMs: number;
  readonly status?: number | undefined;
  readonly message: string;
}

/** A model request finished with a complete assistant message. */
export interface ModelRequestFinishedTraceEvent extends TraceEventBase {
  readonly type: "model_request_finished";
  readonly turn: number;
  /** From sending the request to the complete message, retries included. */
  readonly latencyMs: number;
  readonly usage: RunUsage;
  readonly retries: number;
  readonly stopReason: StopReason;
  /**
   * The provider's id of the reply (`msg_…` on Anthropic, `chatcmpl-…` on OpenAI-compatible
   * APIs), when it sent one: the `ModelResponse`'s `id`. Absent in traces written by a Lattice
   * older than this field.
   */
  readonly responseId?: string | undefined;
  /**
   * The model named in the reply (often a dated snapshot of the model asked for:
   * `claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`), when it named one: the
   * `ModelResponse`'s `model`. Absent in traces written by a Lattice older than this field.
   */
  readonly responseModel?: string | undefined;
  /** The HTTP request id (`request-id` or `x-request-id` header), when the API sent one. */
  readonly requestId?: string | undefined;
  readonly toolCalls: number;
  /** `"compaction"` for the call that wrote a `compact` summary (C5). */
  readonly purpose?: "compaction";
}

/** A model request failed for good (after its retries). */
export interface ModelRequestFailedTraceEvent extends TraceEventBase {
  readonly type: "model_request_failed";
  readonly turn: number;
  readonly message: string;
  readonly status?: number | undefined;
  /** `"compaction"` for the call that was to write a `compact` summary (C5). */
  readonly purpose?: "compaction";
}

/**
 * The conversation was made smaller before the model call of `turn` (C3): a `compaction` entry
 * was appended.
 */
export interface CompactionTraceEvent extends TraceEventBase {
  readonly type: "compaction";
  /** The turn whose model call comes next. */
  readonly turn: number;
  /** `"clear_tool_results"`, `"compact"`, or the function's name. */
  readonly strategy: string;
  readonly trigger: "threshold" | "overflow" | "manual";
  readonly messagesReplaced: number;
  readonly toolResultsCleared: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}

/** A scheduler event of one batch (policy decision, plan, each call queued/started/finished). */
export type ToolBatchTraceEvent = ToolBatchEvent & {
  /** The conversation (R7). */
  readonly sessionId: string;
  /** The run. */
  readonly runId: string;
  /** The turn whose assistant message holds the batch. */
  readonly turn: number;
};

/**
 * Makes a scheduler event a trace event: adds the run's `sessionId`, `runId` and `turn` to
 * it, in place, and returns it. Internal.
 *
 * The scheduler makes a fresh object for every event and hands it to its `onEvent` listener
 * alone, so the listener may keep and extend it. Three stores cost a few nanoseconds; a copy
 * (`{ ...event, sessionId, runId, turn }`) costs about 1.7 µs per event on Node 20, because
 * V8 gives each copy that then grows a map of its own (and the garbage collector the maps).
 * The fields land after the event's own, in the order such a copy had them.
 */
export function toToolBatchTraceEvent(
  event: ToolBatchEvent,
  sessionId: string,
  runId: string,
  turn: number,
): ToolBatchTraceEvent {
  const traced = event as ToolBatchEvent & { sessionId: string; runId: string; turn: number };
  traced.sessionId = sessionId;
  traced.runId = runId;
  traced.turn = turn;
  return traced;
}

/** A hook ran. */
export interface HookTraceEvent extends TraceEventBase {
  readonly type: "hook";
  readonly hook: "beforeToolCall" | "onToolResult";
  readonly toolUseId: string;
  readonly durationMs: number;
  /** The hook's error message when it threw. */
  readonly error?: string | undefined;
}

/** A run ended (not emitted for aborted runs; see `run_aborted`). */
export interface RunFinishedTraceEvent extends TraceEventBase {
  readonly type: "run_finished";
  readonly subtype: SDKResultSubtype;
  readonly numTurns: number;
  readonly durationMs: number;
  readonly usage: RunUsage;
}

/** A batch needs approvals: the run pauses (R14). */
export interface ApprovalRequestedTraceEvent extends TraceEventBase {
  readonly type: "approval_requested";
  /** The calls waiting, with their approval ids. */
  readonly approvals: readonly PendingApproval[];
}

/** `resume()` brought decisions for a paused run (R15). */
export interface ApprovalDecidedTraceEvent extends TraceEventBase {
  readonly type: "approval_decided";
  /** One per approval: approved or denied, and whether the input was edited. */
  readonly decisions: readonly {
    readonly approvalId: string;
    readonly approved: boolean;
    readonly edited?: boolean;
  }[];
}

/** A running tool call reported progress (`ctx.reportProgress`, MCP progress notifications). */
export interface ToolProgressTraceEvent extends TraceEventBase {
  readonly type: "tool_progress";
  /** The call's tool_use id. */
  readonly toolUseId: string;
  /** The tool called. */
  readonly toolName: string;
  /** Work done so far. */
  readonly progress: number;
  /** The total, when known. */
  readonly total?: number | undefined;
  /** The status line, when given. */
  readonly message?: string | undefined;
}

/** A run was aborted through its signal. */
export interface RunAbortedTraceEvent extends TraceEventBase {
  readonly type: "run_aborted";
  readonly numTurns: number;
  readonly durationMs: number;
}

/**
 * A step of a run taken one step at a time (`agent.step()`) ended and the run goes on: its
 * next step may be taken in another process. Not emitted when the run ends within the step
 * (`run_finished` is).
 */
export interface RunStepFinishedTraceEvent extends TraceEventBase {
  readonly type: "run_step_finished";
  /** The step taken, or `undefined` when the log was not at the expected step (nothing ran). */
  readonly step: number | undefined;
  /** The step the log is at now: the run's next step. */
  readonly nextStep: number;
}

/** Every event `onTrace` receives. API keys never appear in them. */
export type TraceEvent =
  | RunStartedTraceEvent
  | ModelRequestStartedTraceEvent
  | ModelRetryTraceEvent
  | ModelFallbackTraceEvent
  | GuardrailTraceEvent
  | ModelRequestFinishedTraceEvent
  | ModelRequestFailedTraceEvent
  | CompactionTraceEvent
  | ToolBatchTraceEvent
  | HookTraceEvent
  | RunFinishedTraceEvent
  | RunAbortedTraceEvent
  | RunStepFinishedTraceEvent
  | ApprovalRequestedTraceEvent
  | ApprovalDecidedTraceEvent
  | ToolProgressTraceEvent;
