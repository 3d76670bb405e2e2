import { SessionError, type SessionStore } from "@lattice/core";
import { type LoggedRun, RunLogState } from "@lattice/core/internal";

/**
 * Whether the run log already holds these decisions for the run: a `decisions` entry of the run
 * that answered exactly these approval ids — a resume delivered again after its worker stored
 * them (D5, D7). The stored log is folded through core's `RunLogState`, as `step()` folds it,
 * never read entry by entry here. A log that cannot be folded (H24) is left to the step, which
 * refuses it with its own error: the entries before the bad one answer meanwhile.
 *
 * @throws what `store.load` throws.
 */
export async function decisionsLogged(
  store: SessionStore,
  sessionId: string,
  runId: string,
  decisions: { readonly [approvalId: string]: unknown },
): Promise<boolean> {
  const { entries } = await store.load(sessionId);
  const state = new RunLogState();
  // A run's record outlives the next run's start, so decisions of an earlier run still count.
  const runs = new Set<LoggedRun>();
  try {
    for (const entry of entries) {
      state.load(sessionId, entry);
      if (state.run?.runId === runId) runs.add(state.run);
    }
  } catch (error) {
    if (!(error instanceof SessionError)) throw error;
  }
  const ids = Object.keys(decisions);
  for (const run of runs) {
    for (const answered of run.answeredApprovalIds) {
      if (answered.size === ids.length && ids.every((id) => answered.has(id))) return true;
    }
  }
  return false;
}
