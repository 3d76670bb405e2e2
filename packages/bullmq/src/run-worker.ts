import { randomBytes, randomUUID } from "node:crypto";
import {
  type AgentStepResult,
  endRun,
  type Mailbox,
  type MailboxMessage,
  mailboxMessageText,
  mailboxReply,
  type SDKMessage,
  type SDKResultMessage,
  SessionFencedError,
  stepMessages,
} from "@lattice/core";
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
import { decisionsLogged } from "./decisions-logged.js";
import { RunQueueError } from "./errors.js";
import { FanOut } from "./fan-out.js";
import { RunKeys, stepJobId } from "./keys.js";
import { type SessionLease, takeSessionLease } from "./lease.js";
import { checkRunWorkerOptions, type RunWorkerOptions } from "./run-worker-options.js";
import {
  encodeRecord,
  RECORD_FIELD,
  STEP_JOB_NAME,
  type StepJobData,
  type StreamRecord,
} from "./step-job.js";

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

// Pushes a reply to the sender's inbox unless this run already replied.
const REPLY_ONCE = `if redis.call("HSETNX", KEYS[1], "replied", "1") == 1 then
  redis.call("RPUSH", KEYS[2], ARGV[1])
end
return 0`;

/** A step that must not be retried, with the reason the queue reports. */
class StepRefused extends UnrecoverableError {}

