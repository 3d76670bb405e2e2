// O6: the CPU cost per model turn of an agent whose spans go to an in-memory exporter, against
// the same agent without tracing (no onTrace at all), and with the observer but no tracer
// provider registered (O1), and with an empty onTrace listener (what core's trace events cost
// by themselves, whoever listens). The model server runs in a child process, so process CPU here is
// the client's alone. Needs the packages built: `pnpm -r build` (or tsup in core, providers,
// tools, scheduler and otel). Run: node packages/otel/bench/otel.bench.mjs [--quick]
//
// The spans go through a BatchSpanProcessor to the InMemorySpanExporter: the contract fixes the
// exporter (in memory), the processor is ours to pick, and a batching processor is what a
// production setup uses (the SDK's and the OTLP exporters' own advice; NodeSDK's default). A
// SimpleSpanProcessor exports every span on its own as it ends (a promise chain, a
// suppressed-tracing context and an export call per span), a cost of that processor rather than
// of the observer; `--simple` measures with it instead.
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAgent } from "@lattice/core";
import { tool } from "@lattice/tools";
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { z } from "zod";
import { otelObserver } from "../dist/index.js";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const simple = process.argv.includes("--simple");
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

const child = fork(join(here, "model-server.mjs"), [], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const url = await new Promise((resolve, reject) => {
  child.once("message", (message) => resolve(message.url));
  child.once("exit", (code) => reject(new Error(`model server exited with ${code}`)));
});

const exporter = new InMemorySpanExporter();
// The defaults: batches of up to 512 spans, exported every 5 s or when a batch is full; a
// queue of 2048 (the bench's flush at each round's end keeps it from dropping any).
const processor = simple ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter);
const provider = new BasicTracerProvider({ spanProcessors: [processor] });

function makeAgent(toolCount, onTrace) {
  const tools = Array.from({ length: toolCount }, (_, index) =>
    tool(`t${index}`, "d", z.object({ n: z.number() }), ({ n }) => ({ content: String(n) }), {
      isConcurrencySafe: () => true,
    }),
  );
  return createAgent({
    apiKey: "bench",
    baseURL: url,
    model: `loop-${toolCount}`,
    tools,
    maxTurns: 50,
    ...(onTrace !== undefined ? { onTrace } : {}),
  });
}

async function measure(toolCount) {
  const variants = {
    untraced: makeAgent(toolCount),
    emptyListener: makeAgent(toolCount, () => {}),
    noProvider: makeAgent(toolCount, otelObserver({ agentName: "bench" }).onTrace),
    inMemory: makeAgent(
      toolCount,
      otelObserver({ agentName: "bench", tracer: provider.getTracer("bench") }).onTrace,
    ),
  };
  const names = Object.keys(variants);
  const runs = quick ? 8 : 20;
  const rounds = quick ? 4 : 10;
  const once = async (name) => {
    const result = await variants[name].run("go");
    if (result.numTurns !== TURNS_PER_RUN) throw new Error(`expected ${TURNS_PER_RUN} turns`);
  };
  for (let index = 0; index < (quick ? 15 : 40); index++)
    for (const name of names) await once(name);
  await processor.forceFlush();
  exporter.reset();
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const ratios = { emptyListener: [], noProvider: [], inMemory: [], inMemoryVsListener: [] };
  for (let round = 0; round < rounds; round++) {
    // Rotate the order so that drift (JIT, GC, a neighbour's load) hits every variant alike.
    const order = names.map((_, index) => names[(index + round) % names.length]);
    const perTurn = {};
    for (const name of order) {
      const start = cpuMicros();
      for (let index = 0; index < runs; index++) await once(name);
      // The spans still queued are exported within the measured time: they are this
      // variant's work.
      await processor.forceFlush();
      perTurn[name] = (cpuMicros() - start) / (runs * TURNS_PER_RUN);
      samples[name].push(perTurn[name]);
      exporter.reset();
    }
    ratios.emptyListener.push(perTurn.emptyListener / perTurn.untraced);
    ratios.noProvider.push(perTurn.noProvider / perTurn.untraced);
    ratios.inMemoryVsListener.push(perTurn.inMemory / perTurn.emptyListener);
    ratios.inMemory.push(perTurn.inMemory / perTurn.untraced);
  }
  return {
    toolCallsPerTurn: toolCount,
    untracedMicrosPerTurn: Math.round(median(samples.untraced)),
    emptyListenerMicrosPerTurn: Math.round(median(samples.emptyListener)),
    noProviderMicrosPerTurn: Math.round(median(samples.noProvider)),
    inMemoryMicrosPerTurn: Math.round(median(samples.inMemory)),
    emptyListenerRatio: Number(median(ratios.emptyListener).toFixed(3)),
    noProviderRatio: Number(median(ratios.noProvider).toFixed(3)),
    inMemoryRatio: Number(median(ratios.inMemory).toFixed(3)),
    inMemoryVsListenerRatio: Number(median(ratios.inMemoryVsListener).toFixed(3)),
  };
}

try {
  const results = [];
  for (const toolCount of [1, 4]) results.push(await measure(toolCount));
  console.table(results);
  console.log(
    JSON.stringify(
      { bench: "otel", quick, processor: simple ? "simple" : "batch", results },
      null,
      2,
    ),
  );
} finally {
  child.disconnect();
  await provider.shutdown();
}
