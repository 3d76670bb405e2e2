export type {
  AgentHooks,
  BeforeToolCallHookResult,
  ToolResultHookEvent,
} from "./agent-hooks.js";
export {
  AGENT_OPTION_KEYS,
  type AgentOptions,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
} from "./agent-options.js";
export {
  type Agent,
  createAgent,
  createBareAgent,
  type Prompt,
  type QueryOptions,
} from "./create-agent.js";
export { type AgentDefinition, defineAgent, isAgentDefinition } from "./define-agent.js";
export { type JsonlTraceWriter, jsonlTraceWriter } from "./jsonl-trace-writer.js";
export type {
  RunUsage,
  SDKAssistantMessage,
  SDKMessage,
  SDKPartialMessage,
  SDKResultMessage,
  SDKResultSubtype,
  SDKSystemMessage,
  SDKUserMessage,
} from "./sdk-message.js";
export { PARALLEL_TOOL_CALLS_GUIDANCE } from "./system-prompt.js";
export type {
  HookTraceEvent,
  ModelRequestFailedTraceEvent,
  ModelRequestFinishedTraceEvent,
  ModelRequestStartedTraceEvent,
  ModelRetryTraceEvent,
  RunAbortedTraceEvent,
  RunFinishedTraceEvent,
  RunStartedTraceEvent,
  ToolBatchTraceEvent,
  TraceEvent,
  TraceEventBase,
} from "./trace-event.js";
