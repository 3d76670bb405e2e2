// Benchmark of runs on BullMQ workers (not a test), contract clause D12: runs per second and
// latency per step with 1, 2 and 4 worker processes on a local Redis, as ratios to the
// in-process agent on the same scripted model server. Run from the repository root after
// building the packages (`pnpm bench` builds first):
//
//   node --expose-gc bench/workers.bench.mjs      # add --quick for fewer runs, --json for JSON
//
// Every run is 3 steps: a model call that asks for two tool calls, the batch of the two
// calls (instant handlers), and a model call that gives the final text.
//   (a) throughput: N runs (200; 60 with --quick), enqueued at once and awaited with
//       `queue.result()`, each worker taking 8 steps at a time (`concurrency: 8`); beside the
//       in-process agent running the same N runs 8 at a time (`agent.run()`), on the same
//       kind of store (`redisSessionStore` on the same Redis) and, as a second floor, on
//       `memorySessionStore()`. After warm-up rounds, each worker count runs 3 rounds (1 with
//       --quick) between in-process rounds; a round's ratio is its figure over the mean of the
//       in-process figures on either side, and the table shows the medians (the memory-store
//       figure: the mean of one round before and one after all the worker counts).
//   (b) latency: one run at a time, wall time from `enqueue()` to `result()` divided by its 3
//       steps, beside `agent.run()` of the same run divided by 3, alternating one by one;
//       "added" is the median of the worker figures minus the median of the in-process ones
//       (the median of the paired differences is shown beside it). Goal: < 5 ms added per
//       step at p50 (performance.md).
//
// The bench starts its own `redis-server` (a free loopback port, `--save ""`, a temp folder)
// and stops it; the model server and each worker are child processes (this file, with
// `--model-server` or `--worker`), so the workers are separate processes as in production.
// The producer (enqueue and result) runs in this process. Everything shares this machine's
// cores: more worker processes than cores cannot add throughput here.
import { fork, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createConnection, createServer } from "node:net";
import { cpus, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createRunQueue, createRunWorker } from "@lattice/bullmq";
import { redisSessionStore } from "@lattice/store-redis";
import { createAgent, memorySessionStore, tool } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { z } from "zod/v4";

const self = fileURLToPath(import.meta.url);
const quick = process.argv.includes("--quick");
const asJson = process.argv.includes("--json");
const RUNS = quick ? 60 : 200;
const CONCURRENCY = 8;
const WARM_UP_RUNS = quick ? 20 : 40;
const LATENCY_ROUNDS = quick ? 11 : 41;
const THROUGHPUT_ROUNDS = quick ? 1 : 3;
const STEPS_PER_RUN = 3;
const WORKER_COUNTS = [1, 2, 4];
const AGENT = "bench";
const GOAL_ADDED_MS = 5;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** The agent every worker and the in-process runs use: two instant, concurrency-safe tools. */
function agentOptions(modelUrl) {
  const tools = ["t0", "t1"].map((name) =>
    tool(name, "Returns at once", z.object({ n: z.number() }), ({ n }) => ({ content: `${n}` }), {
      isConcurrencySafe: () => true,
    }),
  );
  return { apiKey: "bench", baseURL: modelUrl, model: "bench-workers", tools, maxTurns: 4 };
}

// ---------------------------------------------------------------------------------------
// Child roles: the scripted model server, and a worker.
// ---------------------------------------------------------------------------------------
async function modelServerRole() {
  const usage = { inputTokens: 10, outputTokens: 3 };
  const server = await createScriptedModelServer({
    recordRequests: false,
    validate: false,
    respond(request) {
      const answered = request.body.messages.some((message) => message.role === "assistant");
      if (answered) return { content: [{ type: "text", text: "done" }], usage };
      return {
        content: ["t0", "t1"].map((name, index) => ({
          type: "tool_use",
          id: `toolu_${index}`,
          name,
          input: { n: index },
        })),
        usage,
      };
    },
  });
  process.send({ url: server.url });
  process.on("disconnect", () => server.close().then(() => process.exit(0)));
}

async function workerRole([redisUrl, queueName, modelUrl]) {
  const store = redisSessionStore({ url: redisUrl, keyPrefix: `bench:${queueName}:` });
  const worker = createRunWorker({
    connection: redisUrl,
    name: queueName,
    agents: { [AGENT]: agentOptions(modelUrl) },
    sessionStore: store,
    concurrency: CONCURRENCY,
    onError: (error) => process.stderr.write(`worker error: ${error.message}\n`),
  });
  await worker.ready();
  process.send({ ready: true });
  process.on("disconnect", async () => {
    await worker.close();
    await store.close();
    process.exit(0);
  });
}

// ---------------------------------------------------------------------------------------
// The bench's own Redis.
// ---------------------------------------------------------------------------------------
function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function answersPing(port) {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const finish = (answer) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk) => {
      reply += chunk;
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}

