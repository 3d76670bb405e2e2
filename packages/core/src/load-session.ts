import type { LatticeError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { errorMessage } from "./error-message.js";
import type { RunLogEntry } from "./run-log-entry.js";
import type { RunLogState } from "./run-log-state.js";
import { SessionError } from "./session-error.js";
import {
  SessionConflictError,
  SessionFencedError,
  type SessionSnapshot,
  type SessionStore,
} from "./session-store.js";
import type { SessionWriter } from "./session-writer.js";

/**
 * Loads a session's run log and folds it into `state`, checking each entry as it goes (H24):
 * the one way a run, `resume()`, `step()` and `endRun()` read a stored log. With
 * `fromCheckpoint`, a store that keeps checkpoints gives its latest one and the entries after
 * it, and only those are folded (C8). Internal.
 *
 * @throws `SessionError` `session_store_failed` when the store fails or answers something that
 *   is not a snapshot; `session_log_version` or `session_log_invalid` for a log this release
 *   cannot read, naming the entry.
 */
export async function loadSession(
  store: SessionStore,
  sessionId: string,
  state: RunLogState,
  fromCheckpoint = false,
): Promise<{
  readonly entries: readonly RunLogEntry[];
  readonly version: number;
  /** Whether `entries` are only those after a checkpoint (C8). */
  readonly partial: boolean;
}> {
  const checkpoints = fromCheckpoint && store.checkpoints === true;
  let snapshot: SessionSnapshot;
  try {
    snapshot = await (checkpoints
      ? store.load(sessionId, { fromCheckpoint: true })
      : store.load(sessionId));
  } catch (error) {
    throw new SessionError(
      "session_store_failed",
      sessionId,
      `${storeLabel(store)} failed to load session ${JSON.stringify(sessionId)}: ${errorMessage(error)}. Nothing ran; retry once the store works.`,
      { cause: error },
    );
  }
  const { entries, version } = (snapshot ?? {}) as Partial<SessionSnapshot>;
  if (!Array.isArray(entries) || !Number.isSafeInteger(version) || (version as number) < 0) {
    throw new SessionError(
      "session_store_failed",
      sessionId,
      `${storeLabel(store)} answered load(${JSON.stringify(sessionId)}) with ${describeValue(snapshot)}, not a snapshot ({ entries: an array, version: an integer >= 0 }). Nothing ran; fix the store's load().`,
    );
  }
  const checkpoint = checkpoints ? snapshot.checkpoint : undefined;
  if (checkpoint !== undefined) {
    // A checkpoint that does not fit its entries, or that this release cannot read, is passed
    // over: the whole log is folded instead (it is never removed, C8).
    if (
      checkpoint === null ||
      typeof checkpoint !== "object" ||
      !Number.isSafeInteger(checkpoint.version) ||
      checkpoint.version + entries.length !== version ||
      !state.fromCheckpoint(checkpoint.version, checkpoint.state)
    ) {
      return loadSession(store, sessionId, state, false);
    }
  }
  for (const entry of entries) state.load(sessionId, entry);
  return {
    entries: entries as unknown as readonly RunLogEntry[],
    version: version as number,
    partial: checkpoint !== undefined,
  };
}

/** How messages name a store: by its `name`, when it has one. Internal. */
export function storeLabel(store: SessionStore): string {
  return typeof store.name === "string" && store.name !== ""
    ? `the session store ${store.name}`
    : "the session store";
}

/**
 * The error a run stops with when its store failed while it tried to do `doing`; a conflict
 * stays a conflict (R8), a fence stays a fence (H28). Internal.
 */
export function storeFailure(failure: unknown, writer: SessionWriter, doing: string): LatticeError {
  const sessionId = writer.sessionId;
  // The writer must stop, not reload: the error says so as it is (H28).
  if (failure instanceof SessionFencedError) return failure;
  if (failure instanceof SessionConflictError) {
    return new SessionConflictError(
      sessionId,
      failure.expectedVersion,
      failure.actualVersion,
      `Session ${JSON.stringify(sessionId)} was written by another run while this one tried to ${doing}: another process started or resumed a run on it. Nothing of this run was appended after that; the other run owns the session now.`,
    );
  }
  return new SessionError(
    "session_store_failed",
    sessionId,
    `${storeLabel(writer.store)} failed to ${doing} of session ${JSON.stringify(sessionId)}: ${errorMessage(failure)}. The entries appended before stay; once the store works, continue with agent.resume(${JSON.stringify(sessionId)}).`,
    { cause: failure },
  );
}
