import {
  type Agent,
  type AgentStepResult,
  type SDKMessage,
  SessionFencedError,
  type SessionStore,
} from "@lattice/core";
import { DelayedError, type Job, type Queue } from "bullmq";
import { decisionsLogged } from "./decisions-logged.js";
import { droppedOrphan } from "./dropped-orphan.js";
import { RunQueueError } from "./errors.js";
import { stepJobId } from "./keys.js";
import { retryDelay, type SessionLease } from "./lease.js";
import { publishStepCommands } from "./publish-step-commands.js";
import { LeaseGone, type RunRecords, runHasEnded } from "./run-records.js";
import type { RunWorkerStepInfo } from "./run-worker-options.js";
import { resultText, type SessionInbox } from "./session-inbox.js";
import { STEP_JOB_NAME, type StepJobData, type StreamRecord } from "./step-job.js";
import { StepRefused, type StepSituation, stepJobKind, triageStepFailure } from "./step-triage.js";

/** What taking a step needs of its worker. Internal. */
export interface StepWorker<TContext> {
  /** The queue's name, for messages. */
  readonly queueName: string;
  readonly queue: Queue<StepJobData>;
  readonly agents: ReadonlyMap<string, Agent<TContext>>;
  readonly store: SessionStore;
  readonly records: RunRecords;
  readonly inbox: SessionInbox;
  readonly leaseMs: number;
  /** Takes the session's lease (one step per session at a time, D10); `undefined` when taken. */
  readonly takeLease: (sessionId: string) => Promise<SessionLease | undefined>;
  /** The abort controllers of the steps in progress, by run: how `queue.abort()` reaches them. */
  readonly active: Map<string, Set<AbortController>>;
  /** The worker's `context` option. */
  readonly contextOf: ((step: RunWorkerStepInfo) => TContext | Promise<TContext>) | undefined;
  /** The worker's `onError`, never throwing. */
  readonly reportError: (error: unknown) => void;
}

/**
 * Takes the step a job asks for (D3, D4): under the session's lease (D10), `agent.step()` takes
 * it from the run's log, and its outcome is published on the run's stream, under the lease
 * (H28), before the next step's job is added. A failure of `agent.step()` goes through
 * {@link triageStepFailure}. Internal.
 *
 * @throws `DelayedError` when the job was moved to the delayed set (its session busy, its turn
 *   not come, its lease lost); {@link StepRefused} for a step never to be retried; any other
 *   error for a failure BullMQ retries.
 */
