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
export {
  createRunWorker,
  type RunWorker,
  type RunWorkerOptions,
  type RunWorkerStepInfo,
} from "./run-worker.js";
export type { ApprovalDecisions } from "./step-job.js";
