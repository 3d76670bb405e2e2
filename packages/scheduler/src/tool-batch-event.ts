import type { ToolKind } from "@lattice/tools";
import type { ToolBatchPolicyError } from "./errors.js";
import type { ToolBatchPlan } from "./plan-tool-batch.js";
import type { ToolCallStatus } from "./run-tool-batch.js";
import type { ToolBatchDecision } from "./tool-batch-policy.js";

/** The batch policy decided (only emitted when a policy is configured). */
export interface ToolBatchPolicyEvent {
  /** The event's discriminant. */
  readonly type: "batch_policy";
  /** When the decision was known, on the batch's clock (milliseconds). */
  readonly time: number;
  /** The decision, when `validate` returned a valid one. */
  readonly decision?: ToolBatchDecision;
  /** Why the policy failed, when it threw or returned something that is not a decision (T26). */
  readonly error?: ToolBatchPolicyError;
}

/** The batch was planned; handlers start after this event. */
export interface ToolBatchPlannedEvent {
  /** The event's discriminant. */
  readonly type: "batch_planned";
  /** When the plan was made, on the batch's clock (milliseconds). */
  readonly time: number;
  /** The runs the batch will execute. */
  readonly plan: ToolBatchPlan;
}

/** Fields every per-call event carries. */
export interface ToolCallEventBase {
  /** When it happened, on the batch's clock (milliseconds). */
  readonly time: number;
  /** The call's position in the batch (tool_use order). */
  readonly index: number;
  /** The tool_use block's id. */
  readonly id: string;
  /** The tool name the model called. */
  readonly name: string;
  /** The tool's kind (`"tool"` for an unknown tool). */
  readonly kind: ToolKind;
}

/** A call entered the batch: emitted for every call, first, with the batch's arrival time. */
export interface ToolCallQueuedEvent extends ToolCallEventBase {
  /** The event's discriminant. */
  readonly type: "tool_call_queued";
}

/** A call's handler started. Calls that never run a handler (refused, invalid, cancelled...) have none. */
export interface ToolCallStartedEvent extends ToolCallEventBase {
  /** The event's discriminant. */
  readonly type: "tool_call_started";
  /** The index of the plan run the call belongs to. */
  readonly runIndex: number;
  /** How many handlers of this batch are running, this one included. */
  readonly inFlight: number;
}

/** A call has its result: emitted exactly once for every call of the batch. */
export interface ToolCallFinishedEvent extends ToolCallEventBase {
  /** The event's discriminant. */
  readonly type: "tool_call_finished";
  /** How the call ended. */
  readonly status: ToolCallStatus;
  /** Whether its tool_result is `is_error: true`. */
  readonly isError: boolean;
  /** Time from the handler's start to its end, in milliseconds; `0` when no handler ran. */
  readonly durationMs: number;
}

/**
 * A handler the batch had given up on settled after all: one that timed out (R20), or was
 * abandoned after an abort (H5). Its late outcome is discarded; the call's result stays the
 * one given at the deadline.
 */
export interface ToolCallSettledLateEvent extends ToolCallEventBase {
  /** The event's discriminant. */
  readonly type: "tool_call_settled_late";
  /** The status the call was given: `"timed_out"` or `"abandoned"`. */
  readonly givenStatus: ToolCallStatus;
  /** Whether the discarded late outcome was a failure. */
  readonly lateIsError: boolean;
  /** Time from the handler's start to its late end, in milliseconds. */
  readonly durationMs: number;
}

/**
 * What `runToolBatch` reports as a batch goes, through `onEvent`, discriminated on `type`.
 * Timestamps come from one monotonic clock, so a timeline can show exactly what overlapped.
 */
export type ToolBatchEvent =
  | ToolBatchPolicyEvent
  | ToolBatchPlannedEvent
  | ToolCallQueuedEvent
  | ToolCallStartedEvent
  | ToolCallFinishedEvent
  | ToolCallSettledLateEvent;
