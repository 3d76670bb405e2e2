import {
  endRun,
  type SDKResultMessage,
  SessionFencedError,
  type SessionStore,
} from "@lattice/core";
import { retryDelay, type SessionLease } from "./lease.js";
import { type RunRecords, runIsParked } from "./run-records.js";
import { resultText, type SessionInbox } from "./session-inbox.js";
import type { StepJobData } from "./step-job.js";

/** What ending a failed run needs of its worker. Internal. */
export interface FailedRunSettings {
  readonly store: SessionStore;
  readonly records: RunRecords;
  readonly inbox: SessionInbox;
  readonly leaseMs: number;
  /** Takes the session's lease once; `undefined` when a step holds it. */
  readonly takeLease: (sessionId: string) => Promise<SessionLease | undefined>;
  /** The worker's `onError`, never throwing. */
  readonly reportError: (error: unknown) => void;
}

/** Why a run ended as failed: the step, its attempts and the last error. Internal. */
export function failureCause(data: StepJobData, attempts: number, error: Error): string {
  return `Step ${data.step ?? "(resume)"} of run ${data.runId} failed ${attempts} time(s); the last error: ${error.message}`;
}

/**
 * Ends the run of a step that failed on its last attempt as failed, with the cause (poison
 * steps, D4): through `endRun()` of core, or, when the store refuses that too, as `run_failed`.
 * A resume that never got going leaves its run as it was (`queue.resume()` reports it). Safe
 * to do twice: a run already ended gives its result again, and its reply is posted once. It
 * holds the session's lease meanwhile, and its append carries the lease's fence, as a step's
 * do (H28). Internal.
 *
 * @throws when the session's lease stayed taken, or the lease was lost: the run is left as it
 *   is (the worker that holds the session goes on with it).
 */
export async function endFailedRun(
  settings: FailedRunSettings,
  data: StepJobData,
  cause: string,
): Promise<void> {
  const { records, inbox } = settings;
  const { runId, sessionId, step } = data;
  if (step === undefined && data.prompt === undefined) {
    if (runIsParked(await records.state(runId))) return;
  }
  const lease = await leaseToEnd(settings, sessionId);
  if (lease === undefined) {
    throw new Error(
      `Run ${JSON.stringify(runId)} could not be ended as failed (${cause}): the lease on session ${JSON.stringify(sessionId)} stayed taken by another step for ${2 * settings.leaseMs} ms. The run is left as it is; the step that holds the session goes on with it.`,
    );
  }
  try {
    let result: SDKResultMessage;
    try {
      result = await endRun({ store: settings.store, sessionId, runId, errors: [cause], lease });
    } catch (endError) {
      // Fenced off: a newer lease holder goes on with the run, which must not end here.
      if (endError instanceof SessionFencedError) throw endError;
      const message = `${cause}. Ending the run in its session store failed too: ${(endError as Error).message}`;
      await records.publish(runId, [{ kind: "failed", code: "run_failed", message }], lease);
      await records.markEnded(runId, "failed", lease);
      await inbox.afterRunEnded(runId, sessionId, { text: message, isError: true });
      return;
    }
    await records.publish(runId, [{ kind: "message", message: result }], lease);
    await records.markEnded(runId, "ended", lease);
    await inbox.afterRunEnded(runId, sessionId, resultText(data.agentName, result));
  } finally {
    await lease.release().catch(settings.reportError);
  }
}

/**
 * Takes the session's lease to end a run, waiting up to twice `leaseMs` for a step that holds
 * it; `undefined` when it stayed taken.
 */
async function leaseToEnd(
  settings: FailedRunSettings,
  sessionId: string,
): Promise<SessionLease | undefined> {
  const until = performance.now() + 2 * settings.leaseMs;
  for (;;) {
    const lease = await settings.takeLease(sessionId);
    if (lease !== undefined || performance.now() > until) return lease;
    await new Promise((resolve) => setTimeout(resolve, retryDelay(settings.leaseMs)));
  }
}
