import { RunQueueError } from "./errors.js";
import type { ControlRecord } from "./step-job.js";

/** The error a control record (`aborted`, `failed`) ends a run's stream with. Internal. */
export function recordError(record: ControlRecord, runId: string): RunQueueError {
  if (record.kind === "aborted") {
    return new RunQueueError(
      "run_aborted",
      `Run ${JSON.stringify(runId)} was aborted: ${record.message ?? "queue.abort()"}. What it did is in its session's log; queue.resume(sessionId) continues it.`,
      runId,
    );
  }
  const code =
    record.code === "unknown_agent" || record.code === "session_busy" ? record.code : "run_failed";
  return new RunQueueError(code, record.message ?? `Run ${JSON.stringify(runId)} failed.`, runId);
}