/** Starts `redis-server --save ""` on a free port in a temp folder; `undefined` when missing. */
async function startRedis() {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "lattice-workers-bench-"));
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { cwd: dir, stdio: "ignore" },
  );
  const failed = new Promise((resolve) => child.once("error", resolve));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    }
    rmSync(dir, { recursive: true, force: true });
  };
  process.once("exit", () => child.kill("SIGKILL"));
  const deadline = Date.now() + 15_000;
  for (;;) {
    const error = await Promise.race([failed, new Promise((resolve) => setTimeout(resolve, 50))]);
    if (error !== undefined) {
      rmSync(dir, { recursive: true, force: true });
      return undefined;
    }
    if (await answersPing(port)) return { url: `redis://127.0.0.1:${port}`, stop };
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`redis-server did not answer on port ${port} within 15 s`);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Measurements.
// ---------------------------------------------------------------------------------------
function forkRole(args) {
  return fork(self, args, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
}

async function startModelServer() {
  const child = forkRole(["--model-server"]);
  const url = await new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message.url));
    child.once("exit", (code) => reject(new Error(`model server exited with ${code}`)));
  });
  return { url, close: () => child.disconnect() };
}

async function startWorkers(count, redisUrl, queueName, modelUrl) {
  const children = Array.from({ length: count }, () =>
    forkRole(["--worker", redisUrl, queueName, modelUrl]),
  );
  await Promise.all(
    children.map(
      (child) =>
        new Promise((resolve, reject) => {
          child.once("message", resolve);
          child.once("exit", (code) => reject(new Error(`worker exited with ${code}`)));
        }),
    ),
  );
  return async () => {
    await Promise.all(
      children.map((child) => {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.disconnect();
        return exited;
      }),
    );
  };
}

const batch = randomBytes(3).toString("hex");
let sessions = 0;
const nextSession = () => `bench-${batch}-${sessions++}`;

function checkResult(result) {
  if (result.subtype !== "success" || result.result !== "done" || result.numTurns !== 2) {
    throw new Error(`a run did not end as scripted: ${JSON.stringify(result).slice(0, 300)}`);
  }
}

/** N runs of the in-process agent, `CONCURRENCY` at a time: runs per second. */
async function inProcessThroughput(agent, runs) {
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < runs) {
        next++;
        checkResult(await agent.run("go", { sessionId: nextSession() }));
      }
    }),
  );
  return runs / ((performance.now() - started) / 1000);
}

/** N runs enqueued at once, awaited with `result()`: runs per second. */
async function queueThroughput(queue, runs) {
  const started = performance.now();
  const enqueued = [];
  for (let index = 0; index < runs; index++) {
    enqueued.push(await queue.enqueue(AGENT, "go", { sessionId: nextSession() }));
  }
  const results = await Promise.all(enqueued.map(({ runId }) => queue.result(runId)));
  const seconds = (performance.now() - started) / 1000;
  for (const result of results) checkResult(result);
  return runs / seconds;
}

/** One run in process: wall milliseconds per step. */
async function inProcessLatency(agent) {
  const started = performance.now();
  checkResult(await agent.run("go", { sessionId: nextSession() }));
  return (performance.now() - started) / STEPS_PER_RUN;
}

/** One run through the queue, from `enqueue()` to `result()`: wall milliseconds per step. */
async function queueLatency(queue) {
  const started = performance.now();
  const { runId } = await queue.enqueue(AGENT, "go", { sessionId: nextSession() });
  checkResult(await queue.result(runId));
  return (performance.now() - started) / STEPS_PER_RUN;
}

