import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { postgresSessionStore } from "@lattice/store-postgres";
import {
  type PostgresServer,
  type RedisServer,
  startPostgres,
  startRedis,
} from "@lattice/test-servers";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRunQueue } from "./index.js";

const packageRoot = fileURLToPath(new URL("..", import.meta.url));
let redis: RedisServer;
let postgres: PostgresServer;
let model: ScriptedModelServer;
let folder: string;

beforeAll(async () => {
  [redis, postgres] = await Promise.all([startRedis(), startPostgres()]);
  folder = mkdtempSync(join(tmpdir(), "lattice-bullmq-crash-"));
  // "run N" → two work calls, then "done N".
  model = await createScriptedModelServer({
    respond: (request) => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] })
        .messages;
      const prompt = messages[0]!.content as string;
      const n = prompt.split(" ")[1];
      if (messages.length === 1) {
        return {
          content: ["a", "b"].map((item) => ({
            type: "tool_use" as const,
            id: `call_${n}_${item}`,
            name: "work",
            input: { item },
          })),
        };
      }
      return { content: [{ type: "text", text: `done ${n}` }] };
    },
  });
}, 60_000);

afterAll(async () => {
  await model?.close();
  await Promise.all([redis?.stop(), postgres?.stop()]);
  rmSync(folder, { recursive: true, force: true });
});

function startWorker(
  queueName: string,
  store: string,
  record: string,
  crash = "",
): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      "--conditions=@lattice/source",
      "--import",
      "tsx",
      "src/fixtures/worker-process.ts",
      redis.url,
      queueName,
      store,
      model.anthropicBaseURL,
      record,
      "40",
      crash,
    ],
    { cwd: packageRoot, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stderr = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    child.stdout!.on("data", (chunk: Buffer) => {
      if (chunk.toString().includes("ready")) resolve(child);
    });
    child.on("exit", (code) => reject(new Error(`worker exited with ${code}: ${stderr}`)));
  });
}

describe("workers in separate processes", () => {
  it("D11, D5: 3 worker processes, 200 runs, one SIGKILLed mid-run: every run finishes right, and no call whose result was logged runs again", async () => {
    const store = postgresSessionStore({ connectionString: postgres.connectionString });
    await store.migrate();
    const record = join(folder, "record.log");
    writeFileSync(record, "");
    const queueName = "crash";
    const workers = await Promise.all(
      [0, 1, 2].map(() => startWorker(queueName, postgres.connectionString, record)),
    );
    const victim = workers[0]!;
    const queue = createRunQueue({ connection: redis.url, name: queueName });
    try {
      const runs = [];
      for (let n = 0; n < 200; n++) {
        runs.push(await queue.enqueue("worker", `run ${n}`, { sessionId: `session-${n}` }));
      }
      // Kill one worker once it is busy: some of its calls have started, some have ended.
      const lines = () => readFileSync(record, "utf8").split("\n").filter(Boolean);
      for (let tries = 0; tries < 600; tries++) {
        const mine = lines().filter((line) => line.startsWith(`${victim.pid} end`)).length;
        if (mine >= 20) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
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
    const record = join(folder, "record-publish.log");
    writeFileSync(record, "");
    const queueName = "publish-crash";
    const dying = await startWorker(queueName, redis.url, record, "die-after-reply");
    const queue = createRunQueue({ connection: redis.url, name: queueName });
    let other: ChildProcess | undefined;
    try {
      const { runId } = await queue.enqueue("worker", "run 7");
      await new Promise((resolve) => dying.once("exit", resolve));
      other = await startWorker(queueName, redis.url, record);
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
