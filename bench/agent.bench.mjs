// Benchmarks of the agent loop (not tests), each figure beside a floor measured in the same
// run: a hand-written tool loop over the platform fetch against the same scripted server, with
// no validation, no scheduler and no events (docs/performance.md). The model server
// runs in a child process, so process CPU here is the client's alone.
import { fork, spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { createAgent, tool } from "agent-lattice";
import { z } from "zod/v4";
import { idealMakespan, MAKESPAN_SCENARIOS } from "./scenarios.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const TURNS_PER_RUN = 21;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

export async function startModelServer() {
  const child = fork(join(here, "model-server.mjs"), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const url = await new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message.url));
    child.once("exit", (code) => reject(new Error(`model server exited with ${code}`)));
  });
  return {
    url,
    close: () => child.disconnect(),
    /** How many requests for the "slow" model the server has received so far. */
    slowRequests: () =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => finish(new Error("model server did not answer")), 10_000);
        const finish = (error, count) => {
          clearTimeout(timer);
          child.off("message", listener);
          child.off("exit", exited);
          if (error !== undefined) reject(error);
          else resolve(count);
        };
        const listener = (message) => {
          if (typeof message?.slowRequests === "number") finish(undefined, message.slowRequests);
        };
        const exited = (code) => finish(new Error(`model server exited with ${code}`));
        child.on("message", listener);
        child.once("exit", exited);
        child.send("slowRequests");
      }),
  };
}

// ---------------------------------------------------------------------------------------
// The floor: a hand-written loop over fetch.
// ---------------------------------------------------------------------------------------
const toolSchema = { type: "object", properties: { n: { type: "number" } }, required: ["n"] };

async function readSseMessage(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  const content = [];
  const partial = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let cut = buffer.indexOf("\n\n");
    while (cut !== -1) {
      const event = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      cut = buffer.indexOf("\n\n");
      const dataLine = event.split("\n").find((line) => line.startsWith("data:"));
      if (dataLine === undefined) continue;
      const data = JSON.parse(dataLine.slice(5));
      if (data.type === "content_block_start") {
        content[data.index] = { ...data.content_block };
        partial[data.index] = "";
      } else if (data.type === "content_block_delta") {
        if (data.delta.type === "text_delta") content[data.index].text += data.delta.text;
        else if (data.delta.type === "input_json_delta")
          partial[data.index] += data.delta.partial_json;
      } else if (data.type === "content_block_stop") {
        const block = content[data.index];
        if (block.type === "tool_use")
          block.input = partial[data.index] === "" ? {} : JSON.parse(partial[data.index]);
      }
    }
  }
  return { content };
}

/**
 * The floor: one run of the hand-written loop. `answer` turns a `tool_use` block into its
 * result string (long-run.bench.mjs passes one that also marks the CPU clock).
 */
export async function floorRun(
  url,
  model,
  toolCount,
  stream,
  signal,
  answer = (use) => String(use.input.n),
) {
  const tools = Array.from({ length: toolCount }, (_, index) => ({
    name: `t${index}`,
    description: "d",
    input_schema: toolSchema,
  }));
  const messages = [{ role: "user", content: "go" }];
  for (;;) {
    const response = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "bench",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model,
        max_tokens: 1024,
        messages,
        tools,
        ...(stream ? { stream: true } : {}),
      }),
      signal,
    });
    const message = stream ? await readSseMessage(response) : await response.json();
    messages.push({ role: "assistant", content: message.content });
    const uses = message.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) return message;
    messages.push({
      role: "user",
      content: uses.map((use) => ({
        type: "tool_result",
        tool_use_id: use.id,
        content: answer(use),
      })),
    });
  }
}

// ---------------------------------------------------------------------------------------
// Lattice.
// ---------------------------------------------------------------------------------------
function latticeTools(count) {
  return Array.from({ length: count }, (_, index) =>
    tool(`t${index}`, "d", z.object({ n: z.number() }), ({ n }) => ({ content: String(n) }), {
      isConcurrencySafe: () => true,
    }),
  );
}

function latticeAgent(url, model, toolCount, stream) {
  return createAgent({
    apiKey: "bench",
    baseURL: url,
    model,
    tools: latticeTools(toolCount),
    stream,
    maxTurns: 50,
  });
}

