import type { Agent, AgentDefinition, AgentOptions, SessionStore } from "@lattice/core";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { checkFanOutTools } from "./build-agents.js";
import { checkConnection, type RedisConnection } from "./connection.js";
import {
  checkName,
  checkPositive,
  DEFAULT_CONNECT_TIMEOUT_MS,
  DEFAULT_PREFIX,
  DEFAULT_QUEUE_NAME,
  DEFAULT_STEP_ATTEMPTS,
  DEFAULT_STEP_BACKOFF_MS,
  stepJobOptions,
} from "./run-queue-options.js";

/** What a worker's `context` function is told about the step it prepares. */
export interface RunWorkerStepInfo {
  /** The name the run was enqueued with (a key of the worker's `agents`). */
  readonly agentName: string;
  /** The run's session. */
  readonly sessionId: string;
  /** The run. */
  readonly runId: string;
  /** The step the job was made for; `undefined` for a resume (it takes whatever is next). */
  readonly step: number | undefined;
}

/** Options of {@link createRunWorker}. Checked strictly. */
export interface RunWorkerOptions<TContext = unknown> {
  /** Where Redis is: a URL, ioredis options, or your ioredis client (never closed by Lattice). */
  readonly connection: RedisConnection;
  /** The queue to work for. Default `"lattice-runs"`. */
  readonly name?: string;
  /** BullMQ's key prefix, as the queue's. Default `"lattice"`. */
  readonly prefix?: string;
  /**
   * The agents this worker runs, by the name producers enqueue them under: agent options or
   * definitions (the worker creates each agent on `sessionStore`), or agents created with
   * `sessionStore` as their store.
   */
  readonly agents: {
    readonly [agentName: string]: AgentOptions | AgentDefinition | Agent<TContext>;
  };
  /**
   * Where every run's log is: one store all workers share (Postgres, Redis, SQLite on one
   * host). It must fence its appends and say so with `fencedAppends: true`
   * (`SessionAppendOptions.fence` of `@lattice/core`, the `H28:` checks of the conformance
   * suite), as the Lattice stores do: each step's appends carry its lease's fence, so a worker
   * frozen past its lease can log nothing (H28). A store without it is refused.
   */
  readonly sessionStore: SessionStore;
  /** Steps this worker takes at once (D10). Default 8. */
  readonly concurrency?: number;
  /** The value tools read as `ctx.context` in each step (R9): made per step, never stored. */
  readonly context?: (step: RunWorkerStepInfo) => TContext | Promise<TContext>;
  /** Attempts of each step job before its run ends as failed. Default 5. */
  readonly stepAttempts?: number;
  /** First retry delay of a failed step, doubled per attempt. Default 1,000 ms. */
  readonly stepBackoffMs?: number;
  /**
   * BullMQ's job lock: a worker that stops renewing it (killed, frozen) loses its step to
   * another worker after about this long (D5). Default 30,000 ms.
   */
  readonly lockDurationMs?: number;
  /**
   * How often BullMQ looks for stalled jobs. Default: `lockDurationMs`. An idle worker also
   * waits for new jobs no longer than this (5 s at most), so that it takes a stalled step over
   * soon after finding it.
   */
  readonly stalledIntervalMs?: number;
  /**
   * How long a session's lease lasts without renewal (one step at a time, D10). Default:
   * `lockDurationMs`. A step stops (starts no call, appends nothing) once its lease has gone
   * this long, less a margin, without a renewal that Redis answered (H28).
   */
  readonly leaseMs?: number;
  /** How long `ready()` waits for Redis. Default 5,000 ms. */
  readonly connectTimeoutMs?: number;
  /** How long an ended run's messages and records stay in Redis. Default one day. */
  readonly keepEndedRunsMs?: number;
  /**
   * Tools whose calls run as jobs of their own, on any worker of the queue (D6), by name: for
   * long calls worth spreading over machines. The batch still runs under its plan — policy
   * first, the cap, unsafe calls alone, results in tool_use order — with the step's worker
   * waiting for each call job. Every worker of the queue needs the same agents and
   * `fanOutTools`. Only for agents given as options or definitions; not for agent tools.
   * Default: none.
   */
  readonly fanOutTools?: readonly string[];
  /** Fanned-out calls this worker runs at once. Default: `concurrency`. */
  readonly callConcurrency?: number;
  /**
   * Receives the worker's own failures (Redis unreachable, a record that could not be
   * written); step failures are retried and end up in the run's result instead. Also told of
   * each step the worker dropped because its session lease no longer held (a
   * `SessionFencedError`, code `"session_fenced"`: the worker was frozen or cut off past its
   * lease, H28), and of a session store whose fence was ahead of Redis's (`RunQueueError`
   * `fence_behind`). Default: none.
   */
  readonly onError?: (error: Error) => void;
}

