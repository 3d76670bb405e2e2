import type {
  ContentBlock,
  ModelMessage,
  StopReason,
  ToolResultBlock,
  ToolUseBlock,
} from "@lattice/providers";
import { LatticeError, type ToolResult, toolResultText } from "@lattice/tools";
import type { RunUsage, SDKResultSubtype } from "./sdk-message.js";
import type { JsonValue, SessionEntry } from "./session-store.js";

/**
 * The schema version of the run log entries this release writes (R1). A log holding an entry
 * of a higher version was written by a newer Lattice and is refused with a
 * {@link SessionError} of code `"session_log_version"`.
 */
export const RUN_LOG_VERSION = 1;

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
  | RunFinishedEntry;

/** The codes of {@link SessionError}. */
export type SessionErrorCode =
  | "session_not_found"
  | "not_interrupted"
  | "session_log_version"
  | "session_log_invalid"
  | "session_store_failed"
  | "approval_missing"
  | "approval_unknown";

/**
 * A session cannot be used as asked: `resume()` of an unknown session (`"session_not_found"`)
 * or of one whose last run finished (`"not_interrupted"`), or a stored run log this release
 * cannot read: an entry of a newer schema version (`"session_log_version"`) or one that is not
 * a run log entry (`"session_log_invalid"`); or the store failed to load the session or to
 * append to it (`"session_store_failed"`, with the store's error as `cause`); or a resume of an
 * interrupted run without a decision for every pending approval (`"approval_missing"`) or with
 * one for an id that is not pending (`"approval_unknown"`, also for an id already decided).
 */
export class SessionError extends LatticeError {
  /** The session concerned. */
  readonly sessionId: string;
  /** Which failure this is. */
  declare readonly code: SessionErrorCode;

  /**
   * @param code - Which failure this is.
   * @param sessionId - The session concerned.
   * @param message - What happened and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(code: SessionErrorCode, sessionId: string, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.sessionId = sessionId;
    this.name = "SessionError";
  }
}

const ENTRY_TYPES: ReadonlySet<string> = new Set([
  "run_started",
  "run_resumed",
  "reply",
  "tool_result",
  "mail",
  "interrupt",
  "decisions",
  "run_finished",
]);

/**
 * Checks a stored log's entries before anything is derived from them: each a run log entry
 * of a version this release reads.
 *
 * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
 *   session and the entry's index.
 */
export function checkRunLog(
  sessionId: string,
  entries: readonly SessionEntry[],
): readonly RunLogEntry[] {
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index] as Partial<RunLogEntry> & { readonly v?: unknown };
    const where = `Session ${JSON.stringify(sessionId)}: run log entry ${index}`;
    if (typeof entry.v === "number" && entry.v > RUN_LOG_VERSION) {
      throw new SessionError(
        "session_log_version",
        sessionId,
        `${where} has schema version ${entry.v}, but this release of Lattice reads version ${RUN_LOG_VERSION} and older. It was written by a newer Lattice: upgrade @lattice/core to continue this session. Nothing was changed.`,
      );
    }
    if (
      typeof entry.v !== "number" ||
      !Number.isInteger(entry.v) ||
      entry.v < 1 ||
      typeof entry.type !== "string" ||
      !ENTRY_TYPES.has(entry.type) ||
      typeof entry.runId !== "string" ||
      !hasFields(entry as RunLogEntry)
    ) {
      throw new SessionError(
        "session_log_invalid",
        sessionId,
        `${where} is not a Lattice run log entry (type ${JSON.stringify(entry.type)}, v ${JSON.stringify(entry.v)}). The session was written by something else, or damaged; nothing was changed. Delete the session, or restore it from a backup.`,
      );
    }
  }
  return entries as unknown as readonly RunLogEntry[];
}

function hasFields(entry: RunLogEntry): boolean {
  switch (entry.type) {
    case "run_started":
      return (
        isMessage(entry.message) && (entry.history === undefined || Array.isArray(entry.history))
      );
    case "run_resumed":
      return true;
    case "reply":
      return (
        isMessage(entry.message) &&
        Array.isArray(entry.message.content) &&
        typeof entry.turn === "number" &&
        isUsage(entry.usage)
      );
    case "tool_result":
      return (
        typeof entry.toolUseId === "string" &&
        entry.block !== null &&
        typeof entry.block === "object" &&
        (entry.usage === undefined || isUsage(entry.usage))
      );
    case "mail":
      return Array.isArray(entry.texts) && entry.texts.every((text) => typeof text === "string");
    case "interrupt":
      return Array.isArray(entry.approvals);
    case "decisions":
      return entry.decisions !== null && typeof entry.decisions === "object";
    case "run_finished":
      return typeof entry.subtype === "string" && Array.isArray(entry.errors);
  }
}

function isMessage(value: unknown): value is ModelMessage {
  if (value === null || typeof value !== "object") return false;
  const { role, content } = value as Partial<ModelMessage>;
  return (
    (role === "user" || role === "assistant") &&
    (typeof content === "string" || Array.isArray(content))
  );
}

