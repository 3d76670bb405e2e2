import { raceAbort } from "@lattice/scheduler/internal";
import type { AnyToolDefinition, ToolContext } from "@lattice/tools";
import { Job, Queue, QueueEvents, UnrecoverableError, Worker } from "bullmq";
import type { Redis } from "ioredis";
import { closeClient, duplicateClient, type OpenedClient } from "./connection.js";

/** The BullMQ job name of a fanned-out tool call. Internal. */
const CALL_JOB_NAME = "lattice-call";
/** How long a call job's outcome stays, so a step taken again after a crash finds it. */
const KEEP_CALL_OUTCOMES_S = 3_600;

/** What a call job carries: plain JSON. Internal. */
interface CallJobData {
  readonly v: 1;
  readonly agentName: string;
  readonly toolName: string;
  readonly toolUseId: string;
  readonly runId: string;
  readonly sessionId: string;
  readonly input: unknown;
}

/** What a call job's handler is told besides its input. */
export interface FanOutCallInfo {
  readonly agentName: string;
  readonly sessionId: string;
  readonly runId: string;
  readonly toolName: string;
  readonly toolUseId: string;
}

/** The settings a worker's fan-out needs. Internal. */
export interface FanOutSettings {
  readonly opened: OpenedClient;
  readonly prefix: string;
  /** The run queue's name; call jobs go to `<name>-calls`. */
  readonly queueName: string;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  /** The original tools, by agent then tool name: what call jobs run. */
  readonly tools: ReadonlyMap<string, ReadonlyMap<string, AnyToolDefinition>>;
  readonly context: ((call: FanOutCallInfo) => unknown) | undefined;
  readonly reportError: (error: unknown) => void;
  /**
   * Whether the run was aborted with `queue.abort()` (its abort flag is set): only then does a
   * call job stop with its step (H28).
   */
  readonly runAborted: (runId: string) => Promise<boolean>;
}

/**
 * Tool calls of a batch as jobs of their own (D6). The step's worker still runs the batch
 * through the scheduler — batch policy first, the cap, unsafe calls alone, results in
 * tool_use order, one result per call — but a fanned-out tool's handler there only enqueues
 * a call job `call:<runId>:<toolUseId in base64url>` and waits for its outcome; any worker of the queue
 * runs it. A step taken again after a crash waits for the same job (its id is the call's), so
 * a call whose job is still running or has finished is not run twice; so does a step taken
 * over from a worker that lost its lease, whose abort never reaches the job (only
 * `queue.abort()` does). Internal.
 */
export class FanOut {
  private readonly queue: Queue<CallJobData>;
  private readonly events: QueueEvents;
  private readonly eventsClient: OpenedClient;
  private readonly subscriber: OpenedClient;
  private readonly worker: Worker<CallJobData>;
  private readonly client: Redis;
  private readonly abortChannel: string;
  private readonly active = new Map<string, AbortController>();

  constructor(private readonly settings: FanOutSettings) {
    const { opened, prefix, queueName } = settings;
    const name = `${queueName}-calls`;
    this.client = opened.client;
    this.abortChannel = `${prefix}:${name}:aborts`;
    this.queue = new Queue<CallJobData>(name, { connection: opened.client, prefix });
    this.queue.on("error", settings.reportError);
    this.eventsClient = duplicateClient(opened);
    this.events = new QueueEvents(name, { connection: this.eventsClient.client, prefix });
    this.events.on("error", settings.reportError);
    this.subscriber = duplicateClient(opened);
    this.subscriber.client.subscribe(this.abortChannel).catch(settings.reportError);
    this.subscriber.client.on("message", (channel: string, jobId: string) => {
      if (channel === this.abortChannel) this.active.get(jobId)?.abort(callAborted());
    });
    this.worker = new Worker<CallJobData>(name, (job) => this.runCall(job), {
      connection: opened.client,
      prefix,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: 3,
    });
    this.worker.on("error", settings.reportError);
  }

