import type { Queue } from "bullmq";
import { stepJobId } from "./keys.js";
import type { RunRecords } from "./run-records.js";
import type { SessionInbox } from "./session-inbox.js";
import type { StepJobData } from "./step-job.js";

/** What {@link droppedOrphan} works on. Internal. */
export interface OrphanSettings {
  /** The queue's name, for the message. */
  readonly queueName: string;
  readonly queue: Queue<StepJobData>;
  readonly records: RunRecords;
  readonly inbox: SessionInbox;
  /** How long a run may wait for its first job before it counts as orphaned. */
  readonly leaseMs: number;
}

/**
 * Takes a run out of the head of its session's line when it will never start (D10): it has no
 * first job (its producer stopped between recording the run and adding the job) and was
 * recorded over `leaseMs` ago, or its records are gone. Its waiters learn it failed. Returns
 * whether it did, so that the runs behind it are not held up for ever. Internal.
 */
export async function droppedOrphan(
  settings: OrphanSettings,
  head: string,
  sessionId: string,
): Promise<boolean> {
  const { records } = settings;
  const { state, enqueuedAt } = await records.queued(head);
  if (typeof state === "string" && state !== "queued") return false;
  if (typeof enqueuedAt === "string" && Date.now() - Date.parse(enqueuedAt) < settings.leaseMs)
    return false;
  if ((await settings.queue.getJob(stepJobId(head, 0))) !== undefined) return false;
  await records.leaveLine(sessionId, head);
  if (typeof state === "string") {
    const message = `Run ${JSON.stringify(head)} on session ${JSON.stringify(sessionId)} never started: it was recorded on queue "${settings.queueName}" but its first job was never added (the producer stopped between the two). Nothing of it ran; enqueue the prompt again.`;
    await records.publish(head, [{ kind: "failed", code: "run_failed", message }]);
    await records.markEnded(head, "failed");
    await settings.inbox.afterRunEnded(head, sessionId, { text: message, isError: true });
  }
  return true;
}
