import type { MailboxMessage } from "@lattice/core";
import type { Redis } from "ioredis";
import type { RunKeys } from "./keys.js";
import type { SessionLease } from "./lease.js";
import { encodeRecord, RECORD_FIELD, type StreamRecord } from "./step-job.js";

/**
 * Where a run is, as its queue records it (the `state` field of the run's hash). Internal.
 *
 * - `queued`: enqueued; its first step not taken yet, it waits its turn in its session's line
 *   (D10).
 * - `running`: a step of it was taken; its next step is a job, or is being taken.
 * - `interrupted`: paused for approvals, with no job (D7); `queue.resume()` continues it.
 * - `aborted`: stopped by `queue.abort()` (D9); `queue.resume()` continues it.
 * - `ended`: its result is published (a failed step's too, when `endRun()` stored it).
 * - `failed`: ended without a result in its log (`unknown_agent`, `session_busy`, `run_failed`).
 */
export type RunState = "queued" | "running" | "interrupted" | "aborted" | "ended" | "failed";

/** The states a step, an abort or a failure leaves a run in, once it stopped. Internal. */
export type RunStopState = Extract<RunState, "interrupted" | "aborted" | "ended" | "failed">;

/** Whether a run in `state` has ended for good (a new prompt starts a new run). Internal. */
export function runHasEnded(state: RunState | null): boolean {
  return state === "ended" || state === "failed";
}

/** Whether a run in `state` goes on by itself on the queue: it is queued or running. Internal. */
export function runGoesOn(state: RunState | null): boolean {
  return state === "queued" || state === "running";
}

/** Whether a run in `state` is parked until `queue.resume()`: interrupted or aborted. Internal. */
export function runIsParked(state: RunState | null): boolean {
  return state === "interrupted" || state === "aborted";
}

/** A run working on a handoff: where its result goes back to (D8). Internal. */
export interface RunReplyTo {
  /** The session that handed the task off. */
  readonly sessionId: string;
  /** The handoff's message, which the reply answers. */
  readonly mail: MailboxMessage;
}

/** The session's latest run on the queue, as `queue.resume(sessionId)` finds it. Internal. */
export interface LatestRun {
  readonly runId?: string;
  readonly agentName?: string;
}

/** A write refused because the worker no longer had the session's lease in Redis (H28). Internal. */
export class LeaseGone extends Error {
  constructor() {
    super("This worker no longer has the session's lease in Redis: it wrote nothing.");
    this.name = "LeaseGone";
  }
}

/** What {@link RunRecords} works on. Internal. */
export interface RunRecordsSettings {
  readonly client: Redis;
  readonly keys: RunKeys;
  /** How long an ended run's records stay (`keepEndedRunsMs`). */
  readonly keepMs: number;
}

/**
 * What a worker records about runs in Redis, beside the log in the session store: each run's
 * hash (agent, session, {@link RunState}, steps published, where it replies), its stream of
 * records for `events()` and `result()`, its abort flag, each session's latest run and its line
 * of runs waiting to start (D10). Writes are commands run in one transaction, under a step's
 * lease when one is given (H28). Internal.
 */
export class RunRecords {
  readonly #client: Redis;
  readonly #keys: RunKeys;
  readonly #keepMs: number;

  /** @param settings - The client, the queue's keys and how long ended runs stay. */
  constructor(settings: RunRecordsSettings) {
    this.#client = settings.client;
    this.#keys = settings.keys;
    this.#keepMs = settings.keepMs;
  }

  /** The run's state; `null` when its record has none (never on this queue, or expired). */
  async state(runId: string): Promise<RunState | null> {
    return (await this.#client.hget(this.#keys.run(runId), "state")) as RunState | null;
  }

  /** The run's state and when it was enqueued, for a run that may never have started. */
  async queued(
    runId: string,
  ): Promise<{ readonly state: RunState | null; readonly enqueuedAt: string | null }> {
    const [state, enqueuedAt] = await this.#client.hmget(
      this.#keys.run(runId),
      "state",
      "enqueuedAt",
    );
    return { state: (state ?? null) as RunState | null, enqueuedAt: enqueuedAt ?? null };
  }

