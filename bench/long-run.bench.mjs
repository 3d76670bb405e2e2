// Benchmark of long runs and sessions (not a test), each figure beside a floor measured in the
// same run. Run from the repository root after building the packages:
//
//   node bench/long-run.bench.mjs         # add --quick for a shorter run
//
// (1) CPU per turn at turn 100 and turn 200 of ONE run of 200 tool turns and a final reply,
//     beside the hand-written fetch loop of agent.bench.mjs run the same way (its history
//     grows identically: the whole conversation is resent every turn). The CPU is read when
//     the tool of turns 90, 100, 190 and 200 is called, so a window covers turns 91–100 or
//     191–200: each the model request, its reply and the tool call. The goal is the per-turn
//     rows' (≤ 1.10 × the floor, the goal of performance.md) at both windows, and a ratio that does not grow from turn 100
//     to turn 200: a loop that re-derived its conversation every turn would fall behind the
//     floor as the run grows.
//     The same run over SSE (`stream: true`) beside the floor loop reading the same SSE
//     (`floorRun(..., stream = true)`): the streaming rows, same windows and goal (issue 28).
// (2) The same run on a session (`{ sessionId }`), on the memory store and on SQLite (WAL,
//     synchronous "normal"): every run log entry appended before the next step.
// (3) `agent.resume(id)` of a session whose log holds a 1,000-message conversation (the
//     prompt, 499 turns of one tool call and its result, and a last reply whose call has no
//     result): time to the first model request (load, derive, run the one call, append its
//     result, build the request) and to `finalResult()` (the model answers at once), median of
//     several resumes, beside one raw fetch of the same 1,001-message request.
//
// The model server runs in a child process, so process CPU here is the client's alone.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import { createAgent, memorySessionStore, tool } from "agent-lattice";
import { z } from "zod/v4";
import { floorRun, startModelServer } from "./agent.bench.mjs";

const quick = process.argv.includes("--quick");
const LONG_TURNS = 200;
const ROUNDS = quick ? 7 : 21;
const WARM_UP_ROUNDS = quick ? 2 : 3;
const RESUME_TURNS = 500; // the captured run; its first 1,000 entries are the session
const RESUMES = quick ? 5 : 11;
/** The windows: CPU read at the tool call of turn `from` and of turn `to` (1-based). */
const WINDOWS = [
  { name: "turn100", from: 90, to: 100 },
  { name: "turn200", from: 190, to: 200 },
];

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/**
 * The CPU clock of one run, read at the tool calls that bound the windows. The model server
 * numbers turns from 0 in the tool's input (`n`), so turn k calls the tool with n = k - 1.
 */
function windowClock() {
  const marks = new Map();
  const wanted = new Set(WINDOWS.flatMap((window) => [window.from - 1, window.to - 1]));
  return {
    mark(n) {
      if (wanted.has(n)) marks.set(n, cpuMicros());
    },
    /** CPU per turn of each window, in µs. */
    perTurn() {
      const result = {};
      for (const { name, from, to } of WINDOWS) {
        const start = marks.get(from - 1);
        const end = marks.get(to - 1);
        if (start === undefined || end === undefined) throw new Error(`window ${name} not seen`);
        result[name] = (end - start) / (to - from);
      }
      marks.clear();
      return result;
    },
  };
}

const folder = mkdtempSync(join(tmpdir(), "lattice-long-run-bench-"));
const server = await startModelServer();
const rows = [];
const row = (measure, floor, lattice, ratio, goal, met) =>
  rows.push({ measure, floor, lattice, ratio, goal, met });
const us = (value) => `${value.toFixed(1)} µs`;
const ms = (value) => `${value.toFixed(2)} ms`;
const figures = {};

