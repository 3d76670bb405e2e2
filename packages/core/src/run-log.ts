import type {
  ContentBlock,
  ModelMessage,
  StopReason,
  ToolResultBlock,
  ToolUseBlock,
} from "@lattice/providers";
import { LatticeError, type TextBlock, type ToolResult, toolResultText } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { historyProblem } from "./check-history.js";
import { contentBlocksProblem, MAX_STORED_VALUE_DEPTH } from "./content-blocks-problem.js";
import { nestsDeeperThan } from "./plain-json-problem.js";
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
 * cannot read: an entry of a newer schema version (`"session_log_version"`), or one that is not
 * a run log entry or breaks a rule of the log, such as a result for a call no reply made
 * (`"session_log_invalid"`, naming the entry's index and the rule, H24); or the store failed
 * to load the session or to append to it (`"session_store_failed"`, with the store's error as
 * `cause`); or a resume of an
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
 * Checks one stored entry on its own, before it is folded: a run log entry of a version this
 * release reads, with the fields of its type (H24).
 *
 * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
 *   session, the entry's index and the rule broken.
 */
function checkStoredEntry(sessionId: string, stored: unknown, index: number): RunLogEntry {
  const where = `Session ${JSON.stringify(sessionId)}: run log entry ${index}`;
  const entry = (
    stored !== null && typeof stored === "object" ? stored : {}
  ) as Partial<RunLogEntry> & { readonly v?: unknown };
  if (typeof entry.v === "number" && entry.v > RUN_LOG_VERSION) {
    throw new SessionError(
      "session_log_version",
      sessionId,
      `${where} has schema version ${entry.v}, but this release of Lattice reads version ${RUN_LOG_VERSION} and older. It was written by a newer Lattice: upgrade @lattice/core to continue this session. Nothing was changed.`,
    );
  }
  if (
    stored === null ||
    typeof stored !== "object" ||
    Array.isArray(stored) ||
    typeof entry.v !== "number" ||
    !Number.isInteger(entry.v) ||
    entry.v < 1 ||
    typeof entry.type !== "string" ||
    !ENTRY_TYPES.has(entry.type) ||
    typeof entry.runId !== "string"
  ) {
    throw new SessionError(
      "session_log_invalid",
      sessionId,
      `${where} is not a Lattice run log entry (type ${describeValue(entry.type)}, v ${describeValue(entry.v)}). The session was written by something else, or damaged; nothing was changed. Delete the session, or restore it from a backup.`,
    );
  }
  const problem = fieldProblem(entry as RunLogEntry);
  if (problem !== undefined) throw invalidEntry(sessionId, index, entry.type, problem);
  return entry as RunLogEntry;
}

/** The error for a stored entry that breaks a rule of the run log (H24). */
function invalidEntry(sessionId: string, index: number, type: string, rule: string): SessionError {
  return new SessionError(
    "session_log_invalid",
    sessionId,
    `Session ${JSON.stringify(sessionId)}: run log entry ${index} (${type}) ${rule}. The log was damaged, or written by something else: nothing was sent to the model and nothing was changed. Delete the session, or restore it from a backup.`,
  );
}

/** Why an entry lacks the fields of its type, as the rest of a sentence; `undefined` if not. */
function fieldProblem(entry: RunLogEntry): string | undefined {
  switch (entry.type) {
    case "run_started": {
      if (!isMessage(entry.message)) return "has no prompt message ({ role, content })";
      if (entry.message.role !== "user") {
        return `starts its run with a message whose role is ${describeValue(entry.message.role)}, not "user"`;
      }
      if (typeof entry.time !== "string") return "has no time";
      const content = entry.message.content as unknown;
      const blocks = Array.isArray(content) ? contentBlocksProblem(content, "prompt") : undefined;
      if (blocks !== undefined) return `holds ${blocks}`;
      if (entry.history === undefined) return undefined;
      const problem = historyProblem(entry.history);
      return problem === undefined
        ? undefined
        : `holds a history the model API would refuse (${problem.replace(/\.$/, "")})`;
    }
    case "run_resumed":
      return typeof entry.time === "string" ? undefined : "has no time";
    case "reply": {
      const message = entry.message as unknown;
      if (!isMessage(message) || !Array.isArray(message.content)) {
        return "has no assistant message with an array of content blocks";
      }
      if (message.role !== "assistant") {
        return `is a reply whose message has the role ${describeValue(message.role)}, not "assistant"`;
      }
      if (typeof entry.turn !== "number") return "has no turn number";
      if (typeof entry.stopReason !== "string") return "has no stopReason (a string)";
      if (!isUsage(entry.usage)) return "has no usage ({ inputTokens, outputTokens })";
      const blocks = contentBlocksProblem(message.content, "assistant");
      return blocks === undefined ? undefined : `holds ${blocks}`;
    }
    case "tool_result": {
      if (typeof entry.toolUseId !== "string") return "has no toolUseId";
      if (typeof entry.toolName !== "string" || typeof entry.status !== "string") {
        return "has no toolName and status (strings)";
      }
      if (entry.endTurn !== undefined && entry.endTurn !== true) {
        return "has an endTurn that is not true";
      }
      if (entry.usage !== undefined && !isUsage(entry.usage)) return "has a malformed usage";
      if (nestsDeeperThan(entry.structuredResult, MAX_STORED_VALUE_DEPTH)) return TOO_DEEP;
      const block = entry.block as Partial<ToolResultBlock> | null;
      if (block === null || typeof block !== "object" || block.type !== "tool_result") {
        return "has no tool_result block";
      }
      if (block.tool_use_id !== entry.toolUseId) {
        return `holds a tool_result block for ${describeValue(block.tool_use_id)}, not for its toolUseId ${describeValue(entry.toolUseId)}`;
      }
      const blocks = contentBlocksProblem([block], "user");
      return blocks === undefined ? undefined : `holds ${blocks}`;
    }
    case "mail":
      return Array.isArray(entry.texts) && entry.texts.every((text) => typeof text === "string")
        ? undefined
        : "has no texts (an array of strings)";
    case "interrupt": {
      if (!Array.isArray(entry.approvals) || entry.approvals.length === 0) {
        return "has no approvals (a non-empty array)";
      }
      const approvalIds = new Set<string>();
      const toolUseIds = new Set<string>();
      for (const approval of entry.approvals as readonly unknown[]) {
        const fields = approval as Partial<PendingApproval> | null;
        if (
          fields === null ||
          typeof fields !== "object" ||
          typeof fields.approvalId !== "string" ||
          typeof fields.toolUseId !== "string" ||
          typeof fields.toolName !== "string" ||
          typeof fields.kind !== "string"
        ) {
          return "holds an approval without a string approvalId, toolUseId, toolName and kind";
        }
        if (nestsDeeperThan(fields.input, MAX_STORED_VALUE_DEPTH)) return TOO_DEEP;
        if (approvalIds.has(fields.approvalId) || toolUseIds.has(fields.toolUseId)) {
          return `asks twice for the approval ${describeValue(fields.approvalId)} or the tool call ${describeValue(fields.toolUseId)}`;
        }
        approvalIds.add(fields.approvalId);
        toolUseIds.add(fields.toolUseId);
      }
      return undefined;
    }
    case "decisions": {
      const decisions = entry.decisions as unknown;
      if (decisions === null || typeof decisions !== "object" || Array.isArray(decisions)) {
        return "has no decisions (an object by approval id)";
      }
      for (const decision of Object.values(decisions)) {
        const fields = decision as { approved?: unknown; reason?: unknown } | null;
        if (
          fields === null ||
          typeof fields !== "object" ||
          typeof fields.approved !== "boolean" ||
          (fields.approved === false &&
            fields.reason !== undefined &&
            typeof fields.reason !== "string")
        ) {
          return "holds a decision that is not { approved: true, input? } or { approved: false, reason?: string }";
        }
        if (nestsDeeperThan((fields as { input?: unknown }).input, MAX_STORED_VALUE_DEPTH)) {
          return TOO_DEEP;
        }
      }
      return undefined;
    }
    case "run_finished":
      return RESULT_SUBTYPES.has(entry.subtype) &&
        typeof entry.result === "string" &&
        Array.isArray(entry.errors) &&
        entry.errors.every((error) => typeof error === "string") &&
        Number.isSafeInteger(entry.numTurns) &&
        entry.numTurns >= 0 &&
        isUsage(entry.usage)
        ? nestsDeeperThan(entry.structuredResult, MAX_STORED_VALUE_DEPTH)
          ? TOO_DEEP
          : undefined
        : "lacks a field of the run's end (subtype, result, errors, numTurns, usage)";
  }
}

/** The rule a value nested too deep to be sent or stored again breaks. */
const TOO_DEEP = `holds a value nested more than ${MAX_STORED_VALUE_DEPTH} levels deep (a session store keeps no deeper entry)`;

/** The subtypes a `run_finished` entry may hold. */
const RESULT_SUBTYPES: ReadonlySet<unknown> = new Set<SDKResultSubtype>([
  "success",
  "error_max_turns",
  "error_during_execution",
  "interrupted",
]);

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
  /** Their ids. */
  readonly ids: ReadonlySet<string>;
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
  readonly #messages: ModelMessage[] = [];
  /**
   * Mail texts to append to the last message (a user message), not yet merged into it: merged
   * once, when the conversation is read, so that a run of many mail entries costs linear time.
   */
  #mail: TextBlock[] | undefined;
  /** The latest run, once a `run_started` entry was applied. */
  run: LoggedRun | undefined;
  /** How many entries were applied. */
  size = 0;

  /**
   * The conversation, derived from the entries (R2): what the next model call is sent. A
   * message is never changed in place once in it (a merge replaces it).
   */
  get messages(): ModelMessage[] {
    if (this.#mail !== undefined) this.#mergeMail();
    return this.#messages;
  }

  /**
   * Checks one entry of a stored log and applies it: the one place where a stored log is
   * folded (loading a session for a prompt, `resume()`, `step()`, `endRun()`,
   * `stepMessages()`). The entry must have the fields of its type (its content blocks those
   * the position allows) and fit the log before it (H24): the first entry is a `run_started`,
   * and a `run_started` comes only once the run before it finished (and holds a history only
   * as the first entry); every other entry belongs to the latest run; a reply is the
   * assistant's, numbered as the run's next turn, and comes once the calls of the reply before
   * it have their results; a `tool_result` answers a call of the latest reply that has none
   * yet; an interrupt asks about such calls while no other interrupt waits, and its decisions
   * answer exactly the approvals it asked for; mail comes between batches; nothing but mail or
   * a new `run_started` follows a `run_finished`. Constant work per entry beyond its own size,
   * so loading stays linear in the log.
   *
   * @param sessionId - The session, for the error.
   * @param stored - The entry as the store gave it; its index is the count applied so far.
   * @returns The entry, typed.
   * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
   *   session, the entry's index and the rule it breaks; nothing was applied then.
   */
  load(sessionId: string, stored: SessionEntry): RunLogEntry {
    const index = this.size;
    const entry = checkStoredEntry(sessionId, stored, index);
    const problem = this.#placeProblem(entry);
    if (problem !== undefined) throw invalidEntry(sessionId, index, entry.type, problem);
    this.apply(entry);
    return entry;
  }

  /** Why an entry does not fit the log applied so far, as the rest of a sentence. */
  #placeProblem(entry: RunLogEntry): string | undefined {
    const run = this.run;
    if (entry.type === "run_started") {
      if (run === undefined) return undefined;
      if (!run.finished) {
        // Lattice refuses a prompt on a session whose run is unfinished (R8).
        return `starts run ${describeValue(entry.runId)} while run ${describeValue(run.runId)} is unfinished (it has no run_finished entry): a session takes a new prompt only once its run ended`;
      }
      return entry.history === undefined
        ? undefined
        : "holds a history, but only the log's first run_started may: a session keeps its own history";
    }
    if (run === undefined) {
      return "comes before the first run_started entry: a run log begins with the start of a run";
    }
    if (entry.runId !== run.runId) {
      return `belongs to run ${describeValue(entry.runId)}, but the latest run is ${describeValue(run.runId)}`;
    }
    if (run.finished && entry.type !== "mail") {
      return `follows the end of run ${describeValue(run.runId)} (its run_finished entry): only a new run_started may`;
    }
    const batch = run.batch;
    const open = batch !== undefined && !batch.complete ? batch : undefined;
    switch (entry.type) {
      case "reply":
        if (open !== undefined) {
          return `comes while the tool calls of the reply before it have no result (${unanswered(open)})`;
        }
        return entry.turn === run.numTurns + 1
          ? undefined
          : `is the reply of turn ${describeValue(entry.turn)}, but the run's next turn is ${run.numTurns + 1}`;
      case "mail":
        // It would come between the calls and their results in the conversation.
        return open === undefined
          ? undefined
          : `comes while the tool calls of the reply before it have no result (${unanswered(open)})`;
      case "tool_result":
        if (batch === undefined || !batch.ids.has(entry.toolUseId)) {
          return `answers the tool call ${describeValue(entry.toolUseId)}, which the latest reply did not make`;
        }
        return batch.results.has(entry.toolUseId)
          ? `is a second result for the tool call ${describeValue(entry.toolUseId)}`
          : undefined;
      case "interrupt":
        if (run.pending !== undefined) {
          return "comes while the interrupt before it still waits for decisions";
        }
        for (const approval of entry.approvals) {
          if (open === undefined || !open.ids.has(approval.toolUseId)) {
            return `asks for approval of the tool call ${describeValue(approval.toolUseId)}, which the latest reply did not make`;
          }
          if (open.results.has(approval.toolUseId)) {
            return `asks for approval of the tool call ${describeValue(approval.toolUseId)}, which already has a result`;
          }
        }
        return undefined;
      case "decisions": {
        const pending = run.pending;
        if (pending === undefined)
          return "holds decisions, but no interrupt of its run waits for them";
        // Exactly the approvals asked for, as resume() logs them (R16); own keys only, so that
        // an approval id such as "constructor" is not answered by the object's prototype.
        const asked = new Set(pending.map((approval) => approval.approvalId));
        for (const approvalId of Object.keys(entry.decisions)) {
          if (!asked.has(approvalId)) {
            return `holds a decision for ${describeValue(approvalId)}, which the interrupt did not ask for`;
          }
        }
        for (const approval of pending) {
          if (!Object.hasOwn(entry.decisions, approval.approvalId)) {
            return `has no decision for the pending approval ${describeValue(approval.approvalId)}`;
          }
        }
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** Applies one entry (already checked) to the conversation and the run. */
  apply(entry: RunLogEntry): void {
    this.size++;
    switch (entry.type) {
      case "run_started": {
        if (entry.history !== undefined) for (const message of entry.history) this.#push(message);
        this.#push(entry.message);
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
        this.#push(entry.message);
        run.numTurns = entry.turn;
        addUsage(run.usage, entry.usage);
        run.lastReply = entry;
        const toolUses = toolUsesOf(entry.message.content);
        run.batch =
          toolUses.length === 0
            ? undefined
            : {
                toolUses,
                ids: new Set(toolUses.map((call) => call.id)),
                results: new Map(),
                complete: false,
              };
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
        this.#push({ role: "user", content });
        return;
      }
      case "mail": {
        const texts: TextBlock[] = entry.texts.map((text) => ({ type: "text", text }));
        const pending = this.#mail;
        if (pending !== undefined) {
          for (const text of texts) pending.push(text);
          return;
        }
        const messages = this.#messages;
        const last = messages[messages.length - 1];
        if (last !== undefined && last.role === "user" && Array.isArray(last.content)) {
          this.#mail = texts;
        } else {
          this.#push({ role: "user", content: texts });
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
          if (!Object.hasOwn(entry.decisions, approval.approvalId)) continue;
          const decision = entry.decisions[approval.approvalId];
          if (decision !== undefined) decisions.set(approval.toolUseId, decision);
        }
        run.decisions = decisions;
        run.pending = undefined;
        return;
      }
      case "run_finished": {
        const run = this.run!;
        run.finished = true;
        run.finishedEntry = entry;
        const batch = run.batch;
        if (batch !== undefined && !batch.complete) this.#closeBatch(batch);
        return;
      }
    }
  }

  /**
   * Makes the conversation one the next prompt can be sent on when a run ended with calls
   * that have no result (a reply that repeated a tool_use id, H13; a resumed run that failed
   * before its calls ran): the API refuses a tool_use without its tool_result. When the
   * reply's ids are distinct, each call without a logged result is answered with an
   * `is_error` result saying so, next to the results that were logged, so the model sees what
   * ran. When an id repeats, no call ran (H13) and no result could tell the calls apart: the
   * reply's tool_use blocks are left out, its other blocks kept (the reply is left out when
   * nothing else remains). The log itself is not changed.
   */
  #closeBatch(batch: OpenBatch): void {
    const messages = this.messages;
    // While a batch is open nothing follows its reply in the conversation.
    const reply = messages[messages.length - 1];
    if (duplicateId(batch.toolUses) !== undefined) {
      if (reply === undefined || reply.role !== "assistant" || !Array.isArray(reply.content)) {
        return;
      }
      const kept = (reply.content as readonly ContentBlock[]).filter(
        (block) => block.type !== "tool_use",
      );
      if (kept.length === 0) messages.pop();
      else messages[messages.length - 1] = { role: "assistant", content: kept };
      return;
    }
    const content: ToolResultBlock[] = batch.toolUses.map(
      (call) =>
        batch.results.get(call.id)?.block ?? {
          type: "tool_result",
          tool_use_id: call.id,
          content: [
            {
              type: "text",
              text: `Tool call "${call.name}" (${call.id}) has no result: its run ended before the call settled (it may have started, or never ran).`,
            },
          ],
          is_error: true,
        },
    );
    this.#push({ role: "user", content });
  }

  /** Adds a message after the last, once pending mail is merged into the last. */
  #push(message: ModelMessage): void {
    if (this.#mail !== undefined) this.#mergeMail();
    this.#messages.push(message);
  }

  /** Merges the pending mail texts into the last message (a user message with blocks). */
  #mergeMail(): void {
    const messages = this.#messages;
    const last = messages[messages.length - 1]!;
    const content = [...(last.content as readonly ContentBlock[])];
    for (const text of this.#mail!) content.push(text);
    messages[messages.length - 1] = { role: "user", content };
    this.#mail = undefined;
  }
}

/** The `tool_use` blocks of a reply, in order. */
export function toolUsesOf(content: readonly ContentBlock[]): ToolUseBlock[] {
  const toolUses: ToolUseBlock[] = [];
  for (const block of content) if (block.type === "tool_use") toolUses.push(block);
  return toolUses;
}

/** The ids of an open batch's calls without a result, the first few of them. */
function unanswered(batch: OpenBatch): string {
  const ids: string[] = [];
  for (const call of batch.toolUses) {
    if (batch.results.has(call.id)) continue;
    if (ids.length === 3) return `${ids.join(", ")}, ...`;
    ids.push(describeValue(call.id));
  }
  return ids.join(", ");
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
