import type { ToolResultBlock } from "@lattice/providers";
import type { ReplyEntry, RunLogEntry } from "./run-log-entry.js";
import { RunLogState } from "./run-log-state.js";
import type {
  SDKAssistantMessage,
  SDKCompactBoundaryMessage,
  SDKUserMessage,
} from "./sdk-message.js";
import type { SessionEntry } from "./session-store.js";

/** Options of {@link stepMessages}. */
export interface StepMessagesOptions {
  /** The session the entries are of. */
  readonly sessionId: string;
  /** The run whose step it is. */
  readonly runId: string;
  /** The step: the model call of turn `t` is step `2t - 2`, its batch step `2t - 1`. */
  readonly step: number;
}

/**
 * The messages a step of a run gave, derived from the session's log alone: the `assistant`
 * message of a model step's reply, or the `user` message of a batch's results (once every
 * call has one) — what `agent.step()`'s `onMessage` received for that step, but for the run's
 * `system` message and `stream_event`s, which the log does not keep. For a runner that must
 * publish a step's messages again, say after a crash between storing the step and publishing
 * it. Empty when the log does not hold that step (yet).
 *
 * @param entries - The session's entries, as `SessionStore.load()` gives them.
 * @throws `SessionError` `session_log_version` or `session_log_invalid` for a log this
 *   release cannot read or one that is damaged (H24), naming the entry and the rule broken.
 */
export function stepMessages(
  entries: readonly SessionEntry[],
  options: StepMessagesOptions,
): (SDKAssistantMessage | SDKUserMessage | SDKCompactBoundaryMessage)[] {
  const { sessionId, runId, step } = options;
  const turn = Math.floor(step / 2) + 1;
  const wantsReply = step % 2 === 0;
  const state = new RunLogState();
  const found: (SDKAssistantMessage | SDKUserMessage | SDKCompactBoundaryMessage)[] = [];
  for (const stored of entries) {
    const entry = state.load(sessionId, stored);
    if (entry.runId !== runId) continue;
    const message = messageOfEntry(entry, state, sessionId, null);
    if (message === undefined) continue;
    // A reply is its turn's model step; the results of its batch are the step after it.
    // A compaction is part of the model step it came before (C5).
    const wanted =
      message.type === "assistant"
        ? wantsReply && (entry as ReplyEntry).turn === turn
        : message.type === "system"
          ? wantsReply && (state.run?.numTurns ?? 0) + 1 === turn
          : !wantsReply && state.run?.numTurns === turn;
    if (wanted) found.push(message);
  }
  return found;
}

/**
 * The SDK message an entry gives once it is applied to `state`, if any (R3): a reply's
 * `assistant` message, the `user` message of a batch's results when this entry completed
 * the batch, or a compaction's `compact_boundary` (C3). The live message stream and {@link stepMessages} derive messages with it alone,
 * so a step's messages rebuilt from the log are the ones its run emitted. Internal.
 *
 * @param entry - The entry, just applied to `state`.
 * @param state - The log folded up to and including `entry`.
 */
export function messageOfEntry(
  entry: RunLogEntry,
  state: RunLogState,
  sessionId: string,
  parentToolUseId: string | null,
): SDKAssistantMessage | SDKUserMessage | SDKCompactBoundaryMessage | undefined {
  if (entry.type === "compaction") {
    const summary = entry.strategy === "compact" ? entry.messages?.[0] : undefined;
    const text =
      summary === undefined
        ? undefined
        : typeof summary.content === "string"
          ? summary.content
          : (summary.content[0] as { text?: string } | undefined)?.text;
    return {
      type: "system",
      subtype: "compact_boundary",
      strategy: entry.strategy,
      trigger: entry.trigger,
      messagesReplaced: entry.replaced,
      toolResultsCleared: entry.cleared?.length ?? 0,
      tokensBefore: entry.tokensBefore,
      tokensAfter: entry.tokensAfter,
      ...(text !== undefined ? { summary: text } : {}),
      sessionId,
      runId: entry.runId,
      parentToolUseId,
    };
  }
  if (entry.type === "reply") {
    return {
      type: "assistant",
      message: entry.message,
      stopReason: entry.stopReason,
      sessionId,
      runId: entry.runId,
      parentToolUseId,
    };
  }
  if (entry.type !== "tool_result") return undefined;
  const batch = state.run?.batch;
  // An entry of a batch that is complete now, and was not before it (a later result of the
  // same id is refused or ignored, so it is not the one the batch keeps).
  if (batch?.complete !== true || batch.results.get(entry.toolUseId) !== entry) return undefined;
  const last = state.messages[state.messages.length - 1]!;
  return {
    type: "user",
    message: { role: "user", content: last.content as ToolResultBlock[] },
    sessionId,
    runId: entry.runId,
    parentToolUseId,
  };
}
