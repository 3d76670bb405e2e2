import { createRunWorker } from "@lattice/bullmq";
import type { TraceEvent } from "agent-lattice";
import { openSessionStore, type StoreSpec } from "./session-store.js";
import type { CallEvent } from "./tools.js";
import { AGENT_NAME, openTriageAgent } from "./triage-agent.js";

/** What a worker started by `start` tells it, over the IPC channel. */
export type WorkerReport =
  | { readonly kind: "ready"; readonly worker: string }
  | ({ readonly kind: "call"; readonly worker: string } & CallEvent)
  | {
      readonly kind: "step";
      readonly worker: string;
      readonly sessionId: string;
      /** The step's number: the model call of turn t is step 2t - 2, its tool batch 2t - 1. */
      readonly step: number;
    };

/** Options of {@link startWorker}. */
export interface WorkerOptions {
  /** The worker's name in what it prints. */
  readonly name: string;
  readonly redisUrl: string;
  readonly queue: string;
  readonly store: StoreSpec;
  /** How long each tool call takes, in milliseconds. */
  readonly workMs: number;
  /** Steps taken at once. */
  readonly concurrency: number;
  /** BullMQ's job lock: a killed worker's step is taken over after about this long. */
  readonly lockMs: number;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Prints a line. */
  readonly print: (line: string) => void;
  /** Receives the worker's steps and tool calls as data (for `start`). */
  readonly report?: (report: WorkerReport) => void;
}

/** A running worker. */
export interface StartedWorker {
  /** Stops taking steps, waits for those in progress, and closes everything. */
  close(): Promise<void>;
}

/**
 * Starts a run worker on the queue: it takes steps of triage runs, one job per step, and
 * prints each step it takes (`[worker-1] ticket-3-9f2c step 1: read_ticket started`).
 *
 * @param options - {@link WorkerOptions}.
 * @returns The worker, once Redis answers.
 * @throws `RunQueueError` `redis_unreachable` when Redis does not answer.
 */
export async function startWorker(options: WorkerOptions): Promise<StartedWorker> {
  const { name, print, report } = options;
  const line = (text: string) => print(`[${name}] ${text}`);
  // Before Redis answers, ready() says what is wrong; after, a Redis that went away makes every
  // connection report each reconnect: print a message once, and again after 10 s.
  let ready = false;
  const printed = new Map<string, number>();
  const reportError = (message: string) => {
    const last = printed.get(message);
    if (!ready || (last !== undefined && Date.now() - last < 10_000)) return;
    printed.set(message, Date.now());
    line(`error: ${message}`);
  };
  const {
    store,
    label,
    close: closeStore,
  } = await openSessionStore(options.store, options.redisUrl);
  const agent = await openTriageAgent({
    workMs: options.workMs,
    env: options.env,
    onCall: (event) => report?.({ kind: "call", worker: name, ...event }),
    onTrace: (event) => {
      const step = stepOf(event);
      if (step !== undefined)
        report?.({ kind: "step", worker: name, sessionId: event.sessionId, step });
      if (event.type === "run_finished") {
        line(`${event.sessionId}: run ended, ${event.subtype} after ${event.numTurns} model calls`);
        return;
      }
      const text = describeEvent(event);
      if (text !== undefined) line(`${event.sessionId} step ${stepNumber(event)}: ${text}`);
    },
  });
  const worker = createRunWorker({
    connection: options.redisUrl,
    name: options.queue,
    agents: { [AGENT_NAME]: agent.options },
    sessionStore: store,
    concurrency: options.concurrency,
    lockDurationMs: options.lockMs,
    stalledIntervalMs: Math.max(250, options.lockMs / 2),
    stepBackoffMs: 250,
    connectTimeoutMs: 3_000,
    onError: (error) => reportError(error.message),
  });
  const close = async () => {
    await worker.close();
    await agent.close();
    await closeStore();
  };
  try {
    await worker.ready();
  } catch (error) {
    await close();
    throw error;
  }
  ready = true;
  line(
    `pid ${process.pid}: takes steps of queue "${options.queue}" on ${options.redisUrl}, ${options.concurrency} at a time; run logs in ${label}; ${agent.banner}.`,
  );
  report?.({ kind: "ready", worker: name });
  return { close };
}

/** The step a trace event starts: a model call, or a batch of tool calls. */
function stepOf(event: TraceEvent): number | undefined {
  if (event.type === "model_request_started") return 2 * event.turn - 2;
  if (event.type === "batch_planned") return 2 * event.turn - 1;
  return undefined;
}

/** The step a trace event belongs to, for the printed line. */
function stepNumber(event: TraceEvent): number | string {
  if ("turn" in event && typeof event.turn === "number") {
    return event.type.startsWith("model_") ? 2 * event.turn - 2 : 2 * event.turn - 1;
  }
  return "-";
}

/** What the worker prints for a trace event, or `undefined` for none. */
function describeEvent(event: TraceEvent): string | undefined {
  switch (event.type) {
    case "model_request_finished": {
      const calls = event.toolCalls;
      const what = calls === 0 ? "the answer" : `${calls} tool call${calls === 1 ? "" : "s"}`;
      return `model call → ${what} (${Math.round(event.latencyMs)} ms)`;
    }
    case "model_request_failed":
      return `model call failed: ${event.message}`;
    case "tool_call_started":
      return `${event.name} started`;
    case "tool_call_finished":
      return `${event.name} ${event.isError ? `failed (${event.status})` : "done"} (${Math.round(event.durationMs)} ms)`;
    default:
      return undefined;
  }
}
