/**
 * The attribute, span-event and value names this package writes.
 *
 * The `gen_ai.*` names follow the OpenTelemetry GenAI semantic conventions (development
 * status). They are defined here rather than imported: `@opentelemetry/semantic-conventions`
 * only has them on its `incubating` entry point, which may break in a minor release and which
 * marks them `@deprecated` ("moved to the GenAI semantic conventions repository"); its README
 * asks instrumentations to copy the names they use into their own code. A constant here is
 * the literal string of the convention, so spans stay readable by every backend.
 *
 * @packageDocumentation
 */

// ---- GenAI semantic conventions ---------------------------------------------------------

/** `gen_ai.operation.name`: `"invoke_agent"`, `"chat"` or `"execute_tool"`. */
export const ATTR_GEN_AI_OPERATION_NAME = "gen_ai.operation.name";
/** `gen_ai.provider.name`: the model provider (`"anthropic"`, `"openai"`, ...). */
export const ATTR_GEN_AI_PROVIDER_NAME = "gen_ai.provider.name";
/** `gen_ai.request.model`: the model the request named. */
export const ATTR_GEN_AI_REQUEST_MODEL = "gen_ai.request.model";
/** `gen_ai.request.max_tokens`: the request's output token limit. */
export const ATTR_GEN_AI_REQUEST_MAX_TOKENS = "gen_ai.request.max_tokens";
/**
 * `gen_ai.response.id`: the provider's id of the reply (`msg_…` on Anthropic, `chatcmpl-…` on
 * OpenAI-compatible APIs; the trace event's `responseId`). Not the HTTP request id, which is
 * {@link ATTR_LATTICE_PROVIDER_REQUEST_ID}.
 */
export const ATTR_GEN_AI_RESPONSE_ID = "gen_ai.response.id";
/** `gen_ai.response.model`: the model named in the reply (the trace event's `responseModel`). */
export const ATTR_GEN_AI_RESPONSE_MODEL = "gen_ai.response.model";
/** `gen_ai.response.finish_reasons`: why the model stopped, one per choice (Lattice has one). */
export const ATTR_GEN_AI_RESPONSE_FINISH_REASONS = "gen_ai.response.finish_reasons";
/**
 * `gen_ai.usage.input_tokens`: every input token, cached ones included, as the conventions ask:
 * Lattice's `inputTokens + cacheReadInputTokens + cacheCreationInputTokens` (Lattice's
 * `inputTokens` leaves the cached ones out, on every provider).
 */
export const ATTR_GEN_AI_USAGE_INPUT_TOKENS = "gen_ai.usage.input_tokens";
/** `gen_ai.usage.output_tokens`: output tokens. */
export const ATTR_GEN_AI_USAGE_OUTPUT_TOKENS = "gen_ai.usage.output_tokens";
/** `gen_ai.usage.cache_read.input_tokens`: input tokens served from the provider's cache. */
export const ATTR_GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS = "gen_ai.usage.cache_read.input_tokens";
/** `gen_ai.usage.cache_creation.input_tokens`: input tokens written to the provider's cache. */
export const ATTR_GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS =
  "gen_ai.usage.cache_creation.input_tokens";
/** `gen_ai.agent.name`: the agent's name. */
export const ATTR_GEN_AI_AGENT_NAME = "gen_ai.agent.name";
/** `gen_ai.conversation.id`: the conversation; Lattice's `sessionId`. */
export const ATTR_GEN_AI_CONVERSATION_ID = "gen_ai.conversation.id";
/** `gen_ai.tool.name`: the tool called. */
export const ATTR_GEN_AI_TOOL_NAME = "gen_ai.tool.name";
/** `gen_ai.tool.call.id`: the call's `tool_use` id. */
export const ATTR_GEN_AI_TOOL_CALL_ID = "gen_ai.tool.call.id";
/** `gen_ai.tool.type`: `"function"` (run by the agent's process) or `"extension"` (MCP). */
export const ATTR_GEN_AI_TOOL_TYPE = "gen_ai.tool.type";
/** `gen_ai.tool.call.arguments`: the call's input as JSON. Content: only with `recordContent`. */
export const ATTR_GEN_AI_TOOL_CALL_ARGUMENTS = "gen_ai.tool.call.arguments";
/** `error.type`: a low-cardinality name of what went wrong; set with status ERROR. */
export const ATTR_ERROR_TYPE = "error.type";
/** `http.response.status_code`: the HTTP status of a failed or retried model request. */
export const ATTR_HTTP_RESPONSE_STATUS_CODE = "http.response.status_code";

