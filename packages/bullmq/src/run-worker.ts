import type { AnyToolDefinition } from "@lattice/tools";
import { DelayedError, type Job, Queue, UnrecoverableError, Worker } from "bullmq";
import { buildAgents } from "./build-agents.js";
import {
  closeClient,
  duplicateClient,
  type OpenedClient,
  openClient,
  waitUntilReady,
} from "./connection.js";
import { endFailedRun, failureCause } from "./end-failed-run.js";
import { FanOut } from "./fan-out.js";
import { RunKeys } from "./keys.js";
import { takeSessionLease } from "./lease.js";
import { RunRecords } from "./run-records.js";
import { checkRunWorkerOptions, type RunWorkerOptions } from "./run-worker-options.js";
import { SessionInbox } from "./session-inbox.js";
import type { StepJobData } from "./step-job.js";
import { StepRefused } from "./step-triage.js";
import { type StepWorker, takeStep } from "./take-step.js";

/** A worker taking the steps of runs on a queue (D3, D4). */
export interface RunWorker {
  /** The queue it works for. */
  readonly name: string;
  /**
   * Resolves once Redis answers.
   *
   * @throws `RunQueueError` `redis_unreachable`, naming the server.
   */
  ready(): Promise<void>;
  /**
   * Stops taking steps, waits for the steps in progress to end, and closes the worker's
   * connections (not a client you passed).
   */
  close(): Promise<void>;
}

/**
 * Creates a worker that takes steps of runs from a queue (D3): each job is one step — a model
 * call or a batch of tool calls — taken from the run's log with `agent.step()`, whose outcome
 * is stored before the job is acknowledged; the next step is a new job `run:<runId>:<step>`
 * (D4). A step of a killed worker is taken again by another once BullMQ finds it stalled, and
 * continues from the log (D5, R18). One step per session at a time, by a lease (D10). Starts
 * at once.
 *
 * @example
 * ```ts
 * const worker = createRunWorker({
 *   connection: "redis://127.0.0.1:6379",
 *   agents: { support: { model: "claude-sonnet-4-6", tools: [lookupOrder] } },
 *   sessionStore: postgresSessionStore({ connectionString }),
 * });
 * ```
 * @throws `UnknownOptionError` or `InvalidOptionError` for bad options, a `sessionStore` that
 *   does not declare `fencedAppends: true`, an agent that is not on `sessionStore`, or agent
 *   options that `createAgent` refuses.
 */