export async function takeStep<TContext>(
  worker: StepWorker<TContext>,
  job: Job<StepJobData>,
  token: string | undefined,
): Promise<void> {
  const { records, inbox, leaseMs, reportError } = worker;
  const data = job.data;
  const { runId, sessionId, agentName } = data;
  const agent = worker.agents.get(agentName);
  if (agent === undefined) {
    const known = [...worker.agents.keys()].map((agent) => JSON.stringify(agent)).join(", ");
    // Another worker of the queue may know it (a rolling deploy): the job is tried again,
    // with backoff, on whichever worker takes it next.
    if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
      throw new Error(
        `This worker does not know the agent ${JSON.stringify(agentName)} (it knows ${known}).`,
      );
    }
    const message = `No worker of queue "${worker.queueName}" that took run ${JSON.stringify(runId)} knows its agent ${JSON.stringify(agentName)}: it was tried ${job.attemptsMade + 1} times (the last worker knows ${known}). Add the agent to the workers' agents option, or enqueue one of the names they know.`;
    await records.publish(runId, [{ kind: "failed", code: "unknown_agent", message }]);
    await records.markEnded(runId, "failed");
    await inbox.afterRunEnded(runId, sessionId, { text: message, isError: true });
    throw new StepRefused(message);
  }
  /**
   * Moves the job to the delayed set, to be tried again shortly without counting an attempt;
   * returns the error that tells BullMQ so, for the caller to throw.
   */
  const delayed = async (): Promise<DelayedError> => {
    await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token);
    return new DelayedError();
  };
  // Runs of one session start in the order they were enqueued (D10).
  if (data.prompt !== undefined) {
    const head = await records.headOfLine(sessionId);
    if (head !== null && head !== runId && !(await droppedOrphan(worker, head, sessionId))) {
      throw await delayed();
    }
  }
  // One step per session at a time (D10): a step of the same session waits its turn.
  const lease = await worker.takeLease(sessionId);
  if (lease === undefined) throw await delayed();
  // Registered before the abort flag is read, so an abort published meanwhile reaches it.
  const controller = new AbortController();
  const controllers = worker.active.get(runId) ?? new Set<AbortController>();
  worker.active.set(runId, controllers);
  controllers.add(controller);
  lease.onLost(() =>
    controller.abort(
      new Error(
        `This worker lost its lease on session ${sessionId} (Redis did not answer its renewals in time), so the step was stopped; another worker takes it from the log.`,
      ),
    ),
  );
  const peeked = inbox.peek(sessionId);
  const messages: StreamRecord[] = [];
  let taken: number | undefined;
  let publishing: Promise<void> | undefined;
  let accepting: Promise<unknown> | undefined;
  let starting: Promise<unknown> | undefined;
  /** Set once this worker gives the lease back itself: from then on it is not lost. */
  let handedBack = false;
  /**
   * Drops the step because its lease no longer holds (H28): the worker was frozen or cut off
   * past it, or a newer holder fenced the session off. Nothing more is written; the worker is
   * told (onError), and the job moves to the delayed set, without counting an attempt: it
   * belongs to the worker that took the session over, or waits for its turn here.
   */
  const dropStep = async (cause: unknown): Promise<never> => {
    reportError(
      cause instanceof SessionFencedError
        ? cause
        : new SessionFencedError(
            sessionId,
            lease.fence,
            undefined,
            `This worker's lease (fence ${lease.fence}) on session ${JSON.stringify(sessionId)} no longer held (the worker was frozen or cut off past it), so it dropped step ${data.step ?? "(resume)"} of run ${JSON.stringify(runId)} and wrote nothing more; the worker that takes the session over goes on from the log.`,
          ),
    );
    await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token).catch(() => {});
    throw new DelayedError();
  };
  // Everything from here gives the lease back when it ends, however it ends.
  try {
    const kind = stepJobKind(data);
    // A resume continues an aborted run: it clears the flag once accepted.
    const abortReason = kind === "resume" ? null : await records.abortReason(runId);
    if (abortReason !== null) {
      handedBack = true;
      await lease.release().catch(reportError);
      await records.publish(runId, [{ kind: "aborted", message: abortReason }]);
      await records.markEnded(runId, "aborted");
      return;
    }
    const context =
      worker.contextOf === undefined
        ? undefined
        : await worker.contextOf({ agentName, sessionId, runId, step: data.step });
    let outcome: AgentStepResult;
    // A resume delivered again after a crash may find its decisions already stored (the
    // worker died after storing them): the log says so, and the run just goes on.
    let decisions = data.decisions;
    if (
      decisions !== undefined &&
      (await decisionsLogged(worker.store, sessionId, runId, decisions))
    ) {
      decisions = undefined;
    }
    try {
      outcome = await agent.step(sessionId, {
        runId,
        ...(data.prompt !== undefined ? { prompt: data.prompt } : {}),
        ...(data.step !== undefined ? { expectedStep: data.step } : {}),
        ...(decisions !== undefined ? { decisions } : {}),
        ...(context !== undefined ? { context } : {}),
        ...(data.chain !== undefined ? { chain: data.chain } : {}),
        mailbox: inbox.mailbox(sessionId),
        takeMail: peeked.take,
        signal: controller.signal,
        // Its fence goes with every append, and the step stops once it lapses (H28).
        lease,
        onMessage: (message: SDKMessage) => {
          // The run's first message is sent once its run_started entry is stored, before
          // the model call: a step taken again after a crash would not give it again.
          if (message.type === "system" && message.subtype === "init") {
            publishing = records.publish(runId, [{ kind: "message", message }]);
            publishing.catch(reportError);
          } else messages.push({ kind: "message", message });
        },
        onStepStart: (step) => {
          taken = step;
          // The session's latest run, for queue.resume(sessionId) and for runs waiting on it.
          starting = records.setLatestRun(sessionId, runId, agentName);
          starting.catch(reportError);
          // A resume is accepted once its decisions are stored: the run is going again, and
          // queue.resume() (waiting for the job's progress) returns.
          if (data.step === undefined) {
            accepting = records.accepted(runId).then(() => job.updateProgress({ accepted: true }));
            accepting.catch(reportError);
          }
        },
      });
    } catch (error) {
      await starting?.catch(() => {});
      let situation: StepSituation = {
        job: kind,
        runId,
        sessionId,
        leaseFence: lease.fence,
        leaseHeld: lease.held(),
      };
      for (;;) {
        const triage = triageStepFailure(error, situation);
        switch (triage.kind) {
          case "read":
            if (triage.fact === "abort") {
              const reason = await records.abortReason(runId);
              situation = {
                ...situation,
                abort: { reason, stepAborted: controller.signal.aborted },
              };
            } else {
              const other = await records.latestRunId(sessionId);
              const state = other === null ? null : await records.state(other);
              situation = { ...situation, sessionRun: { runId: other, state } };
            }
            continue;
          case "raise_fence":
            if (!(await lease.raiseFenceTo(triage.fence))) return dropStep(error);
            reportError(
              new RunQueueError(
                "fence_behind",
                `Session ${JSON.stringify(sessionId)} has fence ${triage.fence} in the session store, above the fence ${lease.fence} of the lease this worker took from Redis: Redis lost or moved back the session's last fence (a failover to a replica, a FLUSHALL, its clock stepped back). The worker raised Redis's fence to the store's and takes step ${data.step ?? "(resume)"} of run ${JSON.stringify(runId)} again under a new lease; nothing was lost. If this recurs, check Redis's persistence and clock.`,
                runId,
                { cause: error },
              ),
            );
            await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token).catch(() => {});
            throw new DelayedError();
          case "drop":
            return dropStep(error);
          case "delay":
            throw await delayed();
          case "aborted":
            await records.publish(runId, [{ kind: "aborted", message: triage.reason }], lease);
            await records.markEnded(runId, "aborted", lease);
            return;
          case "busy":
            await records.publish(
              runId,
              [{ kind: "failed", code: "session_busy", message: triage.message }],
              lease,
            );
            await records.markEnded(runId, "failed", lease);
            throw new StepRefused(triage.message);
          case "refuse":
            throw new StepRefused(triage.message);
          case "obsolete":
            return;
          case "retry":
            throw error;
        }
      }
    }
    await Promise.all([
      publishing?.catch(() => {}),
      accepting?.catch(() => {}),
      starting?.catch(() => {}),
    ]);
    // The step is stored. A worker that lost its lease meanwhile writes nothing more: the
    // worker that took the session over may have gone on (H28). The writes below check the
    // lease again in Redis, atomically with each of them.
    if (!lease.held()) await dropStep(undefined);
    const alreadyEnded =
      outcome.status === "ended" && taken === undefined && runHasEnded(await records.state(runId));
    if (alreadyEnded && kind === "resume") {
      throw new StepRefused(
        `not_interrupted: run ${JSON.stringify(runId)} of session ${JSON.stringify(sessionId)} has ended; there is nothing to resume. Enqueue the next prompt with queue.enqueue(agentName, prompt, { sessionId: ${JSON.stringify(sessionId)} }).`,
      );
    }
    await records.write(
      [
        ...peeked.trim(),
        ...(data.prompt !== undefined ? [records.leaveLineCommand(sessionId, runId)] : []),
        ...(await publishStepCommands(records, worker.store, {
          runId,
          sessionId,
          outcome,
          taken,
          live: messages,
        })),
        records.latestRunCommand(sessionId, runId, agentName),
      ],
      lease,
    );
    if (outcome.status === "ended") {
      // A job delivered again after its run ended: its worker may have died before handing
      // the reply on; afterRunEnded() does that at most once.
      if (alreadyEnded) {
        await inbox.afterRunEnded(runId, sessionId, resultText(agentName, outcome.result));
        return;
      }
      const result = outcome.result;
      if (result.subtype === "interrupted") {
        await records.markEnded(runId, "interrupted", lease);
        // An abort that came while the step was pausing ends the run here.
        const reason = await records.abortReason(runId);
        if (reason !== null) {
          await records.publish(runId, [{ kind: "aborted", message: reason }], lease);
          await records.markEnded(runId, "aborted", lease);
        }
        return;
      }
      await records.markEnded(runId, "ended", lease);
      await inbox.afterRunEnded(runId, sessionId, resultText(agentName, result));
      return;
    }
    await records.write([records.stateCommand(runId, "running")], lease);
    // The lease goes back before the next job exists, so the worker that takes it finds the
    // session free instead of waiting for its turn.
    handedBack = true;
    await lease.release();
    const next: StepJobData = {
      v: 1,
      agentName,
      sessionId,
      runId,
      step: outcome.nextStep,
      ...(data.chain !== undefined ? { chain: data.chain } : {}),
    };
    await worker.queue.add(STEP_JOB_NAME, next, { jobId: stepJobId(runId, outcome.nextStep) });
  } catch (error) {
    // A failure once the lease was lost is no failure of the step: it is dropped, and never
    // ends its run as failed (H28).
    if (error instanceof DelayedError || error instanceof StepRefused) throw error;
    if (error instanceof LeaseGone || (!handedBack && !lease.held())) return dropStep(error);
    throw error;
  } finally {
    controllers.delete(controller);
    if (controllers.size === 0) worker.active.delete(runId);
    await lease.release().catch(reportError);
  }
}
