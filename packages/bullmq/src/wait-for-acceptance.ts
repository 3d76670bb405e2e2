import { Job, type Queue } from "bullmq";
import { RunQueueError } from "./errors.js";
import type { StepJobData } from "./step-job.js";

/**
 * Polls a resume job until a worker accepted it, refused it, or the time is up; `closed`
 * (the queue's close()) ends the wait with its reason.
 */
export async function waitForAcceptance(
  queue: Queue<StepJobData>,
  jobId: string,
  runId: string,
  timeoutMs: number,
  closed: AbortSignal,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    closed.throwIfAborted();
    const job = await Job.fromId(queue, jobId);
    // Completed jobs are removed: it ran.
    if (job === undefined) return;
    const progress = job.progress as { accepted?: boolean } | number;
    if (typeof progress === "object" && progress?.accepted === true) return;
    const state = await job.getState();
    if (state === "completed") return;
    if (state === "failed") {
      throw new RunQueueError(
        "resume_refused",
        `resume(): the worker refused to resume run ${JSON.stringify(runId)}: ${job.failedReason}`,
        runId,
      );
    }
    if (Date.now() >= deadline) {
      throw new RunQueueError(
        "result_timeout",
        `resume(): no worker of queue "${queue.name}" accepted the resume of run ${JSON.stringify(runId)} within ${timeoutMs} ms. It stays queued and runs when a worker takes it; check that workers are running.`,
        runId,
      );
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, 25);
      function done(): void {
        clearTimeout(timer);
        closed.removeEventListener("abort", done);
        resolve();
      }
      closed.addEventListener("abort", done, { once: true });
    });
  }
}