/** The `gen_ai.operation.name` of a run's span. */
export const GEN_AI_OPERATION_INVOKE_AGENT = "invoke_agent";
/** The `gen_ai.operation.name` of a model call's span. */
export const GEN_AI_OPERATION_CHAT = "chat";
/** The `gen_ai.operation.name` of a tool call's span. */
export const GEN_AI_OPERATION_EXECUTE_TOOL = "execute_tool";

// ---- Lattice's own facts ----------------------------------------------------------------

/** `lattice.run.id`: the run's id (a resumed run keeps it). */
export const ATTR_LATTICE_RUN_ID = "lattice.run.id";
/** `lattice.run.resumed`: `true` on the span of a run that `resume()` took up. */
export const ATTR_LATTICE_RUN_RESUMED = "lattice.run.resumed";
/**
 * `lattice.run.subtype`: how the run ended: `"success"`, `"error_max_turns"`,
 * `"error_during_execution"`, `"interrupted"` (paused for approvals) or `"aborted"`.
 */
export const ATTR_LATTICE_RUN_SUBTYPE = "lattice.run.subtype";
/**
 * `lattice.run.step`: on the span of one step of a stepped run (`agent.step()`, a job queue's
 * worker), the step it took (the model call of turn _t_ is step 2_t_−2, its batch 2_t_−1).
 */
export const ATTR_LATTICE_RUN_STEP = "lattice.run.step";
/** `lattice.run.next_step`: on the span of one step of a stepped run, the step that comes next. */
export const ATTR_LATTICE_RUN_NEXT_STEP = "lattice.run.next_step";
/** `lattice.run.num_turns`: the model turns the run took. */
export const ATTR_LATTICE_RUN_NUM_TURNS = "lattice.run.num_turns";
/** `lattice.run.parent_tool_call_id`: on an agent tool's child run, the call that started it. */
export const ATTR_LATTICE_RUN_PARENT_TOOL_CALL_ID = "lattice.run.parent_tool_call_id";
/** `lattice.turn`: the 1-based model turn a model call or a tool call belongs to. */
export const ATTR_LATTICE_TURN = "lattice.turn";
/** `lattice.model.message_count`: how many messages the model request sent. */
export const ATTR_LATTICE_MODEL_MESSAGE_COUNT = "lattice.model.message_count";
/** `lattice.model.retries`: how many times the model request was retried. */
export const ATTR_LATTICE_MODEL_RETRIES = "lattice.model.retries";
/** `lattice.model.tool_calls`: how many tool calls the reply holds. */
export const ATTR_LATTICE_MODEL_TOOL_CALLS = "lattice.model.tool_calls";
/**
 * `lattice.provider.request_id`: the HTTP request id the API sent (`request-id` or
 * `x-request-id` header), for support tickets; the trace event's `requestId`.
 */
export const ATTR_LATTICE_PROVIDER_REQUEST_ID = "lattice.provider.request_id";
/**
 * `lattice.output.mode`: on a `chat` span of a run with `outputSchema`, how the call asks for
 * the typed answer: `"native_json_schema"` (the API's structured output) or `"forced_tool"`
 * (a `final_answer` tool).
 */
export const ATTR_LATTICE_OUTPUT_MODE = "lattice.output.mode";
/**
 * `lattice.compaction`: `true` on the `chat` span of the model call that wrote a `compact`
 * summary of the conversation (C5), not one of the run's own turns.
 */
export const ATTR_LATTICE_COMPACTION = "lattice.compaction";
/**
 * `gen_ai.output.type`: the GenAI conventions' requested output type; `"json"` on a `chat`
 * span of a run with `outputSchema`.
 */
export const ATTR_GEN_AI_OUTPUT_TYPE = "gen_ai.output.type";
/** `lattice.usage.cost_usd`: on the run's span, what the run cost, when prices are known. */
export const ATTR_LATTICE_USAGE_COST_USD = "lattice.usage.cost_usd";
/** `lattice.tool.kind`: the tool's kind: `"tool"`, `"agent_tool"`, `"builtin"` or `"mcp"`. */
export const ATTR_LATTICE_TOOL_KIND = "lattice.tool.kind";
/**
 * `lattice.tool.queued_ms`: how long the call waited in the batch before its span started: until
 * its handler started, or, for a call that never ran (refused, denied, unknown tool, invalid
 * input, cancelled), until Lattice settled it.
 */
export const ATTR_LATTICE_TOOL_QUEUED_MS = "lattice.tool.queued_ms";
/** `lattice.tool.duration_ms`: the handler's running time (0 when no handler ran). */
export const ATTR_LATTICE_TOOL_DURATION_MS = "lattice.tool.duration_ms";
/**
 * `lattice.tool.concurrency_safe`: whether the batch's plan let the call overlap others (it is
 * in a concurrent run of the plan).
 */
