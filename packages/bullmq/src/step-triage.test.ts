import { describe, expect, it } from "vitest";
import type { RunState } from "./run-records.js";
import { type StepSituation, stepJobKind, triageStepFailure } from "./step-triage.js";

/** An error as `agent.step()` throws them: a message and, for Lattice's own, a code. */
function failure(code?: string, message = "it failed", extra: object = {}): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code }, extra);
}

const held: StepSituation = {
  job: "step",
  runId: "r1",
  sessionId: "s1",
  leaseFence: 100,
  leaseHeld: true,
};
const notAborted = { reason: null, stepAborted: false } as const;
const withOther = (state: RunState | null, runId: string | null = "r0"): StepSituation => ({
  ...held,
  job: "prompt",
  abort: notAborted,
  sessionRun: { runId, state },
});

describe("stepJobKind", () => {
  it("D4, D7: a job with a prompt starts a run, one with a step number continues it, one with neither resumes it", () => {
    const base = { v: 1, agentName: "a", sessionId: "s1", runId: "r1" } as const;
    expect(stepJobKind({ ...base, step: 0, prompt: "hi" })).toBe("prompt");
    expect(stepJobKind({ ...base, step: 3 })).toBe("step");
    expect(stepJobKind({ ...base })).toBe("resume");
    expect(stepJobKind({ ...base, decisions: { appr_1: { approved: true } } })).toBe("resume");
  });
});

