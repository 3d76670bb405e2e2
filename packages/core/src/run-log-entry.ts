import type { ContentBlock, ModelMessage, StopReason, ToolResultBlock } from "@lattice/providers";
import type { RunUsage, SDKResultSubtype } from "./sdk-message.js";
import type { JsonValue } from "./session-store.js";
import type { TrippedGuardrail } from "./steering-options.js";

/**
 * The newest schema version of the run log entries this release writes and reads (R1). A log
 * holding an entry of a higher version was written by a newer Lattice and is refused with a
 * {@link SessionError} of code `"session_log_version"`. Version 2 added the steering entries
 * (`guardrail`, `output_feedback`, and a `run_finished` with a subtype version 1 did not
 * know); version 3 the context entries (`compaction`, and a `run_finished` with the subtype
 * `error_context_overflow`, C3, C4). Every other entry is still written as version 1, so a
 * release that reads version 1 reads a log that uses neither.
 */
export const RUN_LOG_VERSION = 3;

/** The version of the entries version 1 already had. Internal. */
export const ENTRY_V1 = 1;
/**
 * The version of entries that use what version 2 added (steering a run): the `guardrail` and
 * `output_feedback` entries, a `reply` with `model`, `fallback`, `overrides` or `outputMode`, a
 * `run_finished` with `output`, `guardrail` or a new subtype. Internal.
 */
export const ENTRY_V2 = 2;

/** The version of the context entries (C3, C4): `compaction`, an `error_context_overflow` end. Internal. */
export const ENTRY_V3 = 3;

/** Fields every run log entry carries. */
interface RunLogEntryBase {
  /** The entry's schema version ({@link RUN_LOG_VERSION} for entries this release writes). */
  readonly v: number;
  /** The run the entry belongs to. */
  readonly runId: string;
}

/** A run began: its prompt, and the caller's history when it continued one (R1, R4). */
export interface RunStartedEntry extends RunLogEntryBase {
  readonly type: "run_started";
  /** When the run began (ISO 8601). */
  readonly time: string;
  /** A conversation the caller kept (`query(prompt, { messages })`), sent before the prompt. */
  readonly history?: readonly ModelMessage[];
  /** The prompt, as a user message. */
  readonly message: ModelMessage;
}

/** An unfinished run was taken up again by `resume()` (R18); the run keeps its `runId`. */
export interface RunResumedEntry extends RunLogEntryBase {
  readonly type: "run_resumed";
  /** When the run was resumed (ISO 8601). */
  readonly time: string;
}

/** The model's reply of one turn, exactly as the model sent it. */
export interface ReplyEntry extends RunLogEntryBase {
  readonly type: "reply";
  /** The 1-based turn of the run. */
  readonly turn: number;
  /** The assistant message. */
  readonly message: { readonly role: "assistant"; readonly content: readonly ContentBlock[] };
  /** Why the model stopped. */
  readonly stopReason: StopReason;
  /** The tokens this model call used. */
  readonly usage: RunUsage;
  /** The model that answered, when it was not the agent's (a `prepareStep` override or a fallback, L5, L10). */
  readonly model?: string;
  /** The `fallback` entry (1-based) the call went to, when it moved from the agent's model (L10). */
  readonly fallback?: number;
  /** What `prepareStep` changed for this call (L5). */
  readonly overrides?: LoggedOverrides;
  /** How the call asked for the typed answer, with `outputSchema` (L2). */
  readonly outputMode?: "native_json_schema" | "forced_tool";
}

/** The overrides of one model call, as its reply entry records them (L5). */
export interface LoggedOverrides {
  readonly model?: string;
  /** The provider's name. */
  readonly provider?: string;
  readonly activeTools?: readonly string[];
  readonly toolChoice?: JsonValue;
  readonly system?: string;
  /** How many messages were sent instead of the run's conversation. */
  readonly messages?: number;
}

/** A guardrail's outcome (L9): input guardrails once per run, output ones per final answer. */
export interface GuardrailEntry extends RunLogEntryBase {
  readonly type: "guardrail";
  /** `"input"` or `"output"`. */
  readonly kind: "input" | "output";
  /** The turn whose call (input) or answer (output) it checked. */
  readonly turn: number;
  readonly name: string;
  readonly tripwire: boolean;
  readonly reason?: string;
  readonly info?: JsonValue;
  /** An output guardrail's feedback; an `output_feedback` entry follows. */
  readonly retry?: string;
  /** What the guardrail threw (it then counts as tripped). */
  readonly error?: string;
  readonly durationMs: number;
}

/**
 * Feedback on the latest reply, sent to the model as a user message (L3, L8): an answer that
 * failed validation, a text answer where the `final_answer` tool was expected, or an output
 * guardrail's `retry`.
 */
export interface OutputFeedbackEntry extends RunLogEntryBase {
  readonly type: "output_feedback";
  /** `"invalid"` (validation), `"use_tool"` (call final_answer) or `"guardrail"` (a retry). */
  readonly reason: "invalid" | "use_tool" | "guardrail";
  readonly text: string;
}