/** A write refused because the worker no longer had the session's lease in Redis (H28). */
class LeaseGone extends Error {
  constructor() {
    super("This worker no longer has the session's lease in Redis: it wrote nothing.");
    this.name = "LeaseGone";
  }
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
  const { name, prefix, store, fanOutTools, concurrency, lockDurationMs, leaseMs } = settings;
  const { keepMs, connectTimeoutMs, jobOptions, stalledIntervalMs, callConcurrency } = settings;
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
          concurrency: callConcurrency,
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
          runAborted: async (runId) => (await client.exists(keys.abort(runId))) === 1,
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
    defaultJobOptions: jobOptions,
  });
  queue.on("error", reportError);
  /** The abort controllers of the steps in progress, by run. */
  const active = new Map<string, Set<AbortController>>();

  // queue.abort() reaches the worker holding the run through pub/sub (D9).
  subscriber.client.subscribe(keys.abortChannel).catch(reportError);
  subscriber.client.on("message", (channel: string, runId: string) => {
    if (channel !== keys.abortChannel) return;
    const controllers = active.get(runId);
    if (controllers === undefined) return;
    client.get(keys.abort(runId)).then((reason) => {
      for (const controller of controllers) {
        controller.abort(abortError(reason ?? "aborted by queue.abort()"));
      }
    }, reportError);
  });

  /**
   * Runs write commands (`[command, ...arguments]`) in one transaction. Under `lease`, only while
   * this worker still has the lease in Redis, checked in the same script (H28): a step that lost
   * its lease, even one frozen right after a check of it, writes nothing, and `LeaseGone` is
   * thrown instead.
   */
  const write = async (
    commands: readonly (readonly string[])[],
    lease: SessionLease | undefined,
  ): Promise<void> => {
    if (commands.length === 0) return;
    if (lease === undefined) {
      await client.multi(commands as string[][]).exec();
      return;
    }
    if (!(await lease.whileHeld(commands))) throw new LeaseGone();
  };
  /** The commands that add records to a run's stream. */
  const xadds = (runId: string, records: readonly StreamRecord[]): string[][] =>
    records.map((record) => ["xadd", keys.events(runId), "*", RECORD_FIELD, encodeRecord(record)]);
  const publish = (
    runId: string,
    records: readonly StreamRecord[],
    lease?: SessionLease,
  ): Promise<void> => write(xadds(runId, records), lease);
  /**
   * Records a run's state once its step ended it, paused it or failed it. A run paused for
   * approvals keeps its records for as long as it waits; the others expire `keepEndedRunsMs`
   * later. Under `lease`, only while it holds (see `write`).
   */
  const markEnded = async (runId: string, state: string, lease?: SessionLease): Promise<void> => {
    const sessionId = await client.hget(keys.run(runId), "sessionId");
    const commands: string[][] = [];
    // A run that never started leaves the session's line of waiting runs.
    if (sessionId !== null) commands.push(["lrem", keys.waiting(sessionId), "1", runId]);
    commands.push(["hset", keys.run(runId), "state", state]);
    if (state !== "interrupted") {
      commands.push(
        ["pexpire", keys.run(runId), String(keepMs)],
        ["pexpire", keys.events(runId), String(keepMs)],
      );
    }
    await write(commands, lease);
  };

  /**
   * The commands that publish a step's messages. Steps a worker stored but died before
   * publishing (the job was taken again and found the log past its step) are published from
   * the log first (`stepMessages`), so `events()` misses no step; a result already published is
   * not again.
   */
  const publishStepCommands = async (
    runId: string,
    sessionId: string,
    outcome: AgentStepResult,
    taken: number | undefined,
    live: readonly StreamRecord[],
  ): Promise<string[][]> => {
    const [publishedText, state] = await client.hmget(keys.run(runId), "published", "state");
    const published = publishedText === null ? -1 : Number(publishedText);
    const through =
      outcome.status === "continue"
        ? outcome.step
        : outcome.status === "stale"
          ? outcome.nextStep - 1
          : outcome.result.subtype === "interrupted"
            ? (taken ?? 0) - 1
            : (taken ?? 2 * outcome.result.numTurns - 1);
    const gapEnd = taken !== undefined ? taken - 1 : through;
    const records: StreamRecord[] = [];
    if (gapEnd > published) {
      const { entries } = await store.load(sessionId);
      for (let step = published + 1; step <= gapEnd; step++) {
        for (const message of stepMessages(entries, { sessionId, runId, step })) {
          records.push({ kind: "message", message });
        }
      }
    }
    for (const record of live) {
      // A result given again for a run whose result was published (a job taken twice).
      const isResult = record.kind === "message" && record.message.type === "result";
      if (isResult && taken === undefined && (state === "ended" || state === "failed")) continue;
      records.push(record);
    }
    const commands = xadds(runId, records);
    if (through > published) commands.push(["hset", keys.run(runId), "published", String(through)]);
    return commands;
  };

  /** Adds a run's first job, and records it, as `queue.enqueue()` does. */
  const startRun = async (
    data: Omit<StepJobData, "v" | "step">,
    replyTo?: { readonly sessionId: string; readonly mail: MailboxMessage },
  ): Promise<void> => {
    await client
      .multi()
      .hset(keys.run(data.runId), {
        agentName: data.agentName,
        sessionId: data.sessionId,
        state: "queued",
        enqueuedAt: new Date().toISOString(),
        ...(replyTo !== undefined ? { replyTo: JSON.stringify(replyTo) } : {}),
      })
      .rpush(keys.waiting(data.sessionId), data.runId)
      .exec();
    const first: StepJobData = { v: 1, ...data, step: 0 };
    await queue.add(STEP_JOB_NAME, first, { jobId: stepJobId(data.runId, 0) });
  };

  /** Takes every reply waiting for a session, atomically (D8). */
  const takeInbox = async (sessionId: string): Promise<string[]> => {
    const replies = await client
      .multi()
      .lrange(keys.inbox(sessionId), 0, -1)
      .del(keys.inbox(sessionId))
      .exec();
    return (replies?.[0]?.[1] as string[] | undefined) ?? [];
  };

  /**
   * The replies waiting for a session, left in its inbox until the step that reads them has
   * stored them (`trim` says how to remove them then): a step cut before that leaves them for
   * the next one. A step stored but cut before the trim delivers them again (at-least-once).
   */
  const peekInbox = (sessionId: string) => {
    let read = 0;
    return {
      take: async (): Promise<string[]> => {
        const texts = await client.lrange(keys.inbox(sessionId), 0, -1);
        read = texts.length;
        return texts;
      },
      /** The command that removes the replies read, if any. */
      trim: (): string[][] =>
        read > 0 ? [["ltrim", keys.inbox(sessionId), String(read), "-1"]] : [],
    };
  };

  /**
   * Replies waiting for a session whose latest run has ended start a new run on them, as a
   * team member starts a run on a reply that arrives after its run ended (D8).
   */
  const drainInbox = async (sessionId: string): Promise<void> => {
    const latest = await client.hgetall(keys.session(sessionId));
    if (latest.runId === undefined || latest.agentName === undefined) return;
    const state = await client.hget(keys.run(latest.runId), "state");
    if (state !== "ended" && state !== "failed") return;
    const texts = await takeInbox(sessionId);
    if (texts.length === 0) return;
    await startRun({
      agentName: latest.agentName,
      sessionId,
      runId: randomUUID(),
      prompt: texts.join("\n\n"),
    });
  };

  /**
   * After a run ended: a run that worked on a handoff sends its result back to the session
   * that handed it off (D8), and replies that reached this session meanwhile start its next run.
   */
  const afterRunEnded = async (
    runId: string,
    sessionId: string,
    outcome: { readonly text: string; readonly isError: boolean },
  ): Promise<void> => {
    const replyTo = await client.hget(keys.run(runId), "replyTo");
    if (replyTo !== null) {
      const { sessionId: senderSession, mail } = JSON.parse(replyTo) as {
        sessionId: string;
        mail: MailboxMessage;
      };
      const reply = mailboxReply(mail, outcome.text, outcome.isError);
      // Sent once, even when the run's last job is delivered twice.
      await client.eval(
        REPLY_ONCE,
        2,
        keys.run(runId),
        keys.inbox(senderSession),
        mailboxMessageText(reply),
      );
      await drainInbox(senderSession);
    }
    await drainInbox(sessionId);
  };

  /** The mailbox of a step's handoffs: each one becomes a run on the queue (D8). */
  const stepMailbox = (senderSession: string): Mailbox => ({
    async post(mail: MailboxMessage) {
      await startRun(
        {
          agentName: mail.to,
          sessionId: `handoff-${mail.id}`,
          runId: randomUUID(),
          prompt: mailboxMessageText(mail),
          chain: mail.chain,
        },
        { sessionId: senderSession, mail },
      );
    },
    // Replies reach the sender through its session's inbox, never through take().
    take: () => [],
    size: () => 0,
  });

  /**
   * Takes a run out of the head of its session's line when it will never start: it has no
   * first job (its producer stopped between recording the run and adding the job) and was
   * recorded over `leaseMs` ago, or its records are gone. Its waiters learn it failed. Returns
   * whether it did, so that the runs behind it are not held up for ever.
   */
  const droppedOrphan = async (head: string, sessionId: string): Promise<boolean> => {
    const [state, enqueuedAt] = await client.hmget(keys.run(head), "state", "enqueuedAt");
    if (typeof state === "string" && state !== "queued") return false;
    if (typeof enqueuedAt === "string" && Date.now() - Date.parse(enqueuedAt) < leaseMs)
      return false;
    if ((await queue.getJob(stepJobId(head, 0))) !== undefined) return false;
    await client.lrem(keys.waiting(sessionId), 1, head);
    if (typeof state === "string") {
      const message = `Run ${JSON.stringify(head)} on session ${JSON.stringify(sessionId)} never started: it was recorded on queue "${name}" but its first job was never added (the producer stopped between the two). Nothing of it ran; enqueue the prompt again.`;
      await publish(head, [{ kind: "failed", code: "run_failed", message }]);
      await markEnded(head, "failed");
      await afterRunEnded(head, sessionId, { text: message, isError: true });
    }
    return true;
  };

  const takeStep = async (job: Job<StepJobData>, token: string | undefined): Promise<void> => {
    const data = job.data;
    const { runId, sessionId, agentName } = data;
    const agent = agents.get(agentName);
    if (agent === undefined) {
      const known = [...agents.keys()].map((agent) => JSON.stringify(agent)).join(", ");
      // Another worker of the queue may know it (a rolling deploy): the job is tried again,
      // with backoff, on whichever worker takes it next.
      if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) {
        throw new Error(
          `This worker does not know the agent ${JSON.stringify(agentName)} (it knows ${known}).`,
        );
      }
      const message = `No worker of queue "${name}" that took run ${JSON.stringify(runId)} knows its agent ${JSON.stringify(agentName)}: it was tried ${job.attemptsMade + 1} times (the last worker knows ${known}). Add the agent to the workers' agents option, or enqueue one of the names they know.`;
      await publish(runId, [{ kind: "failed", code: "unknown_agent", message }]);
      await markEnded(runId, "failed");
      await afterRunEnded(runId, sessionId, { text: message, isError: true });
      throw new StepRefused(message);
    }
    // Runs of one session start in the order they were enqueued (D10).
    if (data.prompt !== undefined) {
      const head = await client.lindex(keys.waiting(sessionId), 0);
      if (head !== null && head !== runId && !(await droppedOrphan(head, sessionId))) {
        await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token);
        throw new DelayedError();
      }
    }
    // One step per session at a time (D10): a step of the same session waits its turn.
    const lease: SessionLease | undefined = await takeSessionLease(
      client,
      keys.lease(sessionId),
      keys.fence(sessionId),
      leaseMs,
    );
    if (lease === undefined) {
      await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token);
      throw new DelayedError();
    }
    // Registered before the abort flag is read, so an abort published meanwhile reaches it.
    const controller = new AbortController();
    const controllers = active.get(runId) ?? new Set<AbortController>();
    active.set(runId, controllers);
    controllers.add(controller);
    lease.onLost(() =>
      controller.abort(
        new Error(
          `This worker lost its lease on session ${sessionId} (Redis did not answer its renewals in time), so the step was stopped; another worker takes it from the log.`,
        ),
      ),
    );
    const inbox = peekInbox(sessionId);
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
      // A resume continues an aborted run: it clears the flag once accepted.
      const isResume = data.step === undefined && data.prompt === undefined;
      const abortReason = isResume ? null : await client.get(keys.abort(runId));
      if (abortReason !== null) {
        handedBack = true;
        await lease.release().catch(reportError);
        await publish(runId, [{ kind: "aborted", message: abortReason }]);
        await markEnded(runId, "aborted");
        return;
      }
      const context =
        contextOf === undefined
          ? undefined
          : await contextOf({ agentName, sessionId, runId, step: data.step });
      let outcome: AgentStepResult;
      // A resume delivered again after a crash may find its decisions already stored (the
      // worker died after storing them): the log says so, and the run just goes on.
      let decisions = data.decisions;
      if (decisions !== undefined && (await decisionsLogged(store, sessionId, runId, decisions))) {
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
          mailbox: stepMailbox(sessionId),
          takeMail: inbox.take,
          signal: controller.signal,
          // Its fence goes with every append, and the step stops once it lapses (H28).
          lease,
          onMessage: (message: SDKMessage) => {
            // The run's first message is sent once its run_started entry is stored, before
            // the model call: a step taken again after a crash would not give it again.
            if (message.type === "system") {
              publishing = publish(runId, [{ kind: "message", message }]);
              publishing.catch(reportError);
            } else messages.push({ kind: "message", message });
          },
          onStepStart: (step) => {
            taken = step;
            // The session's latest run, for queue.resume(sessionId) and for runs waiting on it.
            starting = client.hset(keys.session(sessionId), { runId, agentName });
            starting.catch(reportError);
            // A resume is accepted once its decisions are stored: the run is going again, and
            // queue.resume() (waiting for the job's progress) returns.
            if (data.step === undefined) {
              accepting = client
                .multi()
                .del(keys.abort(runId))
                .hset(keys.run(runId), "state", "running")
                .xadd(keys.events(runId), "*", RECORD_FIELD, encodeRecord({ kind: "resumed" }))
                .exec()
                .then(() => job.updateProgress({ accepted: true }));
              accepting.catch(reportError);
            }
          },
        });
      } catch (error) {
        await starting?.catch(() => {});
        const code = (error as { code?: unknown }).code;
        const currentFence = (error as { currentFence?: unknown }).currentFence;
        if (
          code === "session_fenced" &&
          typeof currentFence === "number" &&
          currentFence > lease.fence &&
          lease.held() &&
          (await lease.raiseFenceTo(currentFence))
        ) {
          // This worker holds the lease, yet the store has a higher fence: Redis's fence fell
          // behind the store's. Redis's is raised to it, so the next lease passes it (H28).
          reportError(
            new RunQueueError(
              "fence_behind",
              `Session ${JSON.stringify(sessionId)} has fence ${currentFence} in the session store, above the fence ${lease.fence} of the lease this worker took from Redis: Redis lost or moved back the session's last fence (a failover to a replica, a FLUSHALL, its clock stepped back). The worker raised Redis's fence to the store's and takes step ${data.step ?? "(resume)"} of run ${JSON.stringify(runId)} again under a new lease; nothing was lost. If this recurs, check Redis's persistence and clock.`,
              runId,
              { cause: error },
            ),
          );
          await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token).catch(() => {});
          throw new DelayedError();
        }
        if (code === "session_fenced" || !lease.held()) return dropStep(error);
        const stepJob = data.step !== undefined && data.prompt === undefined;
        if (code === "session_conflict" && stepJob && lease.held()) {
          // Another writer appended between this step's load and its first append: a worker
          // whose lease lapsed, whose last append landed before this step raised the fence
          // (H28). Not a failure of the step: it is tried again at once, reading the log anew,
          // without counting an attempt.
          await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token);
          throw new DelayedError();
        }
        const reason = await client.get(keys.abort(runId));
        if (reason !== null && controller.signal.aborted) {
          await publish(runId, [{ kind: "aborted", message: reason }], lease);
          await markEnded(runId, "aborted", lease);
          return;
        }
        if (code === "session_conflict" && data.prompt !== undefined) {
          // Another run of the session is unfinished: this one starts when it ends, unless
          // that one is parked (waiting for approvals, or aborted) and would never end alone.
          const other = await client.hget(keys.session(sessionId), "runId");
          const state = other === null ? null : await client.hget(keys.run(other), "state");
          // Only a run that is queued or running on this queue ends by itself; any other
          // (parked, or started outside this queue, or whose records expired) never would.
          if (state !== "queued" && state !== "running") {
            const why =
              state === "interrupted"
                ? `run ${JSON.stringify(other)}, which waits for approvals`
                : state === "aborted"
                  ? `run ${JSON.stringify(other)}, which was aborted`
                  : state === "failed"
                    ? `run ${JSON.stringify(other)}, which failed and could not be ended in the session store`
                    : "a run that is not running on this queue (it was started elsewhere, or its queue records expired)";
            const message = `Run ${JSON.stringify(runId)} cannot start: session ${JSON.stringify(sessionId)} has an unfinished ${why}. Continue it with queue.resume(${JSON.stringify(sessionId)}${state === "interrupted" ? ", { decisions }" : ""}) and enqueue this prompt again once it ended, or use another session.`;
            await publish(runId, [{ kind: "failed", code: "session_busy", message }], lease);
            await markEnded(runId, "failed", lease);
            throw new StepRefused(message);
          }
          await job.moveToDelayed(Date.now() + retryDelay(leaseMs), token);
          throw new DelayedError();
        }
        if (
          typeof code === "string" &&
          (code.startsWith("approval_") ||
            code === "not_interrupted" ||
            code === "session_not_found")
        ) {
          // A resume the log refuses; or a step job that is obsolete (the run paused or ended).
          if (data.step === undefined) {
            throw new StepRefused(
              `${code}: ${(error as Error).message.replaceAll("agent.resume(", "queue.resume(")}`,
            );
          }
          return;
        }
        throw error;
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
        outcome.status === "ended" &&
        taken === undefined &&
        ["ended", "failed"].includes((await client.hget(keys.run(runId), "state")) ?? "");
      if (alreadyEnded && data.step === undefined && data.prompt === undefined) {
        throw new StepRefused(
          `not_interrupted: run ${JSON.stringify(runId)} of session ${JSON.stringify(sessionId)} has ended; there is nothing to resume. Enqueue the next prompt with queue.enqueue(agentName, prompt, { sessionId: ${JSON.stringify(sessionId)} }).`,
        );
      }
      await write(
        [
          ...inbox.trim(),
          ...(data.prompt !== undefined ? [["lrem", keys.waiting(sessionId), "1", runId]] : []),
          ...(await publishStepCommands(runId, sessionId, outcome, taken, messages)),
          ["hset", keys.session(sessionId), "runId", runId, "agentName", agentName],
        ],
        lease,
      );
      if (outcome.status === "ended") {
        // A job delivered again after its run ended: its worker may have died before handing
        // the reply on; afterRunEnded() does that at most once.
        if (alreadyEnded) {
          await afterRunEnded(runId, sessionId, resultText(agentName, outcome.result));
          return;
        }
        const result = outcome.result;
        if (result.subtype === "interrupted") {
          await markEnded(runId, "interrupted", lease);
          // An abort that came while the step was pausing ends the run here.
          const reason = await client.get(keys.abort(runId));
          if (reason !== null) {
            await publish(runId, [{ kind: "aborted", message: reason }], lease);
            await markEnded(runId, "aborted", lease);
          }
          return;
        }
        await markEnded(runId, "ended", lease);
        await afterRunEnded(runId, sessionId, resultText(agentName, result));
        return;
      }
      await write([["hset", keys.run(runId), "state", "running"]], lease);
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
      await queue.add(STEP_JOB_NAME, next, { jobId: stepJobId(runId, outcome.nextStep) });
    } catch (error) {
      // A failure once the lease was lost is no failure of the step: it is dropped, and never
      // ends its run as failed (H28).
      if (error instanceof DelayedError || error instanceof StepRefused) throw error;
      if (error instanceof LeaseGone || (!handedBack && !lease.held())) return dropStep(error);
      throw error;
    } finally {
      controllers.delete(controller);
      if (controllers.size === 0) active.delete(runId);
      await lease.release().catch(reportError);
    }
  };

  /**
   * Takes the session's lease to end a run, waiting up to twice `leaseMs` for a step that holds
   * it; `undefined` when it stayed taken.
   */
  const leaseToEnd = async (sessionId: string): Promise<SessionLease | undefined> => {
    const until = performance.now() + 2 * leaseMs;
    for (;;) {
      const lease = await takeSessionLease(
        client,
        keys.lease(sessionId),
        keys.fence(sessionId),
        leaseMs,
      );
      if (lease !== undefined || performance.now() > until) return lease;
      await new Promise((resolve) => setTimeout(resolve, retryDelay(leaseMs)));
    }
  };

  /**
   * Ends the run of a step that failed on its last attempt as failed, with the cause (poison
   * steps): through `endRun()` of core, or, when the store refuses that too, as `run_failed`.
   * A resume that never got going leaves its run as it was (`queue.resume()` reports it).
   * Safe to do twice: a run already ended gives its result again, and its reply is posted once.
   * It holds the session's lease meanwhile, and its append carries the lease's fence, as a
   * step's do (H28).
   *
   * @throws when the session's lease stayed taken, or the lease was lost: the run is left as it
   *   is (the worker that holds the session goes on with it).
   */
  const endFailedRun = async (data: StepJobData, cause: string): Promise<void> => {
    const { runId, sessionId, step } = data;
    if (step === undefined && data.prompt === undefined) {
      const state = await client.hget(keys.run(runId), "state");
      if (state === "interrupted" || state === "aborted") return;
    }
    const lease = await leaseToEnd(sessionId);
    if (lease === undefined) {
      throw new Error(
        `Run ${JSON.stringify(runId)} could not be ended as failed (${cause}): the lease on session ${JSON.stringify(sessionId)} stayed taken by another step for ${2 * leaseMs} ms. The run is left as it is; the step that holds the session goes on with it.`,
      );
    }
    try {
      let result: SDKResultMessage;
      try {
        result = await endRun({ store, sessionId, runId, errors: [cause], lease });
      } catch (endError) {
        // Fenced off: a newer lease holder goes on with the run, which must not end here.
        if (endError instanceof SessionFencedError) throw endError;
        const message = `${cause}. Ending the run in its session store failed too: ${(endError as Error).message}`;
        await publish(runId, [{ kind: "failed", code: "run_failed", message }], lease);
        await markEnded(runId, "failed", lease);
        await afterRunEnded(runId, sessionId, { text: message, isError: true });
        return;
      }
      await publish(runId, [{ kind: "message", message: result }], lease);
      await markEnded(runId, "ended", lease);
      await afterRunEnded(runId, sessionId, resultText(data.agentName, result));
    } finally {
      await lease.release().catch(reportError);
    }
  };
  const failureCause = (data: StepJobData, attempts: number, error: Error): string =>
    `Step ${data.step ?? "(resume)"} of run ${data.runId} failed ${attempts} time(s); the last error: ${error.message}`;

  /**
   * Takes the job's step. When its last attempt fails, the run is ended here, while the job
   * still holds its lock: a worker killed meanwhile leaves the job stalled, and the worker that
   * takes it over tries the step once more and ends the run then.
   */
  const processStep = async (job: Job<StepJobData>, token: string | undefined): Promise<void> => {
    try {
      await takeStep(job, token);
    } catch (error) {
      if (error instanceof DelayedError || error instanceof StepRefused) throw error;
      const failure = error instanceof Error ? error : new Error(String(error));
      const last =
        failure instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      if (!last) throw failure;
      const cause = failureCause(job.data, job.attemptsMade + 1, failure);
      // If ending the run fails too (Redis gone), the job fails with its own error and the
      // "failed" listener below tries again.
      await endFailedRun(job.data, cause).catch((endError) => {
        reportError(endError);
        throw failure;
      });
      throw new StepRefused(cause);
    }
  };

  const worker = new Worker<StepJobData>(name, processStep, {
    connection: client,
    prefix,
    concurrency,
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
    const ending = endFailedRun(job.data, failureCause(job.data, job.attemptsMade, error)).catch(
      reportError,
    );
    endings.add(ending);
    void ending.finally(() => endings.delete(ending));
  });

  let closed = false;
  return Object.freeze({
    name,
    ready: () => waitUntilReady(opened, connectTimeoutMs),
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

/** What a run's result says as a reply to the session that handed the task off. */
function resultText(
  agentName: string,
  result: SDKResultMessage,
): { readonly text: string; readonly isError: boolean } {
  if (!result.isError) return { text: result.result, isError: false };
  const detail = result.errors.length > 0 ? result.errors.join(" ") : result.subtype;
  return { text: `Agent "${agentName}" failed: ${detail}`, isError: true };
}

/** A delay before a step that waits for its session is tried again: short, jittered. */
function retryDelay(leaseMs: number): number {
  const base = Math.min(250, leaseMs / 4);
  return base + (randomBytes(1)[0]! / 255) * base;
}

function abortError(reason: string): Error {
  const error = new Error(`Run aborted: ${reason}`);
  error.name = "AbortError";
  return error;
}
