export type { RedisConnection } from "./connection.js";
export { RunQueueError, type RunQueueErrorCode } from "./errors.js";
export { createRunQueue, type RunQueue } from "./run-queue.js";
export {
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  DEFAULT_STEP_ATTEMPTS,
  DEFAULT_STEP_BACKOFF_MS,
  type EnqueuedRun,
  type EnqueueOptions,
  type QueueResumeOptions,
  type RunEventsOptions,
  type RunQueueOptions,
  type RunResultOptions,
} from "./run-queue-options.js";
export { createRunWorker, type RunWorker } from "./run-worker.js";
export type { RunWorkerOptions, RunWorkerStepInfo } from "./run-worker-options.js";
export type { ApprovalDecisions } from "./step-job.js";
