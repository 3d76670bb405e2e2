import type { ToolResultBlock } from "@lattice/providers";
import { RunLogState } from "./run-log.js";
import type { SDKAssistantMessage, SDKUserMessage } from "./sdk-message.js";
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
): (SDKAssistantMessage | SDKUserMessage)[] {
  const { sessionId, runId, step } = options;
  const turn = Math.floor(step / 2) + 1;
  const wantsReply = step % 2 === 0;
  const state = new RunLogState();
  const found: (SDKAssistantMessage | SDKUserMessage)[] = [];
  for (const stored of entries) {
    const batchBefore = state.run?.batch;
    const completeBefore = batchBefore?.complete === true;
    const entry = state.load(sessionId, stored);
    if (entry.runId !== runId) continue;
    if (entry.type === "reply" && wantsReply && entry.turn === turn) {
      found.push({
        type: "assistant",
        message: entry.message,
        stopReason: entry.stopReason,
        sessionId,
        runId,
        parentToolUseId: null,
      });
    }
    if (
      entry.type === "tool_result" &&
      !wantsReply &&
      state.run?.numTurns === turn &&
      !completeBefore &&
      state.run.batch === batchBefore &&
      state.run.batch?.complete === true
    ) {
      const last = state.messages[state.messages.length - 1]!;
      found.push({
        type: "user",
        message: { role: "user", content: last.content as ToolResultBlock[] },
        sessionId,
        runId,
        parentToolUseId: null,
      });
    }
  }
  return found;
}
