import type { ModelMessage, ToolResultBlock } from "@lattice/providers";
import { describeValue } from "@lattice/tools/internal";
import { historyProblem } from "./check-history.js";
import { contentBlocksProblem, MAX_STORED_VALUE_DEPTH } from "./content-blocks-problem.js";
import type { LoggedRun, OpenBatch } from "./logged-run.js";
import { nestsDeeperThan } from "./plain-json-problem.js";
import {
  type CompactionEntry,
  type PendingApproval,
  RUN_LOG_VERSION,
  type RunLogEntry,
} from "./run-log-entry.js";
import type { RunUsage, SDKResultSubtype } from "./sdk-message.js";
import { SessionError } from "./session-error.js";

const ENTRY_TYPES: ReadonlySet<string> = new Set([
  "run_started",
  "run_resumed",
  "reply",
  "tool_result",
  "mail",
  "interrupt",
  "decisions",
  "guardrail",
  "output_feedback",
  "compaction",
  "run_finished",
]);

/**
 * Checks one entry of a stored log before it is folded (H24): a run log entry of a version this
 * release reads, with the fields of its type (its content blocks those the position allows),
 * that fits the log before it. The first entry is a `run_started`, and a `run_started` comes
 * only once the run before it finished (and holds a history only as the first entry); every
 * other entry belongs to the latest run; a reply is the assistant's, numbered as the run's next
 * turn, and comes once the calls of the reply before it have their results; a `tool_result`
 * answers a call of the latest reply that has none yet; an interrupt asks about such calls while
 * no other interrupt waits, and its decisions answer exactly the approvals it asked for; mail
 * comes between batches, and so does a compaction (C3); nothing but mail, a compaction or a new
 * `run_started` follows a `run_finished`.
 * Constant work per entry beyond its own size.
 *
 * @param sessionId - The session, for the error.
 * @param stored - The entry as the store gave it.
 * @param index - The entry's index in the log (the count of entries applied before it).
 * @param run - The latest run of the log applied so far, if any.
 * @returns The entry, typed.
 * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
 *   session, the entry's index and the rule it breaks.
 */
export function checkLogEntry(
  sessionId: string,
  stored: unknown,
  index: number,
  run: LoggedRun | undefined,
): RunLogEntry {
  const entry = checkStoredEntry(sessionId, stored, index);
  const problem = placeProblem(run, entry);
  if (problem !== undefined) throw invalidEntry(sessionId, index, entry.type, problem);
  return entry;
}

/**
 * Checks one stored entry on its own, before it is folded: a run log entry of a version this
 * release reads, with the fields of its type (H24). Also checks the finished run a checkpoint
 * holds (C8). Internal.
 *
 * @throws {@link SessionError} `"session_log_version"` or `"session_log_invalid"`, naming the
 *   session, the entry's index and the rule broken.
 */
export function checkStoredEntry(sessionId: string, stored: unknown, index: number): RunLogEntry {
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
    case "guardrail":
      if (entry.kind !== "input" && entry.kind !== "output") {
        return `has the kind ${describeValue(entry.kind)}, not "input" or "output"`;
      }
      if (typeof entry.name !== "string" || typeof entry.tripwire !== "boolean") {
        return "has no name (a string) and tripwire (a boolean)";
      }
      if (!Number.isSafeInteger(entry.turn) || typeof entry.durationMs !== "number") {
        return "has no turn and durationMs (numbers)";
      }
      for (const key of ["reason", "retry", "error"] as const) {
        if (entry[key] !== undefined && typeof entry[key] !== "string") {
          return `has a ${key} that is not a string`;
        }
      }
      return nestsDeeperThan(entry.info, MAX_STORED_VALUE_DEPTH) ? TOO_DEEP : undefined;
    case "output_feedback":
      return (entry.reason === "invalid" ||
        entry.reason === "use_tool" ||
        entry.reason === "guardrail") &&
        typeof entry.text === "string"
        ? undefined
        : 'has no reason ("invalid", "use_tool" or "guardrail") and text (a string)';
    case "compaction":
      return compactionProblem(entry);
    case "run_finished":
      if (entry.output !== undefined && nestsDeeperThan(entry.output, MAX_STORED_VALUE_DEPTH)) {
        return TOO_DEEP;
      }
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
  "error_output_invalid",
  "guardrail_tripped",
  "error_budget",
  "error_context_overflow",
  "interrupted",
]);

/** Why a `compaction` entry lacks its fields (C3), or `undefined`. */
function compactionProblem(entry: CompactionEntry): string | undefined {
  if (typeof entry.strategy !== "string") return "has no strategy (a string)";
  if (entry.trigger !== "threshold" && entry.trigger !== "overflow" && entry.trigger !== "manual") {
    return `has the trigger ${describeValue(entry.trigger)}, not "threshold", "overflow" or "manual"`;
  }
  const range = entry.entries as { from?: unknown; to?: unknown } | null;
  if (
    range === null ||
    typeof range !== "object" ||
    !Number.isSafeInteger(range.from) ||
    !Number.isSafeInteger(range.to)
  ) {
    return "has no entries range ({ from, to }: integers)";
  }
  if (!Number.isSafeInteger(entry.replaced) || entry.replaced < 0) {
    return "has no replaced count (an integer >= 0)";
  }
  if (typeof entry.tokensBefore !== "number" || typeof entry.tokensAfter !== "number") {
    return "has no tokensBefore and tokensAfter (numbers)";
  }
  if (entry.usage !== undefined && !isUsage(entry.usage)) return "has a malformed usage";
  if (entry.messages !== undefined) {
    if (!Array.isArray(entry.messages) || !entry.messages.every(isMessage)) {
      return "has messages that are not { role, content } messages";
    }
    for (const message of entry.messages) {
      if (typeof message.content === "string") continue;
      const blocks = contentBlocksProblem(message.content as readonly unknown[], message.role);
      if (blocks !== undefined) return `holds ${blocks}`;
    }
  }
  if (entry.cleared !== undefined) {
    if (
      !Array.isArray(entry.cleared) ||
      !entry.cleared.every(
        (cleared) =>
          cleared !== null &&
          typeof cleared === "object" &&
          typeof cleared.toolUseId === "string" &&
          typeof cleared.placeholder === "string" &&
          (cleared.message === undefined || Number.isSafeInteger(cleared.message)),
      )
    ) {
      return "has cleared results that are not { toolUseId, placeholder } (strings)";
    }
  }
  return undefined;
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

/** Why an entry does not fit the log applied so far (its latest run), as the rest of a sentence. */
function placeProblem(run: LoggedRun | undefined, entry: RunLogEntry): string | undefined {
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
  if (run.finished && entry.type !== "mail" && entry.type !== "compaction") {
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
    case "output_feedback":
      if (run.lastReply === undefined || run.feedback !== undefined) {
        return "gives feedback on an answer, but no reply came since the run began or the last feedback";
      }
      return open === undefined
        ? undefined
        : `comes while the tool calls of the reply before it have no result (${unanswered(open)})`;
    case "guardrail":
    case "mail":
    case "compaction":
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
