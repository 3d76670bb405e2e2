import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { RedisConnection } from "./connection.js";
import type { ApprovalDecisions } from "./step-job.js";

/** The queue name when none is given. */
export const DEFAULT_QUEUE_NAME = "lattice-runs";
/** The BullMQ key prefix when none is given. */
export const DEFAULT_PREFIX = "lattice";
/** How many times a step job is tried before its run ends as failed, by default. */
export const DEFAULT_STEP_ATTEMPTS = 5;
/** The first retry delay of a failed step, doubled on each further attempt, by default. */
export const DEFAULT_STEP_BACKOFF_MS = 1_000;
/** How long the first operation waits for Redis, by default. Internal. */
export const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
/** How long `resume()` waits for a worker to accept the resume, by default. Internal. */
export const DEFAULT_RESUME_TIMEOUT_MS = 30_000;

/** Options of {@link createRunQueue}. Checked strictly. */
export interface RunQueueOptions {
  /** Where Redis is: a URL, ioredis options, or your ioredis client (never closed by Lattice). */
  readonly connection: RedisConnection;
  /** The queue's name; producers and workers of one queue use the same. Default `"lattice-runs"`. */
  readonly name?: string;
  /** BullMQ's key prefix. Default `"lattice"`. */
  readonly prefix?: string;
  /** How long an operation waits for Redis before it fails with `redis_unreachable`. Default 5,000 ms. */
  readonly connectTimeoutMs?: number;
  /** Attempts of the first step job of a run (the workers set those of the others). Default 5. */
  readonly stepAttempts?: number;
  /** First retry delay of that job, doubled per attempt. Default 1,000 ms. */
  readonly stepBackoffMs?: number;
}

/** The keys of {@link RunQueueOptions}, for the strict check. Internal. */
export const QUEUE_OPTION_KEYS = [
  "connection",
  "name",
  "prefix",
  "connectTimeoutMs",
  "stepAttempts",
  "stepBackoffMs",
] as const;

/** Options of {@link RunQueue.enqueue}. Checked strictly. */
export interface EnqueueOptions {
  /** The conversation to continue or start (R6); default a fresh UUID. */
  readonly sessionId?: string;
  /** The run's id; default a fresh UUID. Must be unique, without `:`. */
  readonly runId?: string;
}

/** The ids of a run on the queue, known at once (D3). */
export interface EnqueuedRun {
  readonly runId: string;
  readonly sessionId: string;
}

/** Options of {@link RunQueue.result}. */
export interface RunResultOptions {
  /** Stops waiting: the promise rejects with an error named `"AbortError"`; the run goes on. */
  readonly signal?: AbortSignal;
  /** Stops waiting after this long with `result_timeout`; the run goes on. Default: no limit. */
  readonly timeoutMs?: number;
}

/** Options of {@link RunQueue.events}. */
export interface RunEventsOptions {
  /** Stops the iteration with an error named `"AbortError"`; the run goes on. */
  readonly signal?: AbortSignal;
}

/** Options of {@link RunQueue.resume}. Checked strictly. */
export interface QueueResumeOptions {
  /** Decisions on the pending approvals of an interrupted run, by approval id (R15, D7). */
  readonly decisions?: ApprovalDecisions;
  /**
   * How long to wait for a worker to accept the resume (check the decisions against the log
   * and store them). Default 30,000 ms; then `result_timeout`, the resume staying queued.
   */
  readonly timeoutMs?: number;
}

/** BullMQ job options of step jobs: retried with exponential backoff, removed once done. Internal. */
export function stepJobOptions(attempts: number, backoffMs: number) {
  return {
    attempts,
    backoff: { type: "exponential" as const, delay: backoffMs },
    removeOnComplete: true,
    removeOnFail: { age: 24 * 3600 },
  };
}

/** Checks an optional name option (letters, digits, `-`, `_`, `.`). Internal. */
export function checkName(prefix: string, key: string, value: unknown, fallback: string): string {
  if (value === undefined) return fallback;
  if (typeof value !== "string" || !/^[A-Za-z0-9_.-]+$/.test(value)) {
    throw new InvalidOptionError(
      prefix,
      key,
      `must be a non-empty string of letters, digits, "_", "-" or ".", received ${describeValue(value)}.`,
    );
  }
  return value;
}

/** Checks an optional positive number option. Internal. */
export function checkPositive(
  prefix: string,
  key: string,
  value: unknown,
  fallback: number,
  integer = false,
): number {
  if (value === undefined) return fallback;
  if (
    typeof value !== "number" ||
    !Number.isFinite(value) ||
    value <= 0 ||
    (integer && !Number.isInteger(value))
  ) {
    throw new InvalidOptionError(
      prefix,
      key,
      `must be a positive ${integer ? "integer" : "number"}, received ${describeValue(value)}.`,
    );
  }
  return value;
}

/** Checks a required id argument: a non-empty string. Internal. */
export function checkId(prefix: string, key: string, value: unknown): void {
  if (typeof value !== "string" || value === "") {
    throw new InvalidOptionError(
      prefix,
      key,
      `must be a non-empty string, received ${describeValue(value)}.`,
    );
  }
}

/** Checks the prompt given to `enqueue()`: a non-empty string or array of content blocks. Internal. */
export function checkPrompt(prompt: unknown): void {
  if (
    (typeof prompt === "string" && prompt !== "") ||
    (Array.isArray(prompt) && prompt.length > 0)
  ) {
    return;
  }
  throw new InvalidOptionError(
    "enqueue():",
    "prompt",
    `must be a non-empty string or a non-empty array of content blocks, received ${describeValue(prompt)}.`,
  );
}