try {
  // -------------------------------------------------------------------------------------
  // (1) and (2): CPU per turn at turn 100 and 200 of one long run.
  // -------------------------------------------------------------------------------------
  const clock = windowClock();
  const model = `long-${LONG_TURNS}`;
  const markingTool = () =>
    tool(
      "t0",
      "d",
      z.object({ n: z.number() }),
      ({ n }) => {
        clock.mark(n);
        return { content: String(n) };
      },
      { isConcurrencySafe: () => true },
    );
  const longAgent = (sessionStore, stream = false) =>
    createAgent({
      apiKey: "bench",
      baseURL: server.url,
      model,
      tools: [markingTool()],
      stream,
      maxTurns: LONG_TURNS + 10,
      ...(sessionStore !== undefined ? { sessionStore } : {}),
    });
  const memory = memorySessionStore();
  const sqlite = sqliteSessionStore({ path: join(folder, "long-run.db") });
  const stateless = longAgent(undefined);
  const onMemory = longAgent(memory);
  const onSqlite = longAgent(sqlite);
  const streaming = longAgent(undefined, true);
  let sessions = 0;
  const latticeVariant = (agent, store) => async () => {
    const sessionId = store === undefined ? undefined : `long-${sessions++}`;
    const result = await agent.run("go", sessionId === undefined ? undefined : { sessionId });
    if (result.subtype !== "success" || result.numTurns !== LONG_TURNS + 1)
      throw new Error(`expected ${LONG_TURNS + 1} turns, got ${result.subtype} ${result.numTurns}`);
    const perTurn = clock.perTurn();
    if (store !== undefined) await store.delete(sessionId);
    return perTurn;
  };
  const variants = {
    floor: async () => {
      const message = await floorRun(server.url, model, 1, false, undefined, (use) => {
        clock.mark(use.input.n);
        return String(use.input.n);
      });
      if (message.content[0]?.text !== "final answer") throw new Error("the floor did not end");
      return clock.perTurn();
    },
    // The same run over SSE, beside a hand-written loop that reads the same SSE (issue 28).
    floorStreaming: async () => {
      const message = await floorRun(server.url, model, 1, true, undefined, (use) => {
        clock.mark(use.input.n);
        return String(use.input.n);
      });
      if (message.content[0]?.text !== "final answer") throw new Error("the floor did not end");
      return clock.perTurn();
    },
    stateless: latticeVariant(stateless, undefined),
    streaming: latticeVariant(streaming, undefined),
    memory: latticeVariant(onMemory, memory),
    sqlite: latticeVariant(onSqlite, sqlite),
  };
  const names = Object.keys(variants);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  for (let round = 0; round < WARM_UP_ROUNDS + ROUNDS; round++) {
    // Rotate which goes first so drift (JIT, GC, a neighbour's load) hits all alike.
    for (let index = 0; index < names.length; index++) {
      const name = names[(round + index) % names.length];
      const perTurn = await variants[name]();
      if (round >= WARM_UP_ROUNDS) samples[name].push(perTurn);
    }
  }
  await sqlite.close();
  // A collection that lands in a 10-turn window makes it an outlier (2–4 × the others), in
  // one variant at a time: the median of each variant's windows, then their ratio (a median of
  // per-round ratios would be hit by every outlier of either side).
  const summary = (name, window) => median(samples[name].map((sample) => sample[window]));
  const floorOf = (name) => (name === "streaming" ? "floorStreaming" : "floor");
  const ratio = (name, window) => summary(name, window) / summary(floorOf(name), window);
  figures.longRun = {};
  for (const name of ["stateless", "streaming", "memory", "sqlite"]) {
    figures.longRun[name] = {};
    for (const { name: window } of WINDOWS) {
      figures.longRun[name][window] = {
        floorMicros: summary(floorOf(name), window),
        latticeMicros: summary(name, window),
        ratio: ratio(name, window),
      };
    }
    // How the ratio moves from turn 100 to turn 200.
    figures.longRun[name].drift = ratio(name, "turn200") / ratio(name, "turn100");
  }
  const label = {
    stateless: "no session",
    streaming: "no session, streaming (beside a streaming floor)",
    memory: "session, memory store",
    sqlite: "session, SQLite store",
  };
  for (const name of ["stateless", "streaming", "memory", "sqlite"]) {
    for (const { name: window, from, to } of WINDOWS) {
      const figure = figures.longRun[name][window];
      const goal = name === "stateless" || name === "streaming";
      row(
        `CPU per turn, turns ${from + 1}–${to} of one ${LONG_TURNS + 1}-turn run, ${label[name]}`,
        us(figure.floorMicros),
        us(figure.latticeMicros),
        figure.ratio.toFixed(2),
        goal ? "≤ 1.10" : "(reported)",
        goal ? (figure.ratio <= 1.1 ? "yes" : "NO") : "",
      );
    }
    const drift = figures.longRun[name].drift;
    row(
      `ratio at turn 200 ÷ ratio at turn 100, ${label[name]}`,
      "",
      "",
      drift.toFixed(2),
      name === "stateless" || name === "streaming" ? "≤ 1.05 (flat)" : "(reported)",
      name === "stateless" || name === "streaming" ? (drift <= 1.05 ? "yes" : "NO") : "",
    );
  }

  // -------------------------------------------------------------------------------------
  // (3) Resume of a 1,000-message session.
  // -------------------------------------------------------------------------------------
  // Capture a real run log: RESUME_TURNS turns of one tool call, then the final reply. Its
  // first 1,000 entries (run_started, 499 replies and results, the 500th reply) hold the
  // prompt and 999 messages of the model's turns: 1,000 messages, the last call unanswered.
  const resumeModel = `long-${RESUME_TURNS}`;
  const resumeTool = tool("t0", "d", z.object({ n: z.number() }), ({ n }) => ({
    content: String(n),
  }));
  const capture = memorySessionStore();
  const captured = await createAgent({
    apiKey: "bench",
    baseURL: server.url,
    model: resumeModel,
    tools: [resumeTool],
    stream: false,
    maxTurns: RESUME_TURNS + 10,
    sessionStore: capture,
  }).run("go", { sessionId: "capture" });
  if (captured.numTurns !== RESUME_TURNS + 1) throw new Error("the captured run did not end");
  const log = (await capture.load("capture")).entries.slice(0, 1000);
  if (log[999]?.type !== "reply" || log[998]?.type !== "tool_result")
    throw new Error("unexpected run log layout");
  const logKiB = (JSON.stringify(log).length / 1024).toFixed(0);
  // The request the resumed run sends: the 1,000 messages and the last call's result.
  const request = captured.messages.slice(0, 1001);

  const floorRequest = async () => {
    const started = performance.now();
    const response = await fetch(`${server.url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "bench",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: resumeModel,
        max_tokens: 1024,
        messages: request,
        tools: [{ name: "t0", description: "d", input_schema: { type: "object" } }],
      }),
    });
    const message = await response.json();
    if (message.content[0]?.text !== "final answer") throw new Error("unexpected floor reply");
    return performance.now() - started;
  };

  /** Resumes `count` copies of the session on a store; returns the median times. */
  const timeResumes = async (openStore, count) => {
    const writer = openStore();
    for (let index = 0; index < count; index++) await writer.append(`resume-${index}`, 0, log);
    await writer.close?.();
    const store = openStore(); // a fresh connection: nothing of the session in its cache
    let requestAt;
    let messageCount;
    const agent = createAgent({
      apiKey: "bench",
      baseURL: server.url,
      model: resumeModel,
      tools: [resumeTool],
      stream: false,
      maxTurns: RESUME_TURNS + 10,
      sessionStore: store,
      onTrace(event) {
        if (event.type === "model_request_started" && requestAt === undefined) {
          requestAt = event.time;
          messageCount = event.messageCount;
        }
      },
    });
    const toRequest = [];
    const toResult = [];
    const floor = [];
    for (let index = 0; index < count; index++) {
      floor.push(await floorRequest());
      requestAt = undefined;
      const started = performance.now();
      const result = await agent.resume(`resume-${index}`).finalResult();
      const ended = performance.now();
      if (result.subtype !== "success" || result.numTurns !== RESUME_TURNS + 1)
        throw new Error(`resume ended ${result.subtype} after ${result.numTurns} turns`);
      if (messageCount !== 1001)
        throw new Error(`the resumed request held ${messageCount} messages, not 1,001`);
      if (index === 0) continue; // warm-up
      toRequest.push(requestAt - started);
      toResult.push(ended - started);
    }
    await store.close?.();
    return {
      floorRequestMs: median(floor.slice(1)),
      toFirstRequestMs: median(toRequest),
      toFinalResultMs: median(toResult),
    };
  };
  // The memory store lives in this process: the writer and the reader are one store.
  const sharedMemory = memorySessionStore();
  figures.resume = {
    memory: await timeResumes(() => sharedMemory, RESUMES + 1),
    sqlite: await timeResumes(
      () => sqliteSessionStore({ path: join(folder, "resume.db") }),
      RESUMES + 1,
    ),
  };
  for (const [name, store] of [
    ["memory", "memory store"],
    ["sqlite", "SQLite store"],
  ]) {
    const figure = figures.resume[name];
    const goal = name === "sqlite";
    row(
      `resume a 1,000-message session (1,000 entries, ${logKiB} KiB; ${store}) to the first model request, median`,
      "",
      ms(figure.toFirstRequestMs),
      "",
      goal ? "< 20 ms" : "(reported)",
      goal ? (figure.toFirstRequestMs < 20 ? "yes" : "NO") : "",
    );
    row(
      `resume a 1,000-message session (${store}) to finalResult(), median`,
      `${ms(figure.floorRequestMs)} (one raw fetch of the 1,001-message request)`,
      ms(figure.toFinalResultMs),
      `+${ms(figure.toFinalResultMs - figure.floorRequestMs)}`,
      goal ? "< 20 ms" : "(reported)",
      goal ? (figure.toFinalResultMs < 20 ? "yes" : "NO") : "",
    );
  }
} finally {
  server.close();
  rmSync(folder, { recursive: true, force: true });
}

console.log(
  `\nLong runs and sessions (node ${process.version}, ${ROUNDS} runs of each, medians; non-streaming, one tool call per turn; files in ${tmpdir()})\n`,
);
console.log(
  "| measure | floor | Lattice | Lattice ÷ floor | goal | met |\n|---|---|---|---|---|---|",
);
for (const r of rows)
  console.log(`| ${r.measure} | ${r.floor} | ${r.lattice} | ${r.ratio} | ${r.goal} | ${r.met} |`);
console.log(
  '\nWith a session every run log entry (here a reply and a tool result per turn) is appended before the next step. SQLite adds one fsync-free WAL append (one transaction) per entry with synchronous "normal" (the default). The resume times include running the one unanswered call and appending its result.',
);