function isUsage(value: unknown): value is RunUsage {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as RunUsage).inputTokens === "number" &&
    typeof (value as RunUsage).outputTokens === "number"
  );
}

/** Token counts being added up (a mutable {@link RunUsage}). */
export type UsageTotals = { -readonly [K in keyof RunUsage]: RunUsage[K] };

/** Fresh zero totals. */
export function zeroUsage(): UsageTotals {
  return { inputTokens: 0, outputTokens: 0, cacheReadInputTokens: 0, cacheCreationInputTokens: 0 };
}

/**
 * Adds `more` to `totals`. Cache counts may be absent (logs written before they were kept,
 * or APIs that do not report them): they count as 0.
 */
export function addUsage(totals: UsageTotals, more: Partial<RunUsage>): void {
  totals.inputTokens += more.inputTokens ?? 0;
  totals.outputTokens += more.outputTokens ?? 0;
  totals.cacheReadInputTokens += more.cacheReadInputTokens ?? 0;
  totals.cacheCreationInputTokens += more.cacheCreationInputTokens ?? 0;
}

/** The tool calls of the run's latest reply and the results logged for them so far. */
export interface OpenBatch {
  /** The reply's `tool_use` blocks, in tool_use order. */
  readonly toolUses: readonly ToolUseBlock[];
  /** The results logged so far, by tool_use id. */
  readonly results: Map<string, ToolResultEntry>;
  /** Whether every call has its result (then the results message is in the conversation). */
  complete: boolean;
}

/** What the log says about its latest run. */
export interface LoggedRun {
  readonly runId: string;
  /** When the run started (its `run_started` entry's ISO time). */
  readonly startedTime: string;
  /** Whether a `run_finished` entry closed it. */
  finished: boolean;
  /** The entry that closed it, once finished. */
  finishedEntry: RunFinishedEntry | undefined;
  /** Model calls made so far (R18: continues on resume). */
  numTurns: number;
  /** Tokens used so far, child runs included (R18: continues on resume). */
  readonly usage: UsageTotals;
  /** The latest reply of the run, if any. */
  lastReply: ReplyEntry | undefined;
  /** The latest reply's tool calls, when it made some. */
  batch: OpenBatch | undefined;
  /** The calls waiting for a decision, when the run is interrupted (R14). */
  pending: readonly PendingApproval[] | undefined;
  /** The decisions on the latest batch's calls, by tool_use id (R15). */
  decisions: Map<string, LoggedDecision> | undefined;
}

/**
 * A run log folded into what the loop needs: the conversation (R2) and the state of the latest
 * run. Entries are applied one at a time, as they are appended or loaded, so a long run never
 * re-reads its log.
 */
export class RunLogState {
  /** The conversation, derived from the entries (R2). Messages are never changed in place. */
  readonly messages: ModelMessage[] = [];
  /** The latest run, once a `run_started` entry was applied. */
  run: LoggedRun | undefined;
  /** How many entries were applied. */
  size = 0;

  /** Applies one entry (already checked) to the conversation and the run. */
  apply(entry: RunLogEntry): void {
    this.size++;
    const messages = this.messages;
    switch (entry.type) {
      case "run_started": {
        if (entry.history !== undefined)
          for (const message of entry.history) messages.push(message);
        messages.push(entry.message);
        this.run = {
          runId: entry.runId,
          startedTime: entry.time,
          finished: false,
          finishedEntry: undefined,
          numTurns: 0,
          usage: zeroUsage(),
          lastReply: undefined,
          batch: undefined,
          pending: undefined,
          decisions: undefined,
        };
        return;
      }
      case "run_resumed":
        return;
      case "reply": {
        const run = this.run!;
        messages.push(entry.message);
        run.numTurns = entry.turn;
        addUsage(run.usage, entry.usage);
        run.lastReply = entry;
        const toolUses = toolUsesOf(entry.message.content);
        run.batch =
          toolUses.length === 0 ? undefined : { toolUses, results: new Map(), complete: false };
        run.decisions = undefined;
        return;
      }
      case "tool_result": {
        const run = this.run!;
        const batch = run.batch;
        if (entry.usage !== undefined) addUsage(run.usage, entry.usage);
        if (batch === undefined || batch.complete) return;
        batch.results.set(entry.toolUseId, entry);
        if (batch.results.size < batch.toolUses.length) return;
        batch.complete = true;
        const content: ToolResultBlock[] = [];
        for (const call of batch.toolUses) {
          const result = batch.results.get(call.id);
          if (result !== undefined) content.push(result.block);
        }
        messages.push({ role: "user", content });
        return;
      }
      case "mail": {
        const texts = entry.texts.map((text) => ({ type: "text" as const, text }));
        const last = messages[messages.length - 1];
        if (last !== undefined && last.role === "user" && Array.isArray(last.content)) {
          messages[messages.length - 1] = { role: "user", content: [...last.content, ...texts] };
        } else {
          messages.push({ role: "user", content: texts });
        }
        return;
      }
      case "interrupt":
        this.run!.pending = entry.approvals;
        return;
      case "decisions": {
        const run = this.run!;
        // Decisions add up within a batch: a resumed batch may pause again for other calls.
        const decisions = run.decisions ?? new Map<string, LoggedDecision>();
        for (const approval of run.pending ?? []) {
          const decision = entry.decisions[approval.approvalId];
          if (decision !== undefined) decisions.set(approval.toolUseId, decision);
        }
        run.decisions = decisions;
        run.pending = undefined;
        return;
      }
      case "run_finished":
        this.run!.finished = true;
        this.run!.finishedEntry = entry;
        return;
    }
  }
}

