import type { ChildProcess } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { SessionStore } from "@lattice/core";
import { postgresSessionStore } from "@lattice/store-postgres";
import { redisSessionStore } from "@lattice/store-redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess, stopWorkerProcesses } from "./fixtures/start-worker-process.js";
import { startWorkerServers, type WorkerServers } from "./fixtures/worker-servers.js";
import { createRunQueue } from "./index.js";

/** The workers' job lock and session lease: short, so that a frozen worker loses them soon. */
const LOCK_MS = 600;

let servers: WorkerServers;
beforeAll(async () => {
  // "seq N" → three calls of the one-at-a-time tool "gated", then "done N".
  servers = await startWorkerServers("lattice-bullmq-fencing-", (n) =>
    [1, 2, 3].map((item) => ({
      id: `seq_${n}_${item}`,
      name: "gated",
      input: { item: `call ${item}` },
    })),
  );
}, 60_000);
afterAll(() => servers?.stop());

/**
 * One line of the record: `<pid> start|end <runId>/<toolUseId>`, or `<pid> fenced -` when the
 * worker dropped a step because its lease no longer held.
 */
interface Line {
  readonly pid: string;
  readonly what: string;
  readonly call: string;
}

function readLines(record: string): Line[] {
  return readFileSync(record, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [pid, what, call] = line.split(" ");
      return { pid: pid!, what: what!, call: call! };
    });
}

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const found = probe();
    if (found !== undefined) return found;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * The scenario of issue 21: a run of three sequential calls; the worker running call 1 is
 * frozen (SIGSTOP) past its job lock and session lease, until the other worker has taken the
 * step over and started call 1 again; then it wakes with call 1 finishing at once, while the
 * other worker's call 1 is still running.
 */
async function frozenDuringCallOne(options: {
  readonly queueName: string;
  readonly store: SessionStore;
  readonly workers: readonly ChildProcess[];
  readonly record: string;
  readonly n: number;
}): Promise<void> {
  const { record, n } = options;
  writeFileSync(record, "");
  for (const worker of options.workers) rmSync(`${record}.go-${worker.pid}`, { force: true });
  rmSync(`${record}.go-all`, { force: true });
  const queue = createRunQueue({ connection: servers.redis.url, name: options.queueName });
  try {
    const sessionId = `fenced-${options.queueName}-${n}`;
    const { runId } = await queue.enqueue("worker", `seq ${n}`, { sessionId });
    const call = (item: number) => `${runId}/seq_${n}_${item}`;
    const stale = await waitFor("call 1 to start", () =>
      readLines(record).find((line) => line.what === "start" && line.call === call(1)),
    );
    const frozen = options.workers.find((worker) => String(worker.pid) === stale.pid)!;
    frozen.kill("SIGSTOP");
    // The other worker takes the step over once the lock and the lease have lapsed.
    await waitFor("another worker to take call 1 over", () =>
      readLines(record).find(
        (line) => line.what === "start" && line.call === call(1) && line.pid !== stale.pid,
      ),
    );
    // The frozen worker wakes, and its call 1 ends at once; the other's is still running.
    const beforeWaking = readLines(record).length;
    writeFileSync(`${record}.go-${stale.pid}`, "");
    frozen.kill("SIGCONT");
    await waitFor("the woken worker's call 1 to end", () =>
      readLines(record).find(
        (line) => line.what === "end" && line.call === call(1) && line.pid === stale.pid,
      ),
    );
    // The woken worker drops its step: it logs nothing and starts nothing more.
    await waitFor("the woken worker to drop its step", () =>
      readLines(record).find((line) => line.what === "fenced" && line.pid === stale.pid),
    );
    writeFileSync(`${record}.go-all`, "");
    const result = await queue.result(runId, { timeoutMs: 60_000 });
    expect(result).toMatchObject({ subtype: "success", result: `done ${n}` });

    const lines = readLines(record);
    const starts = (item: number) =>
      lines.filter((line) => line.what === "start" && line.call === call(item));
    // The stale worker starts no call after it wakes.
    expect(
      lines.slice(beforeWaking).filter((line) => line.pid === stale.pid && line.what === "start"),
    ).toEqual([]);
    // Call 1 ran twice: cut by the lost lease on the frozen worker, then on the other one.
    // That is the at-least-once the bullmq README states for a call that was running when its
    // worker lost the lease ("Fenced steps", "What that guarantees"), as for a crash. Calls 2
    // and 3 ran once.
    expect(starts(1).map((line) => line.pid === stale.pid)).toEqual([true, false]);
    expect(starts(2)).toHaveLength(1);
    expect(starts(3)).toHaveLength(1);
    const takeover = starts(1)[1]!.pid;
    expect(starts(2)[0]!.pid).toBe(takeover);
    expect(starts(3)[0]!.pid).toBe(takeover);

    // Every call's result is logged once, and the stale worker logged nothing.
    const { entries } = await options.store.load(sessionId);
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
      "tool_result",
      "tool_result",
      "tool_result",
      "reply",
      "run_finished",
    ]);
    const results = entries.filter((entry) => entry.type === "tool_result");
    expect(results.map((entry) => entry.toolUseId)).toEqual([1, 2, 3].map((i) => `seq_${n}_${i}`));
    for (const entry of results) {
      expect(JSON.stringify(entry.block)).toContain(`done by ${takeover}`);
    }
  } finally {
    await queue.close();
  }
}

/** A store backend's two worker processes, its store and its record. */
interface Backend {
  readonly queueName: string;
  readonly store: SessionStore;
  readonly workers: readonly ChildProcess[];
  readonly record: string;
}

const BACKENDS = ["postgres", "redis"] as const;
const backends = new Map<(typeof BACKENDS)[number], Backend>();

// Both backends' workers start at once: starting a worker process is most of this file's time.
beforeAll(async () => {
  await Promise.all(
    BACKENDS.map(async (backend) => {
      const spec = backend === "postgres" ? servers.postgres.connectionString : servers.redis.url;
      const store =
        backend === "postgres"
          ? postgresSessionStore({ connectionString: spec })
          : redisSessionStore({ url: spec });
      if (backend === "postgres") {
        await (store as ReturnType<typeof postgresSessionStore>).migrate();
      }
      const record = join(servers.folder, `record-${backend}.log`);
      writeFileSync(record, "");
      const queueName = `fencing-${backend}`;
      const workers = await Promise.all(
        [0, 1].map(() =>
          startWorkerProcess({
            redisUrl: servers.redis.url,
            queueName,
            store: spec,
            modelURL: servers.model.anthropicBaseURL,
            record,
            lockDurationMs: LOCK_MS,
          }),
        ),
      );
      backends.set(backend, { queueName, store, workers, record });
    }),
  );
}, 60_000);
afterAll(async () => {
  for (const { workers, store } of backends.values()) {
    await stopWorkerProcesses(workers);
    await store.close?.();
  }
});

describe("a worker frozen past its lease (H28)", () => {
  for (const backend of BACKENDS) {
    it(`H28: a step that lost its lease writes nothing and starts no call; the worker that took over runs each call once (${backend} store, repeated)`, async () => {
      const { queueName, store, workers, record } = backends.get(backend)!;
      for (let n = 0; n < 2; n++) {
        await frozenDuringCallOne({ queueName, store, workers, record, n });
      }
    }, 60_000);
  }
});