// ---------------------------------------------------------------------------------------
// (a) CPU per model turn.
// ---------------------------------------------------------------------------------------
async function cpuPerTurn(url, toolCount, stream) {
  const model = `loop-${toolCount}`;
  const agent = latticeAgent(url, model, toolCount, stream);
  const runs = quick ? 10 : 25;
  const rounds = quick ? 4 : 10;
  const floorOnce = () => floorRun(url, model, toolCount, stream);
  const latticeOnce = async () => {
    const result = await agent.run("go");
    if (result.numTurns !== TURNS_PER_RUN)
      throw new Error(`expected ${TURNS_PER_RUN} turns, got ${result.numTurns}`);
  };
  // Warm both paths up until the JIT settles (per-turn cost keeps falling for ~30 runs).
  for (let index = 0; index < (quick ? 15 : 40); index++) {
    await floorOnce();
    await latticeOnce();
  }
  const sample = async (once) => {
    const start = cpuMicros();
    for (let index = 0; index < runs; index++) await once();
    return (cpuMicros() - start) / (runs * TURNS_PER_RUN);
  };
  const ratios = [];
  const floorSamples = [];
  const latticeSamples = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first so drift (JIT, GC, a neighbour's load) hits both alike.
    let floor;
    let lattice;
    if (round % 2 === 0) {
      floor = await sample(floorOnce);
      lattice = await sample(latticeOnce);
    } else {
      lattice = await sample(latticeOnce);
      floor = await sample(floorOnce);
    }
    floorSamples.push(floor);
    latticeSamples.push(lattice);
    ratios.push(lattice / floor);
  }
  return {
    floorMicros: median(floorSamples),
    latticeMicros: median(latticeSamples),
    ratio: median(ratios),
  };
}

// ---------------------------------------------------------------------------------------
// (b) Makespan of safe and mixed batches through the agent, versus the ideal schedule.
// ---------------------------------------------------------------------------------------
async function makespan(url, name, cap) {
  const batch = MAKESPAN_SCENARIOS[name];
  let actual = new Map();
  const wait = (safe) =>
    tool(
      safe ? "wait_safe" : "wait_unsafe",
      "d",
      z.object({ ms: z.number() }),
      async ({ ms }, { toolUseId }) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, ms));
        actual.set(Number(toolUseId.slice("toolu_".length)), performance.now() - start);
        return { content: "ok" };
      },
      safe ? { isConcurrencySafe: () => true } : undefined,
    );
  const measured = [];
  const ratios = [];
  for (let repeat = 0; repeat < (quick ? 4 : 8); repeat++) {
    let first = Number.POSITIVE_INFINITY;
    let last = 0;
    actual = new Map();
    const agent = createAgent({
      apiKey: "bench",
      baseURL: url,
      model: `makespan-${name}`,
      tools: [wait(true), wait(false)],
      toolConcurrency: { mode: "safe", maxConcurrency: cap },
      onTrace(event) {
        if (event.type === "tool_call_started") first = Math.min(first, event.time);
        if (event.type === "tool_call_finished") last = Math.max(last, event.time);
      },
    });
    await agent.run("go");
    if (repeat === 0) continue; // warm-up
    // The ideal schedule of the durations the handlers really had: timer lateness is the
    // platform's, not the scheduler's.
    const real = batch.map((call, index) => ({ safe: call.safe, ms: actual.get(index) }));
    measured.push(last - first);
    ratios.push((last - first) / idealMakespan(real, cap));
  }
  return {
    calls: batch.length,
    cap,
    nominalIdealMs: idealMakespan(batch, cap),
    measuredMs: median(measured),
    efficiency: median(ratios),
  };
}

