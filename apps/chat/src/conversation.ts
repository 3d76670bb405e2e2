import { RUN_LOG_VERSION, type RunLogEntry, type SessionEntry } from "agent-lattice";
import { compactionLine, conversationLines, toolResultLine } from "./transcript.js";

/**
 * The lines that show a session's history, read from its run log (the entries the agent
 * appends to the store): every prompt, the assistant's replies, tool calls and their results
 * in the order they were logged, where a run was resumed, and whether the last run is still
 * unfinished.
 *
 * @param entries - The session's entries, as `store.load(sessionId)` returns them.
 * @returns The lines to print; none for an empty session. An entry this release does not know
 *   (of a newer schema version, or another type) is shown as one line saying so.
 */
export function historyLines(entries: readonly SessionEntry[]): string[] {
  const lines: string[] = [];
  let unfinished = false;
  for (const raw of entries) {
    const entry = raw as unknown as RunLogEntry;
    if (typeof entry.v !== "number" || entry.v > RUN_LOG_VERSION) {
      lines.push(`  (an entry of run log version ${String(entry.v)}, newer than this chat)`);
      continue;
    }
    switch (entry.type) {
      case "run_started":
        lines.push(...conversationLines([...(entry.history ?? []), entry.message]));
        unfinished = true;
        break;
      case "run_resumed":
        lines.push("  ↻ resumed");
        break;
      case "reply":
        lines.push(...conversationLines([entry.message]));
        break;
      case "tool_result":
        lines.push(toolResultLine(entry.toolName, entry.block));
        break;
      case "mail":
        for (const text of entry.texts) lines.push(`  ✉ ${text}`);
        break;
      case "guardrail":
        // A guardrail that passed leaves nothing to show; one that tripped ended its run, whose
        // run_finished entry says so.
        break;
      case "compaction":
        // The log keeps every message before it: the history shows them all, and where the
        // model's view was made smaller.
        lines.push(
          compactionLine({
            strategy: entry.strategy,
            messagesReplaced: entry.replaced,
            toolResultsCleared: entry.cleared?.length ?? 0,
            tokensBefore: entry.tokensBefore,
            tokensAfter: entry.tokensAfter,
          }),
        );
        break;
      case "output_feedback":
        lines.push(`  ↩ sent back to the model: ${entry.text}`);
        break;
      case "run_finished":
        unfinished = false;
        for (const error of entry.errors) lines.push(`  ✗ ${entry.subtype}: ${error}`);
        break;
      default:
        lines.push(`  (an entry of type ${JSON.stringify((raw as { type?: unknown }).type)})`);
    }
  }
  if (unfinished) lines.push("  … this run did not finish: /resume finishes it");
  return lines;
}
