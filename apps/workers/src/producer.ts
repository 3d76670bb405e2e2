import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { createRunQueue } from "@lattice/bullmq";
import { AGENT_NAME } from "./triage-agent.js";

/** Options of {@link produceRuns}. */
export interface ProduceOptions {
  readonly redisUrl: string;
  readonly queue: string;
  /** How many runs to enqueue: tickets 1 to `runs`. */
  readonly runs: number;
  /** Prints a line. */
  readonly print: (line: string) => void;
  /** Stops waiting for the results (the runs go on). */
  readonly signal?: AbortSignal;
}

/** How one run ended, as the producer saw it. */
export interface RunOutcome {
  readonly sessionId: string;
  readonly runId: string;
  /** Whether the run ended with `success`. */
  readonly ok: boolean;
  /** The run's answer, or why it failed. */
  readonly text: string;
  /** From enqueueing to the result, in seconds. */
  readonly seconds: number;
}

/**
 * Enqueues `runs` triage runs ("triage ticket 1", ...), each on a session of its own
 * (`ticket-<n>-<4 hex digits>`), then waits for their results, from Redis, and prints each as
 * it comes. Workers may be started before or after: the runs wait in the queue.
 *
 * @param options - {@link ProduceOptions}.
 * @returns The outcome of every run, in ticket order.
 * @throws `RunQueueError` `redis_unreachable` when Redis does not answer; an `AbortError`
 *   when `signal` aborts.
 */
export async function produceRuns(options: ProduceOptions): Promise<RunOutcome[]> {
  const { print } = options;
  const queue = createRunQueue({
    connection: options.redisUrl,
    name: options.queue,
    connectTimeoutMs: 3_000,
  });
  try {
    await queue.ready();
    const batch = randomBytes(2).toString("hex");
    const started = performance.now();
    const enqueued = [];
    for (let ticket = 1; ticket <= options.runs; ticket++) {
      const sessionId = `ticket-${ticket}-${batch}`;
      enqueued.push(await queue.enqueue(AGENT_NAME, `triage ticket ${ticket}`, { sessionId }));
    }
    const names =
      enqueued.length === 1
        ? enqueued[0]!.sessionId
        : `${enqueued[0]!.sessionId} … ${enqueued.at(-1)!.sessionId}`;
    print(
      `Enqueued ${enqueued.length} run${enqueued.length === 1 ? "" : "s"} of "${AGENT_NAME}" on queue "${options.queue}" (${options.redisUrl}), one session each: ${names}.`,
    );
    const outcomes = await Promise.all(
      enqueued.map(async ({ runId, sessionId }): Promise<RunOutcome> => {
        let outcome: RunOutcome;
        try {
          const result = await queue.result(runId, {
            ...(options.signal !== undefined ? { signal: options.signal } : {}),
          });
          const ok = result.subtype === "success";
          const text = result.subtype === "success" ? result.result : result.errors.join(" ");
          outcome = { sessionId, runId, ok, text, seconds: secondsSince(started) };
        } catch (error) {
          if (options.signal?.aborted) throw error;
          const text = error instanceof Error ? error.message : String(error);
          outcome = { sessionId, runId, ok: false, text, seconds: secondsSince(started) };
        }
        print(
          `${outcome.ok ? "✓" : "✗"} ${sessionId}  ${outcome.seconds.toFixed(1)} s  ${outcome.text}`,
        );
        return outcome;
      }),
    );
    const succeeded = outcomes.filter((outcome) => outcome.ok).length;
    print(
      `${succeeded} of ${outcomes.length} runs succeeded in ${secondsSince(started).toFixed(1)} s.`,
    );
    return outcomes;
  } finally {
    await queue.close();
  }
}

function secondsSince(start: number): number {
  return (performance.now() - start) / 1000;
}
