import { randomBytes, randomUUID } from "node:crypto";
import {
  checkApprovalDecisions,
  checkSessionId,
  type Prompt,
  type SDKMessage,
  type SDKResultMessage,
} from "@lattice/core";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions } from "@lattice/tools/internal";
import { Queue } from "bullmq";
import { checkConnection, closeClient, openClient, waitUntilReady } from "./connection.js";
import { RunQueueError } from "./errors.js";
import { RunKeys, stepJobId } from "./keys.js";
import { readStream } from "./read-stream.js";
import { recordError } from "./record-error.js";
import {
  checkId,
  checkName,
  checkPositive,
  checkPrompt,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  DEFAULT_RESUME_TIMEOUT_MS,
  DEFAULT_STEP_ATTEMPTS,
  DEFAULT_STEP_BACKOFF_MS,
  type EnqueuedRun,
  type EnqueueOptions,
  QUEUE_OPTION_KEYS,
  type QueueResumeOptions,
  type RunEventsOptions,
  type RunQueueOptions,
  type RunResultOptions,
  stepJobOptions,
} from "./run-queue-options.js";
import type { RunState } from "./run-records.js";
import {
  encodeRecord,
  RECORD_FIELD,
  STEP_JOB_NAME,
  type StepJobData,
  type StreamRecord,
} from "./step-job.js";
import { waitForAcceptance } from "./wait-for-acceptance.js";
import { WaitSignals } from "./wait-signals.js";

/**
 * A queue of agent runs on BullMQ (D3): producers enqueue runs and read their messages and
 * results from any process; workers ({@link createRunWorker}) take their steps.
 */
export interface RunQueue {
  /** The queue's name. */
  readonly name: string;
  /**
   * Resolves once Redis answers; every operation waits for it first.
   *
   * @throws `RunQueueError` `redis_unreachable`, naming the server, after `connectTimeoutMs`.
   */
  ready(): Promise<void>;
  /**
   * Enqueues a run of the agent named `agentName` on `prompt` and returns its ids at once; a
   * worker that knows the agent takes its first step. Runs on one session take turns: a run
   * enqueued while another is unfinished starts when that one ends.
   *
   * @throws `InvalidOptionError` for a bad argument; `RunQueueError` `redis_unreachable`.
   */
  enqueue(agentName: string, prompt: Prompt, options?: EnqueueOptions): Promise<EnqueuedRun>;
  /**
   * Waits for the run's result message, from any process: its final result, or an
   * `interrupted` one while it waits for approvals (resume it with {@link RunQueue.resume}).
   *
   * @throws `RunQueueError`: `run_not_found` for a run this queue never had, `unknown_agent`
   *   when no worker knows its agent, `session_busy` when its session's previous run waits for
   *   approvals or was aborted, `run_failed` when it failed without a result (its store down,
   *   say), `run_aborted` (named `"AbortError"`) after {@link RunQueue.abort},
   *   `result_timeout`, `closed` when {@link RunQueue.close} ends the wait; an `AbortError`
   *   when `signal` aborts.
   */
  result(runId: string, options?: RunResultOptions): Promise<SDKResultMessage>;
  /**
   * Streams the run's messages from its start, in any process (D3): `system`, then per step
   * the `assistant` or `user` message, and last the `result`. A step's messages arrive when
   * the step's outcome is stored. An `interrupted` result is followed by the resumed run's
   * messages; the iteration ends after the final result.
   *
   * @throws as {@link RunQueue.result} does, from the iterator.
   */
  events(runId: string, options?: RunEventsOptions): AsyncIterable<SDKMessage>;
  /**
   * Continues a session's unfinished run from any process (D7): with `decisions` for one that
   * waits for approvals, without for one cut by {@link RunQueue.abort} or a failure. Resolves
   * once a worker accepted it (the decisions are checked against the log and stored); the run
   * goes on there.
   *
   * @throws `RunQueueError` `run_not_found` when no worker took a run of the session,
   *   `resume_refused` with the worker's reason (`approval_missing`, `approval_unknown`,
   *   `not_interrupted`, ...), `result_timeout` when no worker accepted it in time, `closed`
   *   when {@link RunQueue.close} ends the wait (the resume stays queued).
   */
  resume(sessionId: string, options?: QueueResumeOptions): Promise<EnqueuedRun>;
  /**
   * Aborts a run wherever it is (D9): the worker holding it aborts its step (started handlers
   * see their signal), later steps do not run, `result()` rejects with `run_aborted`. The log
   * keeps what was done; {@link RunQueue.resume} continues it.
   *
   * @throws `RunQueueError` `run_not_found` for a run this queue never had (or whose records
   *   expired), `redis_unreachable`.
   */
  abort(runId: string, reason?: string): Promise<void>;
  /** Closes the queue's connections (not a client you passed). */
  close(): Promise<void>;
}

