export type { RedisConnection } from "./connection.js";
export { RunQueueError, type RunQueueErrorCode } from "./errors.js";
export {
  createRunQueue,
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  DEFAULT_STEP_ATTEMPTS,
  DEFAULT_STEP_BACKOFF_MS,
  type EnqueuedRun,
  type EnqueueOptions,
  type QueueResumeOptions,
  type RunEventsOptions,
  type RunQueue,
  type RunQueueOptions,
  type RunResultOptions,
} from "./run-queue.js";
export { createRunWorker, type RunWorker } from "./run-worker.js";
export type { RunWorkerOptions, RunWorkerStepInfo } from "./run-worker-options.js";
export type { ApprovalDecisions } from "./step-job.js";