describe("triageStepFailure: what a failed step does next, from the error and the situation alone", () => {
  it("H28: a store fence ahead of the lease this worker still holds raises Redis's fence to it", () => {
    const error = failure("session_fenced", "fenced", { currentFence: 250 });
    expect(triageStepFailure(error, held)).toEqual({ kind: "raise_fence", fence: 250 });
    for (const job of ["prompt", "resume"] as const) {
      expect(triageStepFailure(error, { ...held, job })).toEqual({
        kind: "raise_fence",
        fence: 250,
      });
    }
  });

  it("H28: a step fenced off by a newer holder, or whose lease no longer holds, is dropped, whatever the error", () => {
    for (const currentFence of [undefined, 100, 99, "250"]) {
      expect(
        triageStepFailure(failure("session_fenced", "fenced", { currentFence }), held),
      ).toEqual({ kind: "drop" });
    }
    const lost = { ...held, leaseHeld: false };
    for (const error of [
      failure("session_fenced", "fenced", { currentFence: 250 }),
      failure("session_conflict"),
      failure("approval_missing"),
      failure(),
    ]) {
      expect(triageStepFailure(error, lost)).toEqual({ kind: "drop" });
      expect(triageStepFailure(error, { ...lost, job: "resume", abort: notAborted })).toEqual({
        kind: "drop",
      });
    }
  });

  it("H28: a conflict on a later step (an append of a worker that lost the lease) is taken again at once, before any read", () => {
    expect(triageStepFailure(failure("session_conflict"), held)).toEqual({ kind: "delay" });
  });

  it("D9: the abort flag is asked for only once the lease held and the error was no fence or step conflict", () => {
    for (const [job, code] of [
      ["step", undefined],
      ["step", "approval_missing"],
      ["prompt", "session_conflict"],
      ["prompt", undefined],
      ["resume", "session_conflict"],
      ["resume", "not_interrupted"],
    ] as const) {
      expect(triageStepFailure(failure(code), { ...held, job })).toEqual({
        kind: "read",
        fact: "abort",
      });
    }
  });

  it("D9: a step cut by queue.abort() ends its run aborted, with the reason; an abort flag the step's signal did not see changes nothing", () => {
    const aborted = { ...held, abort: { reason: "stop it", stepAborted: true } };
    for (const code of [undefined, "session_conflict", "not_interrupted"]) {
      expect(triageStepFailure(failure(code), { ...aborted, job: "prompt" })).toEqual({
        kind: "aborted",
        reason: "stop it",
      });
    }
    const unseen = { ...held, abort: { reason: "stop it", stepAborted: false } };
    expect(triageStepFailure(failure(), unseen)).toEqual({ kind: "retry" });
    const cutOtherwise = { ...held, abort: { reason: null, stepAborted: true } };
    expect(triageStepFailure(failure(), cutOtherwise)).toEqual({ kind: "retry" });
  });

  it("D10: a new run whose session has another unfinished run asks for that run, and waits its turn while it is queued or running", () => {
    const situation: StepSituation = { ...held, job: "prompt", abort: notAborted };
    expect(triageStepFailure(failure("session_conflict"), situation)).toEqual({
      kind: "read",
      fact: "session_run",
    });
    for (const state of ["queued", "running"] as const) {
      expect(triageStepFailure(failure("session_conflict"), withOther(state))).toEqual({
        kind: "delay",
      });
    }
  });

  it("D10: a new run whose session holds a run that never ends alone fails with session_busy, saying which run and what to do", () => {
    const busy = (state: RunState | null, runId: string | null = "r0") => {
      const triage = triageStepFailure(failure("session_conflict"), withOther(state, runId));
      expect(triage.kind).toBe("busy");
      return (triage as { message: string }).message;
    };
    expect(busy("interrupted")).toBe(
      'Run "r1" cannot start: session "s1" has an unfinished run "r0", which waits for approvals. Continue it with queue.resume("s1", { decisions }) and enqueue this prompt again once it ended, or use another session.',
    );
    expect(busy("aborted")).toContain(
      'unfinished run "r0", which was aborted. Continue it with queue.resume("s1")',
    );
    expect(busy("failed")).toContain(
      'run "r0", which failed and could not be ended in the session store',
    );
    for (const [state, runId] of [
      [null, null],
      [null, "r0"],
      ["ended", "r0"],
    ] as const) {
      expect(busy(state, runId)).toContain(
        "a run that is not running on this queue (it was started elsewhere, or its queue records expired)",
      );
    }
  });

  it("D7: a resume the log refuses is refused for good with the log's code, its advice naming queue.resume()", () => {
    const resume: StepSituation = { ...held, job: "resume", abort: notAborted };
    for (const code of [
      "approval_missing",
      "approval_unknown",
      "not_interrupted",
      "session_not_found",
    ]) {
      const triage = triageStepFailure(
        failure(code, "No decision for appr_1: call agent.resume(sessionId, { decisions })."),
        resume,
      );
      expect(triage).toEqual({
        kind: "refuse",
        message: `${code}: No decision for appr_1: call queue.resume(sessionId, { decisions }).`,
      });
    }
  });

  it("D4, D7: a step or first-step job that the log says is obsolete (its run paused or ended meanwhile) has nothing left to do", () => {
    for (const job of ["step", "prompt"] as const) {
      for (const code of ["approval_unknown", "not_interrupted", "session_not_found"]) {
        expect(triageStepFailure(failure(code), { ...held, job, abort: notAborted })).toEqual({
          kind: "obsolete",
        });
      }
    }
  });

  it("D4: any other failure is the step's own: BullMQ retries it with backoff", () => {
    for (const job of ["step", "prompt", "resume"] as const) {
      for (const error of [
        failure(),
        failure("provider_error"),
        failure("session_store_failed"),
        failure("session_log_invalid"),
      ]) {
        expect(triageStepFailure(error, { ...held, job, abort: notAborted })).toEqual({
          kind: "retry",
        });
      }
    }
    // A conflict on a resume is no step conflict and no new run's wait: it is retried.
    expect(
      triageStepFailure(failure("session_conflict"), { ...held, job: "resume", abort: notAborted }),
    ).toEqual({ kind: "retry" });
    // A thrown value that is not an Error is retried as well.
    expect(triageStepFailure("a string", { ...held, abort: notAborted })).toEqual({
      kind: "retry",
    });
  });
});
