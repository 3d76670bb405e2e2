export { AbortError } from "./abort-error.js";
export { ToolBatchPolicyError, ToolBatchRefusedError, ToolCallHookError } from "./errors.js";
export { findEndTurn, type ToolBatchEndTurn } from "./find-end-turn.js";
export {
  isConcurrencySafeCall,
  planToolBatch,
  type ToolBatchPlan,
  type ToolBatchPlanCall,
  type ToolBatchRun,
} from "./plan-tool-batch.js";
export {
  DEFAULT_TOOL_CONCURRENCY,
  type ResolvedToolConcurrency,
  resolveToolConcurrency,
  TOOL_CONCURRENCY_MODES,
  type ToolConcurrencyMode,
  type ToolConcurrencyOptions,
} from "./resolve-tool-concurrency.js";
export {
  type ApprovalDecision,
  type BeforeToolCall,
  type BeforeToolCallContext,
  type BeforeToolCallResult,
  DEFAULT_ABORT_GRACE_MS,
  type RunToolBatchOptions,
  runToolBatch,
  type ToolBatchInputCall,
  type ToolBatchPendingApproval,
  type ToolBatchResult,
  type ToolCallOutcome,
  type ToolCallStatus,
} from "./run-tool-batch.js";
export type {
  ToolBatchEvent,
  ToolBatchPlannedEvent,
  ToolBatchPolicyEvent,
  ToolCallEventBase,
  ToolCallFinishedEvent,
  ToolCallQueuedEvent,
  ToolCallSettledLateEvent,
  ToolCallStartedEvent,
} from "./tool-batch-event.js";
export {
  type ToolBatchAllowance,
  type ToolBatchCall,
  type ToolBatchDecision,
  type ToolBatchPolicy,
  type ToolBatchPolicyInput,
  type ToolBatchRefusal,
  validateToolBatchPolicy,
} from "./tool-batch-policy.js";