  /** The last step whose messages were published (`-1` for none), and the run's state. */
  async published(
    runId: string,
  ): Promise<{ readonly published: number; readonly state: RunState | null }> {
    const [publishedText, state] = await this.#client.hmget(
      this.#keys.run(runId),
      "published",
      "state",
    );
    return {
      published: publishedText === null ? -1 : Number(publishedText),
      state: (state ?? null) as RunState | null,
    };
  }

  /** Where the run's result goes back to, when it works on a handoff (D8). */
  async replyTo(runId: string): Promise<RunReplyTo | undefined> {
    const text = await this.#client.hget(this.#keys.run(runId), "replyTo");
    return text === null ? undefined : (JSON.parse(text) as RunReplyTo);
  }

  /** The reason the run was aborted with, `null` when it was not (or a resume cleared it). */
  abortReason(runId: string): Promise<string | null> {
    return this.#client.get(this.#keys.abort(runId));
  }

  /** Whether the run's abort flag is set. */
  async aborted(runId: string): Promise<boolean> {
    return (await this.#client.exists(this.#keys.abort(runId))) === 1;
  }

  /** The session's latest run, as a step of it recorded it. */
  async latestRun(sessionId: string): Promise<LatestRun> {
    return this.#client.hgetall(this.#keys.session(sessionId));
  }

  /** The id of the session's latest run; `null` when no step of the session was taken. */
  latestRunId(sessionId: string): Promise<string | null> {
    return this.#client.hget(this.#keys.session(sessionId), "runId");
  }

  /** Records the run as the session's latest, for `queue.resume(sessionId)`. */
  async setLatestRun(sessionId: string, runId: string, agentName: string): Promise<void> {
    await this.#client.hset(this.#keys.session(sessionId), { runId, agentName });
  }

  /** The command that records the run as the session's latest. */
  latestRunCommand(sessionId: string, runId: string, agentName: string): string[] {
    return ["hset", this.#keys.session(sessionId), "runId", runId, "agentName", agentName];
  }

  /** The run at the head of the session's line of runs waiting to start; `null` for none. */
  headOfLine(sessionId: string): Promise<string | null> {
    return this.#client.lindex(this.#keys.waiting(sessionId), 0);
  }

  /** Takes the run out of the session's line of runs waiting to start. */
  async leaveLine(sessionId: string, runId: string): Promise<void> {
    await this.#client.lrem(this.#keys.waiting(sessionId), 1, runId);
  }

  /** The command that takes the run out of the session's line of runs waiting to start. */
  leaveLineCommand(sessionId: string, runId: string): string[] {
    return ["lrem", this.#keys.waiting(sessionId), "1", runId];
  }

  /** The command that records the run's state. */
  stateCommand(runId: string, state: RunState): string[] {
    return ["hset", this.#keys.run(runId), "state", state];
  }

  /** The command that records the last step whose messages were published. */
  publishedCommand(runId: string, step: number): string[] {
    return ["hset", this.#keys.run(runId), "published", String(step)];
  }

  /**
   * Records a new run as queued, at the end of its session's line, as `queue.enqueue()` does;
   * with where its result goes back to when it works on a handoff (D8).
   */
  async addQueued(
    run: { readonly runId: string; readonly agentName: string; readonly sessionId: string },
    replyTo?: RunReplyTo,
  ): Promise<void> {
    await this.#client
      .multi()
      .hset(this.#keys.run(run.runId), {
        agentName: run.agentName,
        sessionId: run.sessionId,
        state: "queued" satisfies RunState,
        enqueuedAt: new Date().toISOString(),
        ...(replyTo !== undefined ? { replyTo: JSON.stringify(replyTo) } : {}),
      })
      .rpush(this.#keys.waiting(run.sessionId), run.runId)
      .exec();
  }

  /**
   * Records a resume as accepted: the abort flag cleared, the run running again, and a
   * `resumed` record on its stream.
   */
  async accepted(runId: string): Promise<void> {
    await this.#client
      .multi()
      .del(this.#keys.abort(runId))
      .hset(this.#keys.run(runId), "state", "running" satisfies RunState)
      .xadd(this.#keys.events(runId), "*", RECORD_FIELD, encodeRecord({ kind: "resumed" }))
      .exec();
  }

  /**
   * Runs write commands (`[command, ...arguments]`) in one transaction. Under `lease`, only
   * while this worker still has the lease in Redis, checked in the same script (H28): a step
   * that lost its lease, even one frozen right after a check of it, writes nothing.
   *
   * @throws {@link LeaseGone} when the lease no longer held in Redis.
   */
  async write(
    commands: readonly (readonly string[])[],
    lease: SessionLease | undefined,
  ): Promise<void> {
    if (commands.length === 0) return;
    if (lease === undefined) {
      await this.#client.multi(commands as string[][]).exec();
      return;
    }
    if (!(await lease.whileHeld(commands))) throw new LeaseGone();
  }

  /** The commands that add records to a run's stream. */
  xadds(runId: string, records: readonly StreamRecord[]): string[][] {
    return records.map((record) => [
      "xadd",
      this.#keys.events(runId),
      "*",
      RECORD_FIELD,
      encodeRecord(record),
    ]);
  }

  /** Adds records to a run's stream; under `lease`, only while it holds (see `write`). */
  publish(runId: string, records: readonly StreamRecord[], lease?: SessionLease): Promise<void> {
    return this.write(this.xadds(runId, records), lease);
  }

  /**
   * Records a run's state once its step ended it, paused it or failed it. A run paused for
   * approvals keeps its records for as long as it waits; the others expire `keepMs` later.
   * Under `lease`, only while it holds (see `write`).
   */
  async markEnded(runId: string, state: RunStopState, lease?: SessionLease): Promise<void> {
    const sessionId = await this.#client.hget(this.#keys.run(runId), "sessionId");
    const commands: string[][] = [];
    // A run that never started leaves the session's line of waiting runs.
    if (sessionId !== null) commands.push(this.leaveLineCommand(sessionId, runId));
    commands.push(this.stateCommand(runId, state));
    if (state !== "interrupted") {
      commands.push(
        ["pexpire", this.#keys.run(runId), String(this.#keepMs)],
        ["pexpire", this.#keys.events(runId), String(this.#keepMs)],
      );
    }
    await this.write(commands, lease);
  }
}
