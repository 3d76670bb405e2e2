export type {
  Agent,
  AgentQuery,
  AgentStepResult,
  AsyncDisposeWhereKnown,
  OutputOf,
  Prompt,
  QueryOptions,
  ResumeOptions,
  StepOptions,
} from "./agent.js";
export {
  type AgentGuardrail,
  type AgentGuardrailOptions,
  agentGuardrail,
} from "./agent-guardrail.js";
export type {
  AgentHooks,
  BeforeToolCallHookResult,
  ToolResultHookEvent,
} from "./agent-hooks.js";
export {
  type AgentOptions,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
  DEFAULT_OUTPUT_RETRIES,
} from "./agent-options.js";
export {
  type AgentToolInput,
  type AgentToolMode,
  type AgentToolOptions,
  agentTool,
} from "./agent-tool.js";
export { DEFAULT_MAX_DEPTH } from "./call-agent.js";
export { checkApprovalDecisions } from "./check-approval-decisions.js";
export type { CompactOptions, CompactResult } from "./compact-session.js";
export {
  type ClearedToolResult,
  type ClearToolResultsStrategy,
  type CompactEvent,
  type CompactStrategy,
  type CompactVerdict,
  type ContextBudget,
  type ContextFunction,
  type ContextManagement,
  type ContextStrategy,
  clearToolResults,
  compact,
  DEFAULT_COMPACT_INSTRUCTIONS,
  type OnCompact,
} from "./context-options.js";
export { BUILTIN_CONTEXT_WINDOWS, contextWindowOf, estimateTokens } from "./context-size.js";
export { createAgent, createBareAgent } from "./create-agent.js";
export { createTeam } from "./create-team.js";
export { type AgentDefinition, defineAgent, isAgentDefinition } from "./define-agent.js";
export {
  type DelegateToolInput,
  type DelegateToolOptions,
  delegateTool,
} from "./delegate-tool.js";
export { type EndRunOptions, endRun } from "./end-run.js";
export { type JsonlTraceWriter, jsonlTraceWriter, type TraceSink } from "./jsonl-trace-writer.js";
export { createInMemoryMailbox, type Mailbox, type MailboxMessage } from "./mailbox.js";
export { memorySessionStore } from "./memory-session-store.js";
export {
  BUILTIN_PRICING_DATE,
  builtinPricing,
  costOf,
  type ModelPrice,
  type ModelPricing,
  priceOf,
} from "./model-pricing.js";
export { AgentDepthError, HandoffError } from "./multi-agent-errors.js";
export {
  type CompactionEntry,
  type DecisionsEntry,
  type GuardrailEntry,
  type InterruptEntry,
  type LoggedDecision,
  type LoggedOverrides,
  type MailEntry,
  type OutputFeedbackEntry,
  type PendingApproval,
  type ReplyEntry,
  RUN_LOG_VERSION,
  type RunFinishedEntry,
  type RunLogEntry,
  type RunResumedEntry,
  type RunStartedEntry,
  type ToolResultEntry,
} from "./run-log-entry.js";
export type {
  ModelUsageTotals,
  RunUsage,
  SDKAssistantMessage,
  SDKCompactBoundaryMessage,
  SDKMessage,
  SDKNonSuccessResult,
  SDKOutputDeltaMessage,
  SDKPartialMessage,
  SDKResultFields,
  SDKResultMessage,
  SDKResultSubtype,
  SDKSuccessResult,
  SDKSystemMessage,
  SDKUserMessage,
} from "./sdk-message.js";
export { SessionError, type SessionErrorCode } from "./session-error.js";
export {
  type JsonValue,
  type SessionAppendOptions,
  type SessionCheckpoint,
  SessionConflictError,
  type SessionEntry,
  SessionFencedError,
  type SessionLoadOptions,
  type SessionSnapshot,
  type SessionStore,
} from "./session-store.js";
export {
  checkAppendOptions,
  checkExpectedVersion,
  checkLoadOptions,
  checkSessionId,
  serializeCheckpoint,
  serializeSessionEntries,
} from "./session-store-arguments.js";
export {
  type FallbackModel,
  type GuardrailRetry,
  type Guardrails,
  type GuardrailVerdict,
  hasToolCall,
  type InputGuardrail,
  type InputGuardrailArgs,
  type OutputGuardrail,
  type OutputGuardrailArgs,
  type OutputMode,
  type OutputSchema,
  type PrepareStep,
  type PrepareStepArgs,
  type StepOverrides,
  type StopCondition,
  type StopConditionState,
  stepCountIs,
  type TrippedGuardrail,
} from "./steering-options.js";
export type { StepLease } from "./step-lease.js";
export { type StepMessagesOptions, stepMessages } from "./step-messages.js";
export { PARALLEL_TOOL_CALLS_GUIDANCE } from "./system-prompt.js";
export type { Team, TeamRunOptions } from "./team.js";
export type {
  TeamAgentMessageEvent,
  TeamEvent,
  TeamEventBase,
  TeamMailDeliveredEvent,
  TeamMailPostedEvent,
  TeamRunFailedEvent,
  TeamRunFinishedEvent,
  TeamRunStartedEvent,
} from "./team-event.js";
export { mailboxMessageText, mailboxReply } from "./team-mail.js";
export type { TeamOptions } from "./team-options.js";
export type {
  ApprovalDecidedTraceEvent,
  ApprovalRequestedTraceEvent,
  CompactionTraceEvent,
  GuardrailTraceEvent,
  HookTraceEvent,
  ModelFallbackTraceEvent,
  ModelRequestFailedTraceEvent,
  ModelRequestFinishedTraceEvent,
  ModelRequestStartedTraceEvent,
  ModelRetryTraceEvent,
  RunAbortedTraceEvent,
  RunFinishedTraceEvent,
  RunStartedTraceEvent,
  RunStepFinishedTraceEvent,
  ToolBatchTraceEvent,
  ToolProgressTraceEvent,
  TraceEvent,
  TraceEventBase,
} from "./trace-event.js";