async function main() {
  const redis = await startRedis();
  if (redis === undefined) {
    const message =
      "skipped: redis-server was not found on PATH (install it: sudo apt-get install -y redis-server)";
    console.log(asJson ? JSON.stringify({ skipped: message }) : message);
    return;
  }
  const model = await startModelServer();
  const redisStore = redisSessionStore({ url: redis.url, keyPrefix: "bench:in-process:" });
  const onRedis = createAgent({ ...agentOptions(model.url), sessionStore: redisStore });
  const inMemory = createAgent({ ...agentOptions(model.url), sessionStore: memorySessionStore() });
  const started = performance.now();
  const figures = {
    runs: RUNS,
    concurrency: CONCURRENCY,
    throughputRounds: THROUGHPUT_ROUNDS,
    latencyRounds: LATENCY_ROUNDS,
  };
  try {
    // Warm both in-process agents (JIT, connections): their figures drift up for a while.
    for (let round = 0; round < 3; round++) {
      await inProcessThroughput(onRedis, RUNS);
      await inProcessThroughput(inMemory, RUNS);
    }
    const memoryLatency = [];
    for (let index = 0; index < LATENCY_ROUNDS; index++) {
      memoryLatency.push(await inProcessLatency(inMemory));
    }
    const memoryBefore = await inProcessThroughput(inMemory, RUNS);
    figures.workers = [];
    for (const count of WORKER_COUNTS) {
      const queueName = `bench-${count}`;
      const stopWorkers = await startWorkers(count, redis.url, queueName, model.url);
      const queue = createRunQueue({ connection: redis.url, name: queueName });
      try {
        await queueThroughput(queue, WARM_UP_RUNS);
        // Rounds of in-process, workers, in-process, workers, ..., in-process: each workers
        // figure is compared with the mean of the in-process figures on either side of it.
        const inProcessRounds = [await inProcessThroughput(onRedis, RUNS)];
        const workerRounds = [];
        for (let round = 0; round < THROUGHPUT_ROUNDS; round++) {
          workerRounds.push(await queueThroughput(queue, RUNS));
          inProcessRounds.push(await inProcessThroughput(onRedis, RUNS));
        }
        const ratios = workerRounds.map(
          (value, round) => value / ((inProcessRounds[round] + inProcessRounds[round + 1]) / 2),
        );
        const runsPerSecond = median(workerRounds);
        const inProcessRunsPerSecond = median(inProcessRounds);
        const inProcess = [];
        const onWorkers = [];
        for (let index = 0; index < LATENCY_ROUNDS; index++) {
          if (index % 2 === 0) {
            inProcess.push(await inProcessLatency(onRedis));
            onWorkers.push(await queueLatency(queue));
          } else {
            onWorkers.push(await queueLatency(queue));
            inProcess.push(await inProcessLatency(onRedis));
          }
        }
        const msPerStep = median(onWorkers);
        const inProcessMsPerStep = median(inProcess);
        figures.workers.push({
          workers: count,
          runsPerSecond,
          inProcessRunsPerSecond,
          throughputRatio: median(ratios),
          msPerStep,
          p90MsPerStep: [...onWorkers].sort((a, b) => a - b)[Math.floor(onWorkers.length * 0.9)],
          inProcessMsPerStep,
          addedMsPerStep: msPerStep - inProcessMsPerStep,
          pairedAddedMsPerStep: median(onWorkers.map((value, index) => value - inProcess[index])),
          addedMsPerStepToMemory: msPerStep - median(memoryLatency),
        });
      } finally {
        await queue.close();
        await stopWorkers();
      }
    }
    figures.inProcessMemory = {
      runsPerSecond: (memoryBefore + (await inProcessThroughput(inMemory, RUNS))) / 2,
      msPerStep: median(memoryLatency),
    };
    for (const row of figures.workers) {
      row.throughputRatioToMemory = row.runsPerSecond / figures.inProcessMemory.runsPerSecond;
    }
  } finally {
    await redisStore.close();
    model.close();
    await redis.stop();
  }
  figures.seconds = (performance.now() - started) / 1000;
  for (const row of figures.workers) row.met = row.addedMsPerStep < GOAL_ADDED_MS;

  if (asJson) {
    console.log(JSON.stringify({ node: process.version, cpus: cpus().length, quick, ...figures }));
    return;
  }
  const memory = figures.inProcessMemory;
  const ms = (value) => `${value.toFixed(2)} ms`;
  const signed = (value) => `${value >= 0 ? "+" : ""}${value.toFixed(2)} ms`;
  console.log(
    `Runs on BullMQ workers (${cpus().length} cores), each run 3 steps (model call with 2 instant tool calls, the batch, final model call). Throughput: ${RUNS} runs, ${CONCURRENCY} steps at a time per worker, beside the in-process agent running them ${CONCURRENCY} at a time; medians of ${THROUGHPUT_ROUNDS} round(s), each ratio to the in-process rounds on either side. Latency: one run at a time, median of ${LATENCY_ROUNDS}, alternating with the in-process run. Session store: redisSessionStore on the bench's Redis for both; in-process on memorySessionStore: ${memory.runsPerSecond.toFixed(0)} runs/s, ${ms(memory.msPerStep)} per step.\n`,
  );
  console.log(
    "| workers | runs/s | in-process runs/s (Redis store) | workers ÷ in-process | ÷ in-process (memory store) | ms per step (p50 / p90) | in-process ms per step | added per step (paired) | added vs memory store | goal | met |\n|---|---|---|---|---|---|---|---|---|---|---|",
  );
  for (const row of figures.workers) {
    console.log(
      `| ${row.workers} | ${row.runsPerSecond.toFixed(0)} | ${row.inProcessRunsPerSecond.toFixed(0)} | ${row.throughputRatio.toFixed(2)} | ${row.throughputRatioToMemory.toFixed(2)} | ${ms(row.msPerStep)} / ${ms(row.p90MsPerStep)} | ${ms(row.inProcessMsPerStep)} | ${signed(row.addedMsPerStep)} (${signed(row.pairedAddedMsPerStep)}) | ${signed(row.addedMsPerStepToMemory)} | < +${GOAL_ADDED_MS} ms added (p50) | ${row.met ? "yes" : "NO"} |`,
    );
  }
}

const role = process.argv[2];
if (role === "--model-server") await modelServerRole();
else if (role === "--worker") await workerRole(process.argv.slice(3));
else await main();
