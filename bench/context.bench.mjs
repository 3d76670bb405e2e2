// Benchmark of long conversations (not a test): the context contract's figures (C6, C8, C10).
// Run from the repository root after building the packages:
//
//   node bench/context.bench.mjs         # add --quick for a shorter run
//
// (1) One run of 1,000 tool turns with 2 KB tool results on a SQLite session, compaction on
//     (maxInputTokens 12,000; clearToolResults, then compact): the tokens each request sent (as
//     the model server counted them), the CPU per turn at turns 91–100 and 991–1,000 (goal:
//     flat, ≤ 1.10 × turn 100), and the time for a new prompt on the session to reach the model
//     request afterwards (goal < 50 ms).
// (2) The share of input tokens read from the prompt cache over a 200-turn run with compaction
//     (C6), with the Anthropic adapter's breakpoints on.
// (3) A 100,000-entry session (20,000 runs of a tool call and an answer) on SQLite, Postgres and
//     Redis: the time for a new prompt to reach the model request, before (the whole log folded)
//     and after `agent.compact()` wrote a checkpoint (goal < 50 ms, C8).
//
// The model server runs in a child process, so process CPU here is the client's alone.
import { fork } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { postgresSessionStore } from "@lattice/store-postgres";
import { redisSessionStore } from "@lattice/store-redis";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import { startPostgres, startRedis } from "@lattice/test-servers";
import { anthropic, clearToolResults, compact, createAgent, tool } from "agent-lattice";
import { z } from "zod/v4";

const quick = process.argv.includes("--quick");
const LONG_TURNS = quick ? 300 : 1000;
const LATE = LONG_TURNS;
const CACHE_TURNS = 200;
const BIG_RUNS = quick ? 4000 : 20_000; // 5 entries each
const PROMPTS = quick ? 3 : 7;
const THRESHOLD = 12_000;
const here = dirname(fileURLToPath(import.meta.url));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