/**
 * The conversation was made smaller (C3): what a context strategy replaced, and with what. The
 * log keeps every entry before it (an audit trail, `/history`); the conversation sent to the
 * model starts from the latest compaction. Its boundary never separates a `tool_use` from its
 * `tool_result`.
 */
export interface CompactionEntry extends RunLogEntryBase {
  readonly type: "compaction";
  /** The strategy that made it: `"clear_tool_results"`, `"compact"`, or a user function's name. */
  readonly strategy: string;
  /** Why: the request would pass the threshold, the API refused it as too long, or a caller asked. */
  readonly trigger: "threshold" | "overflow" | "manual";
  /**
   * The range of log entries whose messages it replaces (`from` to `to`, inclusive, indexes in
   * the log). For `clear_tool_results`, the entries of the results it cleared.
   */
  readonly entries: { readonly from: number; readonly to: number };
  /**
   * How many messages at the start of the conversation it replaces with `messages` (the summary,
   * or a user function's conversation); 0 when it only cleared tool results.
   */
  readonly replaced: number;
  /** What replaces the first `replaced` messages. */
  readonly messages?: readonly ModelMessage[];
  /**
   * The tool results it cleared: each block's content became `placeholder`. `message` is the
   * index, in the conversation before the compaction, of the message holding the result.
   */
  readonly cleared?: readonly {
    readonly toolUseId: string;
    readonly placeholder: string;
    readonly message?: number;
  }[];
  /** The request's size before and after, in tokens (as counted or estimated, C1). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The tokens its own model call used (`compact`), counted in the run's usage (C5). */
  readonly usage?: RunUsage;
  /** The model that wrote the summary, when it was not the agent's. */
  readonly model?: string;
}

/** One tool call's result, appended the moment it settled (one entry per call, R1). */
export interface ToolResultEntry extends RunLogEntryBase {
  readonly type: "tool_result";
  /** The `tool_use` block this result answers. */
  readonly toolUseId: string;
  /** The tool's name, as the model called it. */
  readonly toolName: string;
  /** How the call ended (`"completed"`, `"failed"`, `"refused"`, ...). */
  readonly status: string;
  /** The `tool_result` block sent to the model. */
  readonly block: ToolResultBlock;
  /** Set when the tool asked to end the run (T8). */
  readonly endTurn?: true;
  /** The tool's `structuredResult`, when it ended the run with one (T11). */
  readonly structuredResult?: JsonValue;
  /** Tokens that agent tools' child runs used while the call ran. */
  readonly usage?: RunUsage;
}

/** Team mail delivered to the run at a turn boundary: sent to the model with the next step. */
export interface MailEntry extends RunLogEntryBase {
  readonly type: "mail";
  /** The texts, one text block each, appended to the last user message. */
  readonly texts: readonly string[];
}

/** A call that waits for a person's decision (R14), as the log and the result show it. */
export interface PendingApproval {
  /** The id to answer in `resume(sessionId, { decisions: { [approvalId]: decision } })`; unguessable. */
  readonly approvalId: string;
  /** The `tool_use` block of the call. */
  readonly toolUseId: string;
  /** The tool called. */
  readonly toolName: string;
  /** The tool's kind (`"tool"`, `"agent_tool"`, `"builtin"`, `"mcp"`). */
  readonly kind: string;
  /** The input as the model sent it. */
  readonly input: JsonValue;
}

/** The run paused: some calls of the latest reply need a person's decision; none ran (R14). */
export interface InterruptEntry extends RunLogEntryBase {
  readonly type: "interrupt";
  /** The calls waiting, in tool_use order. */
  readonly approvals: readonly PendingApproval[];
}

/** A person's decision on a pending call, as the log keeps it (R15). */
export type LoggedDecision =
  | { readonly approved: true; readonly input?: JsonValue }
  | { readonly approved: false; readonly reason?: string };

/** The decisions `resume()` brought for an interrupt, by approval id (R15). */
export interface DecisionsEntry extends RunLogEntryBase {
  readonly type: "decisions";
  readonly decisions: { readonly [approvalId: string]: LoggedDecision };
}

/** The run ended; its result (everything but the conversation, which the log already holds). */
export interface RunFinishedEntry extends RunLogEntryBase {
  readonly type: "run_finished";
  readonly subtype: SDKResultSubtype;
  readonly result: string;
  readonly structuredResult?: JsonValue;
  readonly errors: readonly string[];
  readonly numTurns: number;
  readonly usage: RunUsage;
  /** The typed answer, as validated (its JSON form), with `outputSchema` (L1). */
  readonly output?: JsonValue;
  /** The guardrail that ended the run, when it ended `guardrail_tripped` (L7). */
  readonly guardrail?: TrippedGuardrail;
}

/**
 * One entry of a session's run log (R1): plain JSON with a schema version `v`, discriminated on
 * `type`. The conversation sent to the model is derived from these entries and nothing else
 * (R2). Written by the agent loop; a {@link SessionStore} keeps them without reading them.
 */
export type RunLogEntry =
  | RunStartedEntry
  | RunResumedEntry
  | ReplyEntry
  | ToolResultEntry
  | MailEntry
  | InterruptEntry
  | DecisionsEntry
  | GuardrailEntry
  | OutputFeedbackEntry
  | CompactionEntry
  | RunFinishedEntry;
