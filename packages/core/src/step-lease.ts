import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { SessionFencedError } from "./session-store.js";

/**
 * The lease a step of `agent.step()` runs under (`StepOptions.lease`), for callers that spread
 * a run's steps over workers, as `@lattice/bullmq` does with its session lease (H28):
 *
 * - every append of the step carries `fence` (`SessionAppendOptions.fence`), and the step
 *   raises the session's fence to it before it runs anything, so once a newer holder took the
 *   lease over, the store refuses whatever the old holder still tries to log;
 * - `held()` is consulted before each model request and each retry of one, before each tool
 *   call starts (in the runs of the step's agent tools too) and before each append; once it
 *   answers `false` the step stops at once (nothing more starts or is appended) and rejects
 *   with `SessionFencedError`.
 */
export interface StepLease {
  /**
   * The lease's generation, a fencing token: a non-negative safe integer, higher for each new
   * holder of the session's lease.
   */
  readonly fence: number;
  /**
   * Whether the lease is still held, by this process's clock. Synchronous and cheap: it is
   * called before every call and append, so it should compare a deadline with the time, not
   * ask a server. A process that was frozen (SIGSTOP, a long pause) past its deadline must
   * answer `false` when it wakes, before any timer of its own has run.
   */
  held(): boolean;
}

/**
 * Checks a `StepOptions.lease` value. Internal.
 *
 * @throws `InvalidOptionError` when it is not `{ fence, held }` with a non-negative integer
 *   `fence` and a function `held`.
 */
export function checkStepLease(prefix: string, lease: unknown): void {
  if (lease === undefined) return;
  const candidate = lease as Partial<StepLease> | null;
  if (
    candidate === null ||
    typeof candidate !== "object" ||
    !Number.isSafeInteger(candidate.fence) ||
    (candidate.fence as number) < 0 ||
    typeof candidate.held !== "function"
  ) {
    throw new InvalidOptionError(
      prefix,
      "lease",
      `must be { fence, held }: fence a non-negative integer (the lease's generation) and held() a function saying whether the lease still holds, received ${describeValue(lease)}.`,
    );
  }
}

/**
 * The error of a step whose lease no longer holds by this process's clock: nothing more is
 * started or appended (H28). Internal.
 */
export function leaseLapsed(sessionId: string, fence: number): SessionFencedError {
  return new SessionFencedError(
    sessionId,
    fence,
    undefined,
    `The lease (fence ${fence}) of this step of session ${JSON.stringify(sessionId)} ran out (by this process's clock: the process was probably frozen or starved past it), so the step stopped: nothing more was started or appended. The worker that takes the lease over goes on from the log.`,
  );
}
