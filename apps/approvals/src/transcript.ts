import type { SDKMessage, SDKResultMessage, ToolResultBlock } from "agent-lattice";
import { shellQuote } from "./args.js";
import type { SessionDraft } from "./decision-draft.js";
import type { LoggedCall, PendingApproval } from "./session-log.js";

const PREVIEW_LENGTH = 240;

/**
 * The lines that show one message of a run: the assistant's text (`assistant> …`), its tool
 * calls (`→ name {input}`), and their results (`← name: …`, or `✗ name: …` for an error).
 * System messages and the result show nothing here.
 *
 * @param message - A message of `agent.query()` or `agent.resume()`.
 * @param toolNames - The tool of each call seen so far, by tool_use id; calls of assistant
 *   messages are added to it, so a result can be named.
 * @returns The lines to print.
 */
export function messageLines(message: SDKMessage, toolNames: Map<string, string>): string[] {
  const lines: string[] = [];
  if (message.type === "assistant") {
    for (const block of message.message.content) {
      if (block.type === "text" && block.text.trim() !== "") {
        lines.push(`assistant> ${block.text.trim().replaceAll("\n", "\n           ")}`);
      } else if (block.type === "tool_use") {
        toolNames.set(block.id, block.name);
        lines.push(`  → ${block.name} ${JSON.stringify(block.input)}`);
      }
    }
  } else if (message.type === "user") {
    for (const block of message.message.content) {
      const name = toolNames.get(block.tool_use_id) ?? "tool";
      const mark = block.is_error === true ? "✗" : "←";
      lines.push(`  ${mark} ${name}: ${preview(resultText(block.content))}`);
    }
  }
  return lines;
}

/**
 * One line on how a run ended, with its turns, tokens and time:
 * `✓ success: 2 turns, 297 in / 83 out tokens, 0.4 s`, or `✗ <subtype>: <errors>`.
 *
 * @param result - The run's result message.
 * @returns The line.
 */
export function resultLine(result: SDKResultMessage): string {
  const stats = `${result.numTurns} ${result.numTurns === 1 ? "turn" : "turns"}, ${result.usage.inputTokens} in / ${result.usage.outputTokens} out tokens, ${(result.durationMs / 1000).toFixed(1)} s`;
  if (!result.isError) return `✓ ${result.subtype}: ${stats}`;
  return `✗ ${result.subtype}: ${result.errors.join(" ") || "no details"} (${stats})`;
}

/** What {@link pendingLines} shows. */
export interface PendingView {
  /** The session. */
  readonly session: string;
  /** The calls waiting, in tool_use order. */
  readonly pending: readonly PendingApproval[];
  /** Every call of the step they belong to (the model's latest reply). */
  readonly batch: readonly LoggedCall[];
  /** Decisions taken so far, waiting for the others. */
  readonly draft: SessionDraft;
  /** How to run the app again, from {@link commandPrefix}. */
  readonly prefix: string;
}

/**
 * The lines that show the calls waiting for a decision, the decisions taken so far, and the
 * exact commands that approve or deny the others.
 *
 * @param view - {@link PendingView}.
 * @returns The lines to print.
 */
export function pendingLines(view: PendingView): string[] {
  const { session, pending, batch, draft, prefix } = view;
  const waitingIds = new Set(pending.map((approval) => approval.toolUseId));
  const others = batch.filter((call) => !waitingIds.has(call.id));
  const waitsWith =
    others.length === 0
      ? ""
      : ` (${namesOf(others)} ${others.length === 1 ? "waits" : "wait"} with ${pending.length === 1 ? "it" : "them"})`;
  const lines = [
    "",
    `⏸ Session ${session} waits for approval of ${count(pending.length, "call")}.`,
    `  Nothing of this step has run yet${waitsWith}: it runs once every call below is decided.`,
  ];
  for (const [index, approval] of pending.entries()) {
    lines.push(`  ${index + 1}. ${approval.toolName} ${JSON.stringify(approval.input)}`);
    lines.push(`     approval id: ${approval.approvalId}`);
    const taken = draft[approval.approvalId];
    if (taken !== undefined) {
      const what = taken.decision.approved
        ? taken.decision.input !== undefined
          ? `approved with input ${JSON.stringify(taken.decision.input)}`
          : "approved"
        : `denied${taken.decision.reason !== undefined ? ` (${JSON.stringify(taken.decision.reason)})` : ""}`;
      lines.push(`     decided: ${what} at ${taken.decidedAt}; waits for the others`);
    }
  }
  const undecided = pending.filter((approval) => draft[approval.approvalId] === undefined);
  const base = `${prefix} %s ${shellQuote(session)}`;
  lines.push("");
  if (undecided.length === 1) {
    const id = undecided[0]!.approvalId;
    lines.push(`Approve: ${base.replace("%s", "approve")} ${id}`);
    lines.push(`Deny:    ${base.replace("%s", "deny")} ${id} --reason "<why>"`);
  } else {
    lines.push("Decide each (the run resumes after the last decision):");
    for (const approval of undecided) {
      lines.push(`  ${base.replace("%s", "approve")} ${approval.approvalId}`);
      lines.push(`  ${base.replace("%s", "deny")} ${approval.approvalId} --reason "<why>"`);
    }
    if (undecided.length === pending.length) {
      lines.push(`or all at once: ${base.replace("%s", "approve")} --all`);
      lines.push(`            or: ${base.replace("%s", "deny")} --all --reason "<why>"`);
    }
  }
  lines.push(`(approve … --input '<json>' runs the call with an input you changed)`);
  return lines;
}

/**
 * `1 call`, `2 calls`.
 *
 * @param n - How many.
 * @param noun - The noun, singular.
 * @returns The count and the noun.
 */
export function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}

/**
 * A one-line preview of a text: line breaks become spaces, and a long text is cut.
 *
 * @param text - The text.
 * @param length - The most characters to keep.
 * @returns The preview.
 */
export function preview(text: string, length = PREVIEW_LENGTH): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

/** `check_status ×2, deploy`: the tools of some calls, each once, with how many calls. */
function namesOf(calls: readonly LoggedCall[]): string {
  const counts = new Map<string, number>();
  for (const call of calls) counts.set(call.name, (counts.get(call.name) ?? 0) + 1);
  return [...counts].map(([name, n]) => (n === 1 ? name : `${name} ×${n}`)).join(", ");
}

function resultText(content: ToolResultBlock["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "[image]")).join("");
}