const WORKER_OPTION_KEYS = [
  "connection",
  "name",
  "prefix",
  "agents",
  "sessionStore",
  "concurrency",
  "context",
  "stepAttempts",
  "stepBackoffMs",
  "lockDurationMs",
  "stalledIntervalMs",
  "leaseMs",
  "connectTimeoutMs",
  "keepEndedRunsMs",
  "fanOutTools",
  "callConcurrency",
  "onError",
] as const;

/** A worker's options, checked, with their defaults filled in. Internal. */
export interface RunWorkerSettings {
  readonly name: string;
  readonly prefix: string;
  readonly store: SessionStore;
  /** The tools whose calls fan out (D6), by name. */
  readonly fanOutTools: ReadonlySet<string>;
  readonly concurrency: number;
  readonly lockDurationMs: number;
  readonly leaseMs: number;
  /** `keepEndedRunsMs`. */
  readonly keepMs: number;
  readonly connectTimeoutMs: number;
  /** BullMQ job options of the step jobs the worker adds. */
  readonly jobOptions: ReturnType<typeof stepJobOptions>;
  readonly stalledIntervalMs: number;
  readonly callConcurrency: number;
}

/**
 * Checks a worker's options strictly, one after another in a fixed order, and fills in their
 * defaults. The agents themselves are checked when they are built (`buildAgents`). Internal.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError` for the first bad option, including a
 *   `sessionStore` that does not declare `fencedAppends: true`.
 */
export function checkRunWorkerOptions<TContext>(
  options: RunWorkerOptions<TContext>,
): RunWorkerSettings {
  assertKnownOptions(options, WORKER_OPTION_KEYS, "RunWorkerOptions:");
  const prefixText = "RunWorkerOptions:";
  checkConnection(prefixText, options.connection);
  const name = checkName(prefixText, "name", options.name, DEFAULT_QUEUE_NAME);
  const prefix = checkName(prefixText, "prefix", options.prefix, DEFAULT_PREFIX);
  const store = options.sessionStore;
  if (store === null || typeof store !== "object" || typeof store.append !== "function") {
    throw new InvalidOptionError(
      prefixText,
      "sessionStore",
      `is required: the SessionStore every worker of the queue shares (postgresSessionStore, redisSessionStore, ...), received ${describeValue(store)}.`,
    );
  }
  if (store.fencedAppends !== true) {
    throw new InvalidOptionError(
      prefixText,
      "sessionStore",
      `must fence its appends, and ${store.name ?? "the store given"} does not declare fencedAppends: true. Without fencing, a worker frozen past its session lease could log results that the worker that took its step over logs too (H28). Use memorySessionStore, sqliteSessionStore, postgresSessionStore or redisSessionStore, or make your store honour SessionAppendOptions.fence, pass the H28 checks of sessionStoreConformance (@lattice/core/testing) and declare fencedAppends: true.`,
    );
  }
  const fanOutTools = checkFanOutTools(options.fanOutTools, options.agents);
  const concurrency = checkPositive(prefixText, "concurrency", options.concurrency, 8, true);
  const lockDurationMs = checkPositive(
    prefixText,
    "lockDurationMs",
    options.lockDurationMs,
    30_000,
  );
  const leaseMs = checkPositive(prefixText, "leaseMs", options.leaseMs, lockDurationMs);
  const keepMs = checkPositive(prefixText, "keepEndedRunsMs", options.keepEndedRunsMs, 86_400_000);
  const connectTimeoutMs = checkPositive(
    prefixText,
    "connectTimeoutMs",
    options.connectTimeoutMs,
    DEFAULT_CONNECT_TIMEOUT_MS,
  );
  const jobOptions = stepJobOptions(
    checkPositive(prefixText, "stepAttempts", options.stepAttempts, DEFAULT_STEP_ATTEMPTS),
    checkPositive(prefixText, "stepBackoffMs", options.stepBackoffMs, DEFAULT_STEP_BACKOFF_MS),
  );
  for (const key of ["context", "onError"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new InvalidOptionError(
        prefixText,
        key,
        `must be a function, received ${describeValue(options[key])}.`,
      );
    }
  }
  const stalledIntervalMs = checkPositive(
    prefixText,
    "stalledIntervalMs",
    options.stalledIntervalMs,
    lockDurationMs,
  );
  const callConcurrency = checkPositive(
    prefixText,
    "callConcurrency",
    options.callConcurrency,
    concurrency,
    true,
  );
  return {
    name,
    prefix,
    store,
    fanOutTools,
    concurrency,
    lockDurationMs,
    leaseMs,
    keepMs,
    connectTimeoutMs,
    jobOptions,
    stalledIntervalMs,
    callConcurrency,
  };
}
