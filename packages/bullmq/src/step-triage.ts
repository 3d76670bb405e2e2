import { UnrecoverableError } from "bullmq";
import { type RunState, runGoesOn } from "./run-records.js";
import type { StepJobData } from "./step-job.js";

/** A step that must not be retried, with the reason the queue reports. Internal. */
export class StepRefused extends UnrecoverableError {}

/**
 * What a step job asks for: a new run's first step (`prompt`), a later step of a run (`step`),
 * or the continuation of an unfinished run (`resume`, from `queue.resume()`). Internal.
 */
export type StepJobKind = "prompt" | "step" | "resume";

/** The kind of a step job, from its data. Internal. */
export function stepJobKind(data: StepJobData): StepJobKind {
  if (data.prompt !== undefined) return "prompt";
  return data.step !== undefined ? "step" : "resume";
}

/** What the triage of a step's failure knows besides the error. Internal. */
export interface StepSituation {
  readonly job: StepJobKind;
  readonly runId: string;
  readonly sessionId: string;
  /** The fence of the step's session lease (H28). */
  readonly leaseFence: number;
  /** Whether the step's lease still held when the step failed (H28). */
  readonly leaseHeld: boolean;
  /**
   * The run's abort flag (D9): its reason, `null` when the run was not aborted, and whether the
   * step's own signal was aborted, read together. Absent until the triage asks for it.
   */
  readonly abort?: { readonly reason: string | null; readonly stepAborted: boolean };
  /**
   * The session's latest run on the queue and its state (`null` when there is none, or its
   * record is gone). Absent until the triage asks for it.
   */
  readonly sessionRun?: { readonly runId: string | null; readonly state: RunState | null };
}

/**
 * What to do with a step whose `agent.step()` failed. Internal.
 *
 * - `read`: the triage needs a fact of the situation first; ask again with it.
 * - `raise_fence`: the store's fence is ahead of Redis's (H28): raise Redis's to `fence`
 *   (reporting `fence_behind`) and take the step again at once; if the raise fails, `drop`.
 * - `drop`: the lease no longer holds (H28): write nothing more; the step belongs to whoever
 *   took the session over, or waits for its turn.
 * - `delay`: no failure of the step: take it again shortly, without counting an attempt.
 * - `aborted`: `queue.abort()` cut the step (D9): the run ends aborted.
 * - `busy`: a new run's session holds a parked run that never ends alone (D10): the run fails
 *   with `session_busy` and `message`, never retried.
 * - `refuse`: the log refuses the resume (`approval_*`, `not_interrupted`, ...): the job fails
 *   with `message`, never retried, the run left as it was.
 * - `obsolete`: the step job has nothing left to do (its run paused or ended meanwhile).
 * - `retry`: a failure of the step: BullMQ tries it again with backoff, counting an attempt.
 */
export type StepTriage =
  | { readonly kind: "read"; readonly fact: "abort" | "session_run" }
  | { readonly kind: "raise_fence"; readonly fence: number }
  | { readonly kind: "drop" }
  | { readonly kind: "delay" }
  | { readonly kind: "aborted"; readonly reason: string }
  | { readonly kind: "busy"; readonly message: string }
  | { readonly kind: "refuse"; readonly message: string }
  | { readonly kind: "obsolete" }
  | { readonly kind: "retry" };

/**
 * Decides what a failed step does next, from the error `agent.step()` threw (its `code`, and
 * `currentFence` for `session_fenced`) and the situation alone: a pure function. Facts that
 * cost a Redis read (the abort flag, the session's latest run) are asked for with `read` only
 * when the decision depends on them, in that order.
 */
export function triageStepFailure(error: unknown, situation: StepSituation): StepTriage {
  const code = (error as { code?: unknown }).code;
  const currentFence = (error as { currentFence?: unknown }).currentFence;
  if (
    code === "session_fenced" &&
    typeof currentFence === "number" &&
    currentFence > situation.leaseFence &&
    situation.leaseHeld
  ) {
    // This worker holds the lease, yet the store has a higher fence: Redis's fence fell
    // behind the store's. Redis's is raised to it, so the next lease passes it (H28).
    return { kind: "raise_fence", fence: currentFence };
  }
  if (code === "session_fenced" || !situation.leaseHeld) return { kind: "drop" };
  if (code === "session_conflict" && situation.job === "step") {
    // Another writer appended between this step's load and its first append: a worker whose
    // lease lapsed, whose last append landed before this step raised the fence (H28). Not a
    // failure of the step: it is tried again at once, reading the log anew.
    return { kind: "delay" };
  }
  const abort = situation.abort;
  if (abort === undefined) return { kind: "read", fact: "abort" };
  if (abort.reason !== null && abort.stepAborted) return { kind: "aborted", reason: abort.reason };
  if (code === "session_conflict" && situation.job === "prompt") {
    // Another run of the session is unfinished: this one starts when it ends, unless that one
    // is parked (waiting for approvals, or aborted) and would never end alone.
    const other = situation.sessionRun;
    if (other === undefined) return { kind: "read", fact: "session_run" };
    // Only a run that is queued or running on this queue ends by itself; any other (parked,
    // or started outside this queue, or whose records expired) never would.
    if (runGoesOn(other.state)) return { kind: "delay" };
    return { kind: "busy", message: sessionBusyMessage(situation, other.runId, other.state) };
  }
  if (
    typeof code === "string" &&
    (code.startsWith("approval_") || code === "not_interrupted" || code === "session_not_found")
  ) {
    // A resume the log refuses; or a step job that is obsolete (the run paused or ended).
    if (situation.job !== "resume") return { kind: "obsolete" };
    return {
      kind: "refuse",
      message: `${code}: ${(error as Error).message.replaceAll("agent.resume(", "queue.resume(")}`,
    };
  }
  return { kind: "retry" };
}

/** Why a new run cannot start on a session whose latest run never ends alone. */
function sessionBusyMessage(
  situation: StepSituation,
  other: string | null,
  state: RunState | null,
): string {
  const why =
    state === "interrupted"
      ? `run ${JSON.stringify(other)}, which waits for approvals`
      : state === "aborted"
        ? `run ${JSON.stringify(other)}, which was aborted`
        : state === "failed"
          ? `run ${JSON.stringify(other)}, which failed and could not be ended in the session store`
          : "a run that is not running on this queue (it was started elsewhere, or its queue records expired)";
  const { runId, sessionId } = situation;
  return `Run ${JSON.stringify(runId)} cannot start: session ${JSON.stringify(sessionId)} has an unfinished ${why}. Continue it with queue.resume(${JSON.stringify(sessionId)}${state === "interrupted" ? ", { decisions }" : ""}) and enqueue this prompt again once it ended, or use another session.`;
}