/** The `tool_use` blocks of a reply, in order. */
export function toolUsesOf(content: readonly ContentBlock[]): ToolUseBlock[] {
  const toolUses: ToolUseBlock[] = [];
  for (const block of content) if (block.type === "tool_use") toolUses.push(block);
  return toolUses;
}

/** What the loop does next, derived from the log alone (R2). */
export type RunStep =
  | { readonly type: "model" }
  | {
      readonly type: "batch";
      /** The calls still without a logged result, in tool_use order. */
      readonly calls: readonly ToolUseBlock[];
      /** `true` when no result of the batch is logged yet (the batch policy sees it whole). */
      readonly whole: boolean;
      /** Decisions on calls that needed approval, by tool_use id, after an interrupt (R15). */
      readonly decisions: ReadonlyMap<string, LoggedDecision> | undefined;
    }
  | {
      readonly type: "finish";
      readonly subtype: SDKResultSubtype;
      readonly result: string;
      readonly errors: readonly string[];
      readonly structuredResult?: unknown;
    };

/**
 * The next step of an unfinished run, from the log: run the latest reply's calls that have no
 * result yet, finish when the model or a tool ended the run, else call the model (or stop at
 * `maxTurns`).
 */
export function nextStep(run: LoggedRun, maxTurns: number): RunStep {
  const batch = run.batch;
  const reply = run.lastReply;
  if (batch !== undefined) {
    if (!batch.complete) {
      const duplicate = duplicateId(batch.toolUses);
      if (duplicate !== undefined) {
        // The API would reject the results of such a reply; nothing may run first (H13).
        return finish("error_during_execution", [
          `The model's reply used the tool_use id "${duplicate}" for more than one tool call, so none of its ${batch.toolUses.length} calls ran: their results could not be told apart. This is a fault of the model or the server; retry the query.`,
        ]);
      }
      const calls =
        batch.results.size === 0
          ? batch.toolUses
          : batch.toolUses.filter((call) => !batch.results.has(call.id));
      return {
        type: "batch",
        calls,
        // After decisions, the policy had accepted the batch before its interrupt.
        whole: calls.length === batch.toolUses.length && run.decisions === undefined,
        decisions: run.decisions,
      };
    }
    // The first call in tool_use order that asked to end the run (T8, T10, T11).
    for (const call of batch.toolUses) {
      const result = batch.results.get(call.id);
      if (result?.endTurn === true) {
        return {
          type: "finish",
          subtype: "success",
          result: blockText(result.block),
          errors: [],
          structuredResult: result.structuredResult,
        };
      }
    }
  } else if (reply !== undefined && reply.stopReason !== "pause_turn") {
    return {
      type: "finish",
      subtype: "success",
      result: textOf(reply.message.content),
      errors: [],
    };
  }
  if (run.numTurns >= maxTurns) {
    return finish("error_max_turns", [
      `The run reached maxTurns (${maxTurns}) before the model gave a final answer. Raise maxTurns, or give the model a tool that ends the run (endTurn: true).`,
    ]);
  }
  return { type: "model" };
}

/**
 * The number of a run's next step when it is a model call or a batch: the model call of turn
 * `t` is step `2t - 2`, the batch of its reply step `2t - 1`. Steps are what one worker job
 * takes at a time (`agent.step()`); the number names the job.
 */
export function stepNumberOf(step: RunStep, run: LoggedRun): number {
  return step.type === "model" ? 2 * run.numTurns : 2 * run.numTurns - 1;
}

function finish(subtype: SDKResultSubtype, errors: readonly string[]): RunStep {
  return { type: "finish", subtype, result: "", errors };
}

/** The first tool_use id that appears twice in a reply, if any (H13). */
function duplicateId(toolUses: readonly ToolUseBlock[]): string | undefined {
  if (toolUses.length < 2) return undefined;
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (seen.has(block.id)) return block.id;
    seen.add(block.id);
  }
  return undefined;
}

/** The text of an assistant reply: its text blocks, joined by newlines. */
export function textOf(content: readonly ContentBlock[]): string {
  let text = "";
  for (const block of content) {
    if (block.type === "text") text += text === "" ? block.text : `\n${block.text}`;
  }
  return text;
}

/** The text of a tool_result block, as the scheduler reads an `endTurn` result's text. */
function blockText(block: ToolResultBlock): string {
  const content = block.content;
  return typeof content === "string"
    ? content
    : toolResultText({ content: content as ToolResult["content"] });
}