  /** A copy of `definition` whose handler runs each call as a call job. */
  remote(agentName: string, definition: AnyToolDefinition): AnyToolDefinition {
    const handler = async (input: unknown, ctx: ToolContext): Promise<unknown> => {
      const run = ctx.run;
      if (run === undefined) {
        throw new Error(
          `Tool "${definition.name}" is fanned out to workers and runs only inside a run of a worker.`,
        );
      }
      // BullMQ refuses a custom id with more than two ":" in it; a provider's tool_use id may
      // have some (base64url has none).
      const jobId = `call:${run.runId}:${Buffer.from(ctx.toolUseId).toString("base64url")}`;
      const data: CallJobData = {
        v: 1,
        agentName,
        toolName: definition.name,
        toolUseId: ctx.toolUseId,
        runId: run.runId,
        sessionId: run.sessionId,
        input,
      };
      await this.events.waitUntilReady();
      // A call job that failed because its step was aborted (or lost its worker's lease) is
      // not the call's outcome: the step taken again runs the call again, as in process (R18).
      const previous = await Job.fromId(this.queue, jobId);
      if (previous !== undefined && (await previous.isFailed())) {
        await previous.remove();
      }
      await this.client.del(abortKey(this.abortChannel, jobId));
      const job = await this.queue.add(CALL_JOB_NAME, data, {
        jobId,
        attempts: 1,
        removeOnComplete: { age: KEEP_CALL_OUTCOMES_S },
        removeOnFail: { age: KEEP_CALL_OUTCOMES_S },
      });
      // Only the run's abort (queue.abort) stops the call job. A step stopped for any other
      // reason — its worker lost the session's lease (frozen past it, H28), a call's time limit
      // on a worker that may be such a one — leaves it running: the worker that took the step
      // over waits for this same job, and would otherwise get the abort as the call's outcome.
      const onAbort = (): void => {
        this.settings
          .runAborted(run.runId)
          .then((aborted) => {
            if (!aborted) return undefined;
            return this.client
              .multi()
              .set(abortKey(this.abortChannel, jobId), "1", "EX", KEEP_CALL_OUTCOMES_S)
              .publish(this.abortChannel, jobId)
              .exec();
          })
          .catch(this.settings.reportError);
      };
      ctx.signal.addEventListener("abort", onAbort, { once: true });
      try {
        // A stopped step stops waiting at once (the batch need not wait out its abort grace);
        // the job goes on unless the run was aborted, and a step taken again waits for it.
        return await raceAbort(job.waitUntilFinished(this.events), ctx.signal);
      } finally {
        ctx.signal.removeEventListener("abort", onAbort);
      }
    };
    return Object.freeze({ ...definition, handler }) as AnyToolDefinition;
  }

  private async runCall(job: Job<CallJobData>): Promise<unknown> {
    const data = job.data;
    const definition = this.settings.tools.get(data.agentName)?.get(data.toolName);
    if (definition === undefined) {
      throw new UnrecoverableError(
        `No worker of queue "${this.settings.queueName}" has the fanned-out tool "${data.toolName}" of agent "${data.agentName}". Give every worker of the queue the same agents and fanOutTools.`,
      );
    }
    const jobId = job.id!;
    const controller = new AbortController();
    this.active.set(jobId, controller);
    try {
      if ((await this.client.exists(abortKey(this.abortChannel, jobId))) === 1) {
        controller.abort(callAborted());
      }
      const info: FanOutCallInfo = {
        agentName: data.agentName,
        sessionId: data.sessionId,
        runId: data.runId,
        toolName: data.toolName,
        toolUseId: data.toolUseId,
      };
      const context = await this.settings.context?.(info);
      const ctx: ToolContext = {
        signal: controller.signal,
        toolUseId: data.toolUseId,
        toolName: data.toolName,
        run: { runId: data.runId, sessionId: data.sessionId, agentName: data.agentName, depth: 0 },
        ...(context !== undefined ? { context } : {}),
      };
      return await (definition.handler as (input: unknown, ctx: ToolContext) => unknown)(
        data.input,
        ctx,
      );
    } finally {
      this.active.delete(jobId);
    }
  }

  /** Stops taking call jobs (waiting for those in progress) and closes the connections. */
  async close(): Promise<void> {
    const connected = this.client.status === "ready";
    await this.worker.close(!connected);
    await this.events.close();
    await this.queue.close();
    await closeClient(this.subscriber);
    await closeClient(this.eventsClient);
  }
}

function abortKey(channel: string, jobId: string): string {
  return `${channel}:${jobId}`;
}

function callAborted(): Error {
  const error = new Error("The run that made this tool call was aborted.");
  error.name = "AbortError";
  return error;
}
