import { storeFailure } from "./load-session.js";
import type { EntryObserver, RunEnv, StepOutcome } from "./run-env.js";
import type { RunLogEntry } from "./run-log-entry.js";
import { SessionConflictError, type SessionEntry } from "./session-store.js";
import { messageOfEntry } from "./step-messages.js";

/**
 * Appends an entry to a run's log: the state folds it (the conversation follows, R2), the
 * store's writer queues it (or, for a run without a session that may pause, `env.written`
 * keeps it), and the observers see it. The one way the steps add to a log. Internal.
 */
export function appendEntry(env: RunEnv, entry: RunLogEntry): void {
  env.state.apply(entry);
  const writer = env.writer;
  if (writer !== undefined) writer.push(entry as unknown as SessionEntry);
  else if (env.runtime.canPause) env.written.push(entry);
  for (const observer of env.observers) observer(entry, env);
}

/** The SDK message stream, an observer of the log's entries (R3). Internal. */
export const emitEntryMessages: EntryObserver = (entry, env) => {
  if (entry.type !== "reply" && entry.type !== "tool_result" && entry.type !== "compaction") return;
  const { placement } = env;
  const message = messageOfEntry(entry, env.state, env.sessionId, placement.parentToolUseId);
  if (message !== undefined) placement.emit(message);
};

/**
 * After a step: waits until its entries are stored (write-ahead, R6). A store failure ends the
 * run with `error_during_execution`, except where the run cannot go on past it: a conflict
 * (another run owns the session, R8) and a step taken for a worker (its caller retries the
 * step from what the log holds) reject. Internal.
 */
export async function settleStep(env: RunEnv): Promise<StepOutcome> {
  const writer = env.writer;
  if (writer === undefined) return undefined;
  const failure = await writer.flush();
  if (failure === undefined) return undefined;
  if (failure instanceof SessionConflictError) throw storeFailure(failure, writer, "continue");
  if (env.stepping !== undefined) throw storeFailure(failure, writer, "append to the run log");
  return {
    type: "finish",
    subtype: "error_during_execution",
    result: "",
    errors: [storeFailure(failure, writer, "append to the run log").message],
  };
}