// ---------------------------------------------------------------------------------------
// (c) Heap per in-flight run: 10,000 runs (1,000 with --quick) waiting on a slow model.
// ---------------------------------------------------------------------------------------
async function heapPerRun(server) {
  const url = server.url;
  const count = quick ? 1000 : 10_000;
  const settle = async () => {
    for (let index = 0; index < 3; index++) {
      globalThis.gc?.();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return process.memoryUsage().heapUsed;
  };
  const measure = async (start) => {
    const before = await settle();
    const received = await server.slowRequests();
    // One signal per run, as a server gives each request its own (undici caps the listeners
    // of a signal shared by many fetches at 1,500, and warns past that).
    const controllers = Array.from({ length: count }, () => new AbortController());
    let settled = 0;
    const pending = controllers.map((controller) =>
      start(controller.signal)
        .catch(() => undefined)
        .finally(() => settled++),
    );
    let during;
    try {
      // Measure once every run's request has reached the server, which holds it unanswered.
      const deadline = Date.now() + 60_000;
      while ((await server.slowRequests()) < received + count) {
        if (Date.now() > deadline)
          throw new Error(`heap bench: not all ${count} runs reached the server`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      during = await settle();
      if (settled > 0) throw new Error(`heap bench: ${settled} runs ended before the measure`);
    } finally {
      for (const controller of controllers) controller.abort();
      await Promise.all(pending);
    }
    return (during - before) / count;
  };
  const agent = createAgent({
    apiKey: "bench",
    baseURL: url,
    model: "slow",
    tools: latticeTools(1),
    maxTurns: 5,
  });
  const floorOnce = () => measure((signal) => floorRun(url, "slow", 1, true, signal));
  const latticeOnce = () => measure((signal) => agent.run("go", { signal }));
  // One warm-up pass each so lazily created module state does not count, then alternate.
  await floorOnce();
  await latticeOnce();
  const floorSamples = [];
  const latticeSamples = [];
  for (let round = 0; round < (quick ? 2 : 4); round++) {
    if (round % 2 === 0) {
      floorSamples.push(await floorOnce());
      latticeSamples.push(await latticeOnce());
    } else {
      latticeSamples.push(await latticeOnce());
      floorSamples.push(await floorOnce());
    }
  }
  const floor = median(floorSamples);
  const lattice = median(latticeSamples);
  return {
    floorBytes: floor,
    latticeBytes: lattice,
    ratio: lattice / floor,
    runs: count,
    gcExposed: typeof globalThis.gc === "function",
  };
}

// ---------------------------------------------------------------------------------------
// (d) Cold import of agent-lattice, versus a bare node.
// ---------------------------------------------------------------------------------------
function coldImport() {
  const time = (args) => {
    const start = performance.now();
    const result = spawnSync(process.execPath, args, { cwd: here, stdio: "ignore" });
    if (result.status !== 0) throw new Error(`node ${args.join(" ")} failed`);
    return performance.now() - start;
  };
  const bare = [];
  const withImport = [];
  for (let index = 0; index < (quick ? 5 : 15); index++) {
    bare.push(time(["-e", "0"]));
    withImport.push(time(["--input-type=module", "-e", 'await import("agent-lattice")']));
  }
  const bareMs = median(bare);
  const importMs = median(withImport);
  return { bareNodeMs: bareMs, importMs, addedMs: importMs - bareMs, modules: countModules() };
}

/** How many modules `import("agent-lattice")` loads (node: built-ins aside), by a load hook. */
function countModules() {
  const hook = `export async function load(url, context, next) {
    if (!url.startsWith("node:")) process.stderr.write("LOADED " + url + "\\n");
    return next(url, context);
  }`;
  const register = `import { register } from "node:module"; register(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hook)}`)});`;
  const result = spawnSync(
    process.execPath,
    [
      "--import",
      `data:text/javascript,${encodeURIComponent(register)}`,
      "--input-type=module",
      "-e",
      'await import("agent-lattice")',
    ],
    { cwd: here, encoding: "utf8" },
  );
  if (result.status !== 0) throw new Error(`counting modules failed: ${result.stderr}`);
  return result.stderr.split("\n").filter((line) => line.startsWith("LOADED ")).length;
}

// ---------------------------------------------------------------------------------------
// (e) Streaming latency: time to the first text delta, query() versus reading the raw stream.
// ---------------------------------------------------------------------------------------
async function firstDelta(url) {
  const agent = createAgent({
    apiKey: "bench",
    baseURL: url,
    model: "text",
    includePartialMessages: true,
  });
  const raw = async () => {
    const start = performance.now();
    const response = await fetch(`${url}/v1/messages`, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "x-api-key": "bench",
        "anthropic-version": "2023-06-01",
      },
      body: JSON.stringify({
        model: "text",
        max_tokens: 64,
        messages: [{ role: "user", content: "hi" }],
        stream: true,
      }),
    });
    const reader = response.body.getReader();
    const decoder = new TextDecoder();
    let text = "";
    let elapsed;
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
      if (elapsed === undefined && text.includes('"text_delta"'))
        elapsed = performance.now() - start;
    }
    return elapsed;
  };
  const viaQuery = async () => {
    const start = performance.now();
    let elapsed;
    for await (const message of agent.query("hi")) {
      if (
        elapsed === undefined &&
        message.type === "stream_event" &&
        message.event.type === "text_delta"
      ) {
        elapsed = performance.now() - start;
      }
    }
    return elapsed;
  };
  for (let index = 0; index < 10; index++) {
    await raw();
    await viaQuery();
  }
  const rawSamples = [];
  const querySamples = [];
  for (let index = 0; index < (quick ? 30 : 100); index++) {
    rawSamples.push(await raw());
    querySamples.push(await viaQuery());
  }
  const rawMs = median(rawSamples);
  const queryMs = median(querySamples);
  return { rawMs, queryMs, addedMs: queryMs - rawMs };
}

export async function runAgentBenchmarks(only) {
  const server = await startModelServer();
  try {
    if (only === "heap") return { heapPerRun: await heapPerRun(server) };
    if (only === "cold") return { coldImport: coldImport() };
    if (only === "cpu") {
      return {
        cpuPerTurn: {
          streaming1Tool: await cpuPerTurn(server.url, 1, true),
          nonStreaming1Tool: await cpuPerTurn(server.url, 1, false),
        },
      };
    }
    const results = {
      cpuPerTurn: {
        nonStreaming1Tool: await cpuPerTurn(server.url, 1, false),
        nonStreaming10Tools: await cpuPerTurn(server.url, 10, false),
        streaming1Tool: await cpuPerTurn(server.url, 1, true),
        streaming10Tools: await cpuPerTurn(server.url, 10, true),
      },
      makespan: {
        safe50x20Cap10: await makespan(server.url, "safe-50x20", 10),
        mixedCap10: await makespan(server.url, "mixed", 10),
      },
      heapPerRun: await heapPerRun(server),
      coldImport: coldImport(),
      firstDelta: await firstDelta(server.url),
    };
    return results;
  } finally {
    server.close();
  }
}