export function createRunWorker<TContext = unknown>(
  options: RunWorkerOptions<TContext>,
): RunWorker {
  const settings = checkRunWorkerOptions(options);
  const { name, prefix, store, fanOutTools, leaseMs, lockDurationMs, stalledIntervalMs } = settings;
  const contextOf = options.context;
  const reportError = (error: unknown): void => {
    try {
      options.onError?.(error instanceof Error ? error : new Error(String(error)));
    } catch {
      // A failing listener never reaches the worker (H1).
    }
  };

  const opened = openClient(options.connection);
  const originals = new Map<string, Map<string, AnyToolDefinition>>();
  const fanOut =
    fanOutTools.size === 0
      ? undefined
      : new FanOut({
          opened,
          prefix,
          queueName: name,
          concurrency: settings.callConcurrency,
          lockDurationMs,
          stalledIntervalMs,
          tools: originals,
          context:
            contextOf === undefined
              ? undefined
              : (call) =>
                  contextOf({
                    agentName: call.agentName,
                    sessionId: call.sessionId,
                    runId: call.runId,
                    step: undefined,
                  }),
          reportError,
          runAborted: (runId) => records.aborted(runId),
        });
  const agents = buildAgents<TContext>(options.agents, store, (agentName, definition) => {
    if (fanOut === undefined || !fanOutTools.has(definition.name)) return definition;
    const byName = originals.get(agentName) ?? new Map<string, AnyToolDefinition>();
    originals.set(agentName, byName);
    byName.set(definition.name, definition);
    return fanOut.remote(agentName, definition);
  });
  const subscriber: OpenedClient = duplicateClient(opened);
  const client = opened.client;
  const keys = new RunKeys(prefix, name);
  const queue = new Queue<StepJobData>(name, {
    connection: client,
    prefix,
    defaultJobOptions: settings.jobOptions,
  });
  queue.on("error", reportError);
  const records = new RunRecords({ client, keys, keepMs: settings.keepMs });
  const inbox = new SessionInbox({ client, keys, queue, records });
  /** The abort controllers of the steps in progress, by run. */
  const active = new Map<string, Set<AbortController>>();

  // queue.abort() reaches the worker holding the run through pub/sub (D9).
  subscriber.client.subscribe(keys.abortChannel).catch(reportError);
  subscriber.client.on("message", (channel: string, runId: string) => {
    if (channel !== keys.abortChannel) return;
    const controllers = active.get(runId);
    if (controllers === undefined) return;
    records.abortReason(runId).then((reason) => {
      for (const controller of controllers) {
        controller.abort(abortError(reason ?? "aborted by queue.abort()"));
      }
    }, reportError);
  });

  const stepWorker: StepWorker<TContext> = {
    queueName: name,
    queue,
    agents,
    store,
    records,
    inbox,
    leaseMs,
    takeLease: (sessionId) =>
      takeSessionLease(client, keys.lease(sessionId), keys.fence(sessionId), leaseMs),
    active,
    contextOf,
    reportError,
  };

  /**
   * Takes the job's step. When its last attempt fails, the run is ended here, while the job
   * still holds its lock: a worker killed meanwhile leaves the job stalled, and the worker that
   * takes it over tries the step once more and ends the run then.
   */
  const processStep = async (job: Job<StepJobData>, token: string | undefined): Promise<void> => {
    try {
      await takeStep(stepWorker, job, token);
    } catch (error) {
      if (error instanceof DelayedError || error instanceof StepRefused) throw error;
      const failure = error instanceof Error ? error : new Error(String(error));
      const last =
        failure instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!last) throw failure;
      const cause = failureCause(job.data, job.attemptsMade + 1, failure);
      // If ending the run fails too (Redis gone), the job fails with its own error and the
      // "failed" listener below tries again.
      await endFailedRun(stepWorker, job.data, cause).catch((endError) => {
        reportError(endError);
        throw failure;
      });
      throw new StepRefused(cause);
    }
  };

  const worker = new Worker<StepJobData>(name, processStep, {
    connection: client,
    prefix,
    concurrency: settings.concurrency,
    lockDuration: lockDurationMs,
    stalledInterval: stalledIntervalMs,
    maxStalledCount: 3,
    // An idle worker waits for jobs no longer than it waits between looks for stalled jobs
    // (BullMQ's 5 s at most): a step it finds stalled is taken over soon after, not 5 s later.
    drainDelay: Math.min(5, Math.max(1, Math.ceil(stalledIntervalMs / 1_000))),
  });
  worker.on("error", reportError);
  /** The failure handlers in progress: close() waits for them before closing Redis. */
  const endings = new Set<Promise<void>>();
  // A job that failed for good without processStep ending its run (it stalled too often, or
  // ending the run failed): its run ends as failed here.
  worker.on("failed", (job, error) => {
    if (job === undefined || error instanceof StepRefused) return;
    const attempts = job.opts.attempts ?? 1;
    if (!(error instanceof UnrecoverableError) && job.attemptsMade < attempts) return;
    const ending = endFailedRun(
      stepWorker,
      job.data,
      failureCause(job.data, job.attemptsMade, error),
    ).catch(reportError);
    endings.add(ending);
    void ending.finally(() => endings.delete(ending));
  });

  let closed = false;
  return Object.freeze({
    name,
    ready: () => waitUntilReady(opened, settings.connectTimeoutMs),
    async close() {
      if (closed) return;
      closed = true;
      // Without Redis there is no step in progress to wait for, and BullMQ would wait for
      // the connection: close at once.
      const connected = client.status === "ready";
      if (!connected) client.disconnect();
      await worker.close(!connected);
      await Promise.allSettled([...endings]);
      await fanOut?.close();
      await queue.close();
      await closeClient(subscriber);
      await closeClient(opened);
    },
  } satisfies RunWorker);
}

/** The error a step's signal is aborted with when `queue.abort()` reaches its worker (D9). */
function abortError(reason: string): Error {
  const error = new Error(`Run aborted: ${reason}`);
  error.name = "AbortError";
  return error;
}