/**
 * Creates a queue of agent runs on BullMQ over Redis (D3). The connection opens at once, in
 * the background; each operation waits for it (up to `connectTimeoutMs` the first time), so
 * creating a queue never fails for want of Redis.
 *
 * @example
 * ```ts
 * const queue = createRunQueue({ connection: "redis://127.0.0.1:6379" });
 * const { runId } = await queue.enqueue("support", "Where is order 1042?", { sessionId: "c-7" });
 * const result = await queue.result(runId);
 * ```
 * @throws `UnknownOptionError` or `InvalidOptionError` for bad options.
 */
export function createRunQueue(options: RunQueueOptions): RunQueue {
  assertKnownOptions(options, QUEUE_OPTION_KEYS, "RunQueueOptions:");
  checkConnection("RunQueueOptions:", options?.connection);
  const name = checkName("RunQueueOptions:", "name", options.name, DEFAULT_QUEUE_NAME);
  const prefix = checkName("RunQueueOptions:", "prefix", options.prefix, DEFAULT_PREFIX);
  const connectTimeoutMs = checkPositive(
    "RunQueueOptions:",
    "connectTimeoutMs",
    options.connectTimeoutMs,
    DEFAULT_CONNECT_TIMEOUT_MS,
  );
  const opened = openClient(options.connection);
  const keys = new RunKeys(prefix, name);
  /** Fails a wait whose run's records are gone (Redis restarted without persistence). */
  const checkStillThere = async (runId: string, method: string): Promise<void> => {
    if ((await opened.client.exists(keys.run(runId))) === 0) {
      throw new RunQueueError(
        "run_not_found",
        `${method}: the records of run ${JSON.stringify(runId)} are gone from Redis while waiting (Redis restarted without persistence, or they expired). The run's log is in its session store; queue.resume(sessionId) continues an unfinished run.`,
        runId,
      );
    }
  };
  const queue = new Queue<StepJobData>(name, {
    connection: opened.client,
    prefix,
    defaultJobOptions: stepJobOptions(
      checkPositive(
        "RunQueueOptions:",
        "stepAttempts",
        options.stepAttempts,
        DEFAULT_STEP_ATTEMPTS,
      ),
      checkPositive(
        "RunQueueOptions:",
        "stepBackoffMs",
        options.stepBackoffMs,
        DEFAULT_STEP_BACKOFF_MS,
      ),
    ),
  });
  // Failures are reported by the operation that met them.
  queue.on("error", () => {});
  let closed = false;
  // Aborted by close(), which also ends every pending result(), events() and resume() wait (and
  // their connections close): each wait has a signal of its own (WaitSignals), so nothing
  // listens on this one and any number of waits print no MaxListenersExceededWarning.
  const closing = new AbortController();
  const waits = new WaitSignals();
  const closedError = (): RunQueueError =>
    new RunQueueError("closed", `Run queue "${name}" was closed while waiting; the run goes on.`);
  let readiness: Promise<void> | undefined;
  const ready = (): Promise<void> => {
    if (closed) {
      return Promise.reject(
        new RunQueueError("closed", `Run queue "${name}" was closed; create a new one.`),
      );
    }
    readiness ??= waitUntilReady(opened, connectTimeoutMs).catch((error: unknown) => {
      readiness = undefined;
      throw error;
    });
    return readiness;
  };

  const requireRun = async (runId: string, method: string): Promise<void> => {
    checkId(`${method}:`, "runId", runId);
    await ready();
    if ((await opened.client.exists(keys.run(runId))) === 0) {
      throw new RunQueueError(
        "run_not_found",
        `${method}: run ${JSON.stringify(runId)} is not on queue "${name}" (never enqueued there, or its records expired). Check the id and the queue's name and prefix.`,
        runId,
      );
    }
  };

  return Object.freeze({
    name,
    ready,

    async enqueue(agentName: string, prompt: Prompt, enqueueOptions?: EnqueueOptions) {
      checkId("enqueue():", "agentName", agentName);
      checkPrompt(prompt);
      assertKnownOptions(enqueueOptions, ["sessionId", "runId"], "EnqueueOptions:");
      const sessionId = enqueueOptions?.sessionId ?? randomUUID();
      const runId = enqueueOptions?.runId ?? randomUUID();
      // Well-formed UTF-16, so that the session's store keeps it as it is (H25).
      checkSessionId("EnqueueOptions:", sessionId);
      checkId("EnqueueOptions:", "runId", runId);
      if (runId.includes(":")) {
        throw new InvalidOptionError(
          "EnqueueOptions:",
          "runId",
          `must not contain ":" (it names the run's jobs, run:<runId>:<step>), received ${JSON.stringify(runId)}.`,
        );
      }
      await ready();
      if ((await opened.client.hsetnx(keys.run(runId), "agentName", agentName)) === 0) {
        throw new RunQueueError(
          "run_exists",
          `enqueue(): run ${JSON.stringify(runId)} is already on queue "${name}". Run ids name one run each: leave runId out for a fresh one.`,
          runId,
        );
      }
      await opened.client
        .multi()
        .hset(keys.run(runId), {
          sessionId,
          state: "queued" satisfies RunState,
          enqueuedAt: new Date().toISOString(),
        })
        .rpush(keys.waiting(sessionId), runId)
        .exec();
      const data: StepJobData = { v: 1, agentName, sessionId, runId, step: 0, prompt };
      await queue.add(STEP_JOB_NAME, data, { jobId: stepJobId(runId, 0) });
      return { runId, sessionId };
    },

    async result(runId: string, resultOptions?: RunResultOptions) {
      await requireRun(runId, "result()");
      const timeoutMs = resultOptions?.timeoutMs;
      const signals: AbortSignal[] = [];
      if (resultOptions?.signal !== undefined) signals.push(resultOptions.signal);
      if (timeoutMs !== undefined) signals.push(AbortSignal.timeout(timeoutMs));
      const wait = waits.open(signals.length === 0 ? undefined : AbortSignal.any(signals));
      const signal = wait.signal;
      try {
        let last: StreamRecord | undefined;
        for await (const batch of readStream(opened, keys.events(runId), signal)) {
          if (batch.records.length === 0) await checkStillThere(runId, "result()");
          last = batch.records[batch.records.length - 1] ?? last;
          if (!batch.caughtUp || last === undefined) continue;
          if (last.kind === "message") {
            if (last.message.type === "result") return last.message;
            continue;
          }
          if (last.kind !== "resumed") throw recordError(last, runId);
        }
      } catch (error) {
        if (closing.signal.aborted) throw closedError();
        if (
          timeoutMs !== undefined &&
          signal?.aborted === true &&
          resultOptions?.signal?.aborted !== true
        ) {
          throw new RunQueueError(
            "result_timeout",
            `result(): run ${JSON.stringify(runId)} gave no result within ${timeoutMs} ms. It goes on; ask again later, or check that workers of queue "${name}" are running.`,
            runId,
          );
        }
        throw error;
      } finally {
        wait.release();
      }
      throw new Error("unreachable: the stream reader never ends");
    },

    events(runId: string, eventsOptions?: RunEventsOptions): AsyncIterable<SDKMessage> {
      return {
        async *[Symbol.asyncIterator]() {
          await requireRun(runId, "events()");
          const wait = waits.open(eventsOptions?.signal);
          const batches = readStream(opened, keys.events(runId), wait.signal);
          const guarded = async function* () {
            try {
              yield* batches;
            } catch (error) {
              if (closing.signal.aborted) throw closedError();
              throw error;
            } finally {
              wait.release();
            }
          };
          for await (const batch of guarded()) {
            const records = batch.records;
            if (records.length === 0) await checkStillThere(runId, "events()");
            for (let index = 0; index < records.length; index++) {
              const record = records[index]!;
              if (record.kind === "message") {
                yield record.message;
                const message = record.message;
                if (message.type === "result" && message.subtype !== "interrupted") return;
                continue;
              }
              if (record.kind === "resumed") continue;
              // An abort or failure that a resume followed is history, not the end.
              if (batch.caughtUp && index === records.length - 1) throw recordError(record, runId);
            }
          }
        },
      };
    },

    async resume(sessionId: string, resumeOptions?: QueueResumeOptions) {
      checkSessionId("resume():", sessionId);
      assertKnownOptions(resumeOptions, ["decisions", "timeoutMs"], "QueueResumeOptions:");
      // Checked as agent.resume() checks them (H26): the job's data is JSON, so an edited input
      // past the bounds would fail BullMQ's JSON.stringify with a RangeError.
      const decisions = checkApprovalDecisions("QueueResumeOptions:", resumeOptions?.decisions);
      const timeoutMs = checkPositive(
        "QueueResumeOptions:",
        "timeoutMs",
        resumeOptions?.timeoutMs,
        DEFAULT_RESUME_TIMEOUT_MS,
      );
      await ready();
      const latest = await opened.client.hgetall(keys.session(sessionId));
      const runId = latest.runId;
      const agentName = latest.agentName;
      if (runId === undefined || agentName === undefined) {
        throw new RunQueueError(
          "run_not_found",
          `resume(): no worker of queue "${name}" has taken a run of session ${JSON.stringify(sessionId)}, so there is nothing to resume. Enqueue a run with queue.enqueue(agentName, prompt, { sessionId }).`,
        );
      }
      // The worker that accepts the resume marks the run going again (a refused one leaves it
      // as it was).
      const data: StepJobData = {
        v: 1,
        agentName,
        sessionId,
        runId,
        ...(decisions !== undefined ? { decisions } : {}),
      };
      const jobId = stepJobId(runId, `resume-${randomBytes(6).toString("hex")}`);
      await queue.add(STEP_JOB_NAME, data, { jobId });
      const wait = waits.open(undefined);
      try {
        await waitForAcceptance(queue, jobId, runId, timeoutMs, wait.signal);
      } catch (error) {
        // close() ends the wait; the resume job stays queued and runs when a worker takes it.
        if (closing.signal.aborted) throw closedError();
        throw error;
      } finally {
        wait.release();
      }
      return { runId, sessionId };
    },

    async abort(runId: string, reason?: string) {
      await requireRun(runId, "abort()");
      const why = reason ?? "aborted by queue.abort()";
      await opened.client
        .multi()
        .set(keys.abort(runId), why, "EX", 7 * 24 * 3600)
        .publish(keys.abortChannel, runId)
        .exec();
      // A run parked for approvals has no job that would see the flag: it ends here.
      const state = (await opened.client.hget(keys.run(runId), "state")) as RunState | null;
      if (state === "interrupted") {
        const record: StreamRecord = { kind: "aborted", message: why };
        await opened.client
          .multi()
          .hset(keys.run(runId), "state", "aborted" satisfies RunState)
          .xadd(keys.events(runId), "*", RECORD_FIELD, encodeRecord(record))
          .exec();
      }
    },

    async close() {
      if (closed) return;
      closed = true;
      closing.abort(closedError());
      waits.closeAll(closing.signal.reason);
      await queue.close();
      await closeClient(opened);
    },
  } satisfies RunQueue);
}