export const ATTR_LATTICE_TOOL_CONCURRENCY_SAFE = "lattice.tool.concurrency_safe";
/** `lattice.tool.status`: how the call ended, the scheduler's status (`"completed"`, `"refused"`, ...). */
export const ATTR_LATTICE_TOOL_STATUS = "lattice.tool.status";
/** `lattice.tool.is_error`: whether the call's tool_result is `is_error: true`. */
export const ATTR_LATTICE_TOOL_IS_ERROR = "lattice.tool.is_error";
/** `lattice.tool.in_flight`: how many handlers of the batch ran when this one started, itself included. */
export const ATTR_LATTICE_TOOL_IN_FLIGHT = "lattice.tool.in_flight";
/** `lattice.batch.index`: the call's position in its batch (tool_use order). */
export const ATTR_LATTICE_BATCH_INDEX = "lattice.batch.index";
/** `lattice.batch.run_index`: the plan run the call belongs to. */
export const ATTR_LATTICE_BATCH_RUN_INDEX = "lattice.batch.run_index";
/**
 * `lattice.batch.plan`: the batch's plan as JSON:
 * `{"mode":"safe","maxConcurrency":10,"runs":[{"concurrent":true,"indices":[0,1]}]}`.
 */
export const ATTR_LATTICE_BATCH_PLAN = "lattice.batch.plan";

// ---- Span events ------------------------------------------------------------------------

/** A model request is retried (on the `chat` span). */
export const EVENT_LATTICE_MODEL_RETRY = "lattice.model.retry";
/** The batch policy decided (on the run's span). */
export const EVENT_LATTICE_BATCH_POLICY = "lattice.batch.policy";
/**
 * A batch was planned (on the run's span).
 *
 * @deprecated No longer recorded: every call's span carries its batch's plan
 *   (`lattice.batch.plan`).
 */
export const EVENT_LATTICE_BATCH_PLANNED = "lattice.batch.planned";
/**
 * A call's handler started (on the `execute_tool` span).
 *
 * @deprecated No longer recorded: the `execute_tool` span starts when the handler starts.
 */
export const EVENT_LATTICE_TOOL_STARTED = "lattice.tool.started";
/**
 * The call was queued (on the `execute_tool` span, at the queue time, before the span's start
 * by `lattice.tool.queued_ms`): the span covers the handler's run, this event the wait before it.
 */
export const EVENT_LATTICE_TOOL_QUEUED = "lattice.tool.queued";
/** A running call reported progress (on the `execute_tool` span). */
export const EVENT_LATTICE_TOOL_PROGRESS = "lattice.tool.progress";
/** A handler given up on (timed out, abandoned) settled after all (on the run's span). */
export const EVENT_LATTICE_TOOL_SETTLED_LATE = "lattice.tool.settled_late";
/** A `beforeToolCall` or `onToolResult` hook ran. */
export const EVENT_LATTICE_HOOK = "lattice.hook";
/** A call waits for a person's approval; the run pauses. */
export const EVENT_LATTICE_APPROVAL_REQUESTED = "lattice.approval.requested";
/** `resume()` brought the decisions on a paused run's calls. */
export const EVENT_LATTICE_APPROVAL_DECIDED = "lattice.approval.decided";
/**
 * A model call failed after its retries and its request went to the next `fallback` entry
 * (on the run's span): `lattice.fallback.from_model`, `.from_provider`, `.to_model`,
 * `.to_provider`, `.index` (1-based), `.reason`, and `http.response.status_code` when known.
 */
export const EVENT_LATTICE_MODEL_FALLBACK = "lattice.model.fallback";
/**
 * A guardrail ran (on the run's span): `lattice.guardrail.kind` (`"input"` or `"output"`),
 * `.name`, `.tripwire`, `.reason` when given, `.retry` when an output guardrail asked the model
 * to try again, and `.duration_ms`.
 */
export const EVENT_LATTICE_GUARDRAIL = "lattice.guardrail";
/**
 * The conversation was made smaller before a model call (C3, on the run's span):
 * `lattice.compaction.strategy`, `.trigger` (`"threshold"`, `"overflow"`, `"manual"`),
 * `.messages_replaced`, `.tool_results_cleared`, `.tokens_before`, `.tokens_after`, and
 * `lattice.turn` (the turn whose call comes next).
 */
export const EVENT_LATTICE_COMPACTION = "lattice.compaction";
/** The run was aborted through its signal. */
export const EVENT_LATTICE_RUN_ABORTED = "lattice.run.aborted";
