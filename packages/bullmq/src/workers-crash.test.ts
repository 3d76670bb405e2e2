import type { ChildProcess } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { postgresSessionStore } from "@lattice/store-postgres";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startWorkerProcess } from "./fixtures/start-worker-process.js";
import { startWorkerServers, type WorkerServers } from "./fixtures/worker-servers.js";
import { createRunQueue } from "./index.js";

let servers: WorkerServers;
beforeAll(async () => {
  // "run N" → two work calls, then "done N".
  servers = await startWorkerServers("lattice-bullmq-crash-", (n) =>
    ["a", "b"].map((item) => ({ id: `call_${n}_${item}`, name: "work", input: { item } })),
  );
}, 60_000);
afterAll(() => servers?.stop());

function startWorker(
  queueName: string,
  store: string,
  record: string,
  crash = "",
  delayMs?: number,
): Promise<ChildProcess> {
  return startWorkerProcess({
    redisUrl: servers.redis.url,
    queueName,
    store,
    modelURL: servers.model.anthropicBaseURL,
    record,
    crash,
    ...(delayMs === undefined ? {} : { delayMs }),
  });
}

describe("workers in separate processes", () => {
  it("D11, D5: 3 worker processes, 200 runs, one SIGKILLed mid-run: every run finishes right, and no call whose result was logged runs again", async () => {
    const store = postgresSessionStore({ connectionString: servers.postgres.connectionString });
    await store.migrate();
    const record = join(servers.folder, "record.log");
    writeFileSync(record, "");
    const queueName = "crash";
    // The victim's calls take longer (300 ms), so that when it is killed some are in flight.
    const workers = await Promise.all(
      [300, undefined, undefined].map((delayMs) =>
        startWorker(queueName, servers.postgres.connectionString, record, "", delayMs),
      ),
    );
    const victim = workers[0]!;
    const queue = createRunQueue({ connection: servers.redis.url, name: queueName });
    try {
      const runs = [];
      for (let n = 0; n < 200; n++) {
        runs.push(await queue.enqueue("worker", `run ${n}`, { sessionId: `session-${n}` }));
      }
      // Kill one worker once it is busy: some of its calls have ended, and some are in flight
      // (started, not ended) — checked on the record just before the kill, within its 300 ms.
      const lines = () => readFileSync(record, "utf8").split("\n").filter(Boolean);
      for (let tries = 0; tries < 1500; tries++) {
        const ended = new Set<string>();
        const started: string[] = [];
        for (const line of lines()) {
          const [pid, what, call] = line.split(" ");
          if (pid !== String(victim.pid)) continue;
          if (what === "end") ended.add(call!);
          else if (what === "start") started.push(call!);
        }
        if (ended.size >= 10 && started.some((call) => !ended.has(call))) break;
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
      victim.kill("SIGKILL");
      await new Promise((resolve) => victim.once("exit", resolve));
      // What the log holds at the kill: these calls must never run again.
      const loggedAtKill = new Set<string>();
      for (const { sessionId } of runs) {
        for (const entry of (await store.load(sessionId)).entries) {
          if (entry.type === "tool_result") loggedAtKill.add(`${entry.runId}/${entry.toolUseId}`);
        }
      }

      const results = await Promise.all(
        runs.map(({ runId }) => queue.result(runId, { timeoutMs: 90_000 })),
      );
      results.forEach((result, n) => {
        expect(result).toMatchObject({ subtype: "success", result: `done ${n}`, numTurns: 2 });
      });

      const executions = new Map<string, string[]>();
      for (const line of lines()) {
        const [pid, what, call] = line.split(" ");
        if (what !== "start") continue;
        executions.set(call!, [...(executions.get(call!) ?? []), pid!]);
      }
      // Every call of every run ran, and its result is in the log.
      expect(executions.size).toBe(400);
      for (const call of loggedAtKill) expect(executions.get(call)).toHaveLength(1);
      const again = [...executions].filter(([, pids]) => pids.length > 1);
      for (const [, pids] of again) {
        // Only a call cut by the kill ran again (at-least-once for unlogged calls, R18).
        expect(pids).toHaveLength(2);
        expect(pids[0]).toBe(String(victim.pid));
      }
      // The kill cut steps mid-way (calls in flight), and other workers took them again.
      expect(again.length).toBeGreaterThan(0);
      for (const [, pids] of again) expect(pids[1]).not.toBe(String(victim.pid));
      expect(loggedAtKill.size).toBeLessThan(400);
    } finally {
      for (const worker of workers) if (worker.exitCode === null) worker.kill("SIGTERM");
      await Promise.all(
        workers.map((worker) =>
          worker.exitCode !== null || worker.signalCode !== null
            ? undefined
            : new Promise((resolve) => worker.once("exit", resolve)),
        ),
      );
      await queue.close();
      await store.close();
    }
  }, 180_000);

  it("D5: a worker killed between storing a step and publishing its messages: events() still gives every message", async () => {
    const record = join(servers.folder, "record-publish.log");
    writeFileSync(record, "");
    const queueName = "publish-crash";
    const dying = await startWorker(queueName, servers.redis.url, record, "die-after-reply");
    const queue = createRunQueue({ connection: servers.redis.url, name: queueName });
    let other: ChildProcess | undefined;
    try {
      const { runId } = await queue.enqueue("worker", "run 7");
      await new Promise((resolve) => dying.once("exit", resolve));
      other = await startWorker(queueName, servers.redis.url, record);
      const result = await queue.result(runId, { timeoutMs: 30_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done 7" });
      const types: string[] = [];
      for await (const message of queue.events(runId)) types.push(message.type);
      expect(types).toEqual(["system", "assistant", "user", "assistant", "result"]);
    } finally {
      other?.kill("SIGTERM");
      if (other !== undefined) await new Promise((resolve) => other!.once("exit", resolve));
      await queue.close();
    }
  }, 60_000);
});