const child = fork(join(here, "context-server.mjs"), [], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const { url } = await new Promise((resolve) => child.once("message", resolve));
const folder = mkdtempSync(join(tmpdir(), "lattice-context-bench-"));
let runNumber = 0;

const BIG = "x".repeat(2048);
/** The tool: 2 KB results; records the CPU clock at the turns that bound the windows. */
function readTool(marks) {
  return tool("read", "Read a file", z.object({ n: z.number() }), ({ n }) => {
    marks?.set(n, cpuMicros());
    return { content: `file ${n}: ${BIG}` };
  });
}

function agentOn(store, turns, marks, extra = {}) {
  runNumber++;
  return createAgent({
    provider: anthropic({ apiKey: "bench", baseURL: url, maxRetries: 0 }),
    model: `bench-${runNumber}-${turns}`,
    tools: [readTool(marks)],
    maxTurns: turns + 10,
    stream: false,
    sessionStore: store,
    contextManagement: {
      maxInputTokens: THRESHOLD,
      strategies: [clearToolResults({ keepLast: 8 }), compact({ keepLastTurns: 6 })],
    },
    ...extra,
  });
}

/** Milliseconds from `query()` to its first model request (the trace's model_request_started). */
async function timeToRequest(makeAgent, prompt, sessionId) {
  let started;
  let reached;
  const agent = makeAgent((event) => {
    if (
      event.type === "model_request_started" &&
      reached === undefined &&
      event.purpose === undefined
    ) {
      reached = performance.now() - started;
    }
  });
  started = performance.now();
  const result = await agent.run(prompt, { sessionId });
  if (result.subtype !== "success")
    throw new Error(`${result.subtype}: ${result.errors.join(" ")}`);
  return reached;
}

// (1) 1,000 turns, compaction on.
{
  const store = sqliteSessionStore({ path: join(folder, "long.db") });
  const marks = new Map();
  const agent = agentOn(store, LONG_TURNS, marks);
  const result = await agent.run("Read every file", { sessionId: "long" });
  if (result.subtype !== "success") throw new Error(`long run: ${result.subtype} ${result.errors}`);
  const { entries } = await store.load("long");
  const replies = entries.filter((entry) => entry.type === "reply");
  const sent = replies.map(
    (reply) =>
      reply.usage.inputTokens +
      reply.usage.cacheReadInputTokens +
      reply.usage.cacheCreationInputTokens,
  );
  const compactions = entries.filter((entry) => entry.type === "compaction");
  const window = (from, to) => (marks.get(to) - marks.get(from)) / (to - from);
  const early = window(90, 100);
  const late = window(LATE - 10, LATE);
  const prompts = [];
  for (let index = 0; index < PROMPTS; index++) {
    prompts.push(
      await timeToRequest(
        (onTrace) => agentOn(store, 0, undefined, { onTrace }),
        `Next ${index}`,
        "long",
      ),
    );
  }
  console.log(
    `One run of ${LONG_TURNS} tool turns, 2 KB results, maxInputTokens ${THRESHOLD} (SQLite session):`,
  );
  console.log(
    `  tokens sent per request: turn 100 ${sent[99]}, turn ${LONG_TURNS / 2} ${sent[LONG_TURNS / 2 - 1]}, turn ${LONG_TURNS} ${sent[LONG_TURNS - 1]}; max after turn 100 ${Math.max(...sent.slice(100))} (threshold ${THRESHOLD})`,
  );
  console.log(
    `  compactions: ${compactions.length} (${compactions.filter((entry) => entry.strategy === "compact").length} summaries)`,
  );
  console.log(
    `  CPU per turn: turns 91–100 ${(early / 1000).toFixed(3)} ms, turns ${LATE - 9}–${LATE} ${(late / 1000).toFixed(3)} ms: ratio ${(late / early).toFixed(2)} (goal ≤ 1.10)`,
  );
  console.log(
    `  a new prompt on the session reaches the model request in ${median(prompts).toFixed(1)} ms (median of ${PROMPTS}; goal < 50 ms; ${entries.length} entries)`,
  );
  await store.close();
}

// (2) The cache's share of input over a 200-turn run with compaction (C6).
{
  const store = sqliteSessionStore({ path: join(folder, "cache.db") });
  const agent = agentOn(store, CACHE_TURNS, undefined, { promptCaching: "auto" });
  const result = await agent.run("Read every file", { sessionId: "cache" });
  if (result.subtype !== "success") throw new Error(`cache run: ${result.subtype}`);
  const { inputTokens, cacheReadInputTokens, cacheCreationInputTokens } = result.usage;
  const share =
    cacheReadInputTokens / (inputTokens + cacheReadInputTokens + cacheCreationInputTokens);
  console.log(
    `A ${CACHE_TURNS}-turn run with compaction, prompt caching on: ${(share * 100).toFixed(1)} % of input tokens read from the cache`,
  );
  await store.close();
}

// (3) 100,000 entries: a new prompt before and after a compaction's checkpoint.
/** The entries of `runs` finished runs: a prompt, a tool call, its result, an answer, the end. */
function* syntheticLog(runs) {
  const usage = {
    inputTokens: 100,
    outputTokens: 20,
    cacheReadInputTokens: 0,
    cacheCreationInputTokens: 0,
  };
  for (let n = 0; n < runs; n++) {
    const runId = `run-${n}`;
    const id = `toolu_${n}`;
    yield {
      v: 1,
      type: "run_started",
      runId,
      time: "2026-12-01T00:00:00.000Z",
      message: { role: "user", content: `Question ${n}: what does file ${n} say?` },
    };
    yield {
      v: 1,
      type: "reply",
      runId,
      turn: 1,
      message: {
        role: "assistant",
        content: [{ type: "tool_use", id, name: "read", input: { n } }],
      },
      stopReason: "tool_use",
      usage,
    };
    yield {
      v: 1,
      type: "tool_result",
      runId,
      toolUseId: id,
      toolName: "read",
      status: "completed",
      block: {
        type: "tool_result",
        tool_use_id: id,
        content: [{ type: "text", text: `file ${n}: the numbers add up to ${n * 7}.` }],
      },
    };
    yield {
      v: 1,
      type: "reply",
      runId,
      turn: 2,
      message: {
        role: "assistant",
        content: [{ type: "text", text: `File ${n} says the numbers add up to ${n * 7}.` }],
      },
      stopReason: "end_turn",
      usage,
    };
    yield {
      v: 1,
      type: "run_finished",
      runId,
      subtype: "success",
      result: `File ${n} says so.`,
      errors: [],
      numTurns: 2,
      usage,
    };
  }
}

async function fill(store, sessionId) {
  let version = 0;
  let chunk = [];
  for (const entry of syntheticLog(BIG_RUNS)) {
    chunk.push(entry);
    if (chunk.length === 1000) {
      version = await store.append(sessionId, version, chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) version = await store.append(sessionId, version, chunk);
  return version;
}

/** The store with its checkpoints hidden: what loading cost before them. */
function withoutCheckpoints(store) {
  return {
    name: store.name,
    load: (sessionId) => store.load(sessionId),
    append: (...args) => store.append(...args),
    list: () => store.list(),
    delete: (sessionId) => store.delete(sessionId),
  };
}

async function bigSession(label, store) {
  const version = await fill(store, "big");
  const before = await timeToRequest(
    (onTrace) => agentOn(withoutCheckpoints(store), 0, undefined, { onTrace }),
    "One more question",
    "big",
  );
  const agent = agentOn(store, 0, undefined);
  const compacting = performance.now();
  const done = await agent.compact("big", { strategies: [compact({ keepLastTurns: 2 })] });
  const compactMs = performance.now() - compacting;
  const after = [];
  for (let index = 0; index < PROMPTS; index++) {
    after.push(
      await timeToRequest(
        (onTrace) => agentOn(store, 0, undefined, { onTrace }),
        `After ${index}`,
        "big",
      ),
    );
  }
  console.log(
    `  ${label}: ${version} entries; a new prompt reaches the model request in ${before.toFixed(0)} ms before, ${median(after).toFixed(1)} ms after a compaction and its checkpoint (median of ${PROMPTS}; goal < 50 ms); compact() took ${(compactMs / 1000).toFixed(1)} s (${done.messagesBefore} → ${done.messagesAfter} messages)`,
  );
}

console.log(`A ${BIG_RUNS * 5}-entry session (${BIG_RUNS} runs of a tool call and an answer):`);
{
  const store = sqliteSessionStore({ path: join(folder, "big.db") });
  await bigSession("SQLite", store);
  await store.close();
}
{
  const postgres = await startPostgres();
  const store = postgresSessionStore({ connectionString: postgres.connectionString });
  await store.migrate();
  try {
    await bigSession("Postgres", store);
  } finally {
    await store.close();
    await postgres.stop();
  }
}
{
  const redis = await startRedis();
  const store = redisSessionStore({ url: redis.url });
  try {
    await bigSession("Redis", store);
  } finally {
    await store.close();
    await redis.stop();
  }
}

child.disconnect();
rmSync(folder, { recursive: true, force: true });
