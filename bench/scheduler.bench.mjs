// Benchmark of @lattice/scheduler (not a test): scheduling overhead per call and makespan
// efficiency. Run from the repository root after building the two packages:
//
//   pnpm --filter @lattice/tools --filter @lattice/scheduler build
//   node bench/scheduler.bench.mjs            # add --quick for a shorter run
//
// Every figure is set beside a floor measured in the same process (see
// docs/performance.md): for overhead, a hand-written loop that validates and runs
// each call with @lattice/tools' own `runTool` and nothing else; for makespan, the ideal
// schedule of the plan computed from the durations the handlers really had (so timer
// lateness, which no scheduler can remove, does not count against it), and the nominal ideal.
import { performance } from "node:perf_hooks";
import { z } from "zod/v4";
import { runToolBatch } from "../packages/scheduler/dist/index.js";
import { runTool, tool } from "../packages/tools/dist/index.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 5 : 15;
const MAKESPAN_REPEATS = quick ? 3 : 7;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

// ---------------------------------------------------------------------------------------
// 1. Overhead: 10,000 instant calls.
// ---------------------------------------------------------------------------------------
const schema = z.object({ n: z.number() });
const instantSafe = tool("instant", "Returns at once", schema, ({ n }) => ({ content: `${n}` }), {
  isConcurrencySafe: () => true,
});
const instantUnsafe = tool("instant_unsafe", "Returns at once", schema, ({ n }) => ({
  content: `${n}`,
}));
const tools = new Map([
  [instantSafe.name, instantSafe],
  [instantUnsafe.name, instantUnsafe],
]);
const never = new AbortController().signal;
const TOTAL = 10_000;

function makeBatches(batchSize, name) {
  const batches = [];
  for (let start = 0; start < TOTAL; start += batchSize) {
    const calls = [];
    for (let n = start; n < Math.min(TOTAL, start + batchSize); n++) {
      calls.push({ id: `toolu_${n}`, name, input: { n } });
    }
    batches.push(calls);
  }
  return batches;
}

async function floor(batches) {
  const definition = tools.get(batches[0][0].name);
  const started = performance.now();
  for (const calls of batches) {
    const results = new Array(calls.length);
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index];
      results[index] = await runTool(definition, call.input, {
        signal: never,
        toolUseId: call.id,
        toolName: call.name,
      });
    }
  }
  return performance.now() - started;
}

async function lattice(batches, options) {
  const started = performance.now();
  for (const calls of batches) await runToolBatch({ calls, tools, ...options });
  return performance.now() - started;
}

const overheadCases = [
  { label: "100 batches x 100, safe (pool of 10)", size: 100, name: "instant", options: {} },
  {
    label: "100 batches x 100, unsafe (one at a time)",
    size: 100,
    name: "instant_unsafe",
    options: {},
  },
  {
    label: "100 batches x 100, safe, with events",
    size: 100,
    name: "instant",
    options: { onEvent: () => {} },
  },
  {
    label: "100 batches x 100, safe, with allowing policy",
    size: 100,
    name: "instant",
    options: { policy: { validate: () => ({ allowed: true }) } },
  },
  { label: "1 batch x 10,000, safe", size: 10_000, name: "instant", options: {} },
  { label: "1,000 batches x 10, safe", size: 10, name: "instant", options: {} },
];

console.log(
  `\n@lattice/scheduler benchmark (node ${process.version}, ${ROUNDS} rounds, medians)\n`,
);
console.log("Scheduling overhead on 10,000 instant calls (goal: < 2 µs per call over the floor)");
console.log(
  "| case | floor µs/call | lattice µs/call | overhead µs/call | lattice / floor |\n|---|---|---|---|---|",
);
const overheadFigures = [];
for (const item of overheadCases) {
  const batches = makeBatches(item.size, item.name);
  // Warm up both paths.
  for (let round = 0; round < 3; round++) {
    await floor(batches);
    await lattice(batches, item.options);
  }
  const floors = [];
  const lattices = [];
  for (let round = 0; round < ROUNDS; round++) {
    floors.push(await floor(batches));
    lattices.push(await lattice(batches, item.options));
  }
  const floorPerCall = (median(floors) * 1000) / TOTAL;
  const latticePerCall = (median(lattices) * 1000) / TOTAL;
  const overhead = latticePerCall - floorPerCall;
  overheadFigures.push(overhead);
  console.log(
    `| ${item.label} | ${floorPerCall.toFixed(2)} | ${latticePerCall.toFixed(2)} | ${overhead.toFixed(2)} | ${(latticePerCall / floorPerCall).toFixed(2)} |`,
  );
}

// ---------------------------------------------------------------------------------------
// 2. Makespan: real timers, measured against the ideal schedule of the same plan.
// ---------------------------------------------------------------------------------------
const sleepSchema = z.object({ ms: z.number(), key: z.number() });
let durations = new Map();
const sleeper = (name, safe) =>
  tool(
    name,
    "Sleeps",
    sleepSchema,
    async ({ ms, key }) => {
      const started = performance.now();
      await new Promise((resolve) => setTimeout(resolve, ms));
      durations.set(key, performance.now() - started);
      return { content: "ok" };
    },
    safe ? { isConcurrencySafe: () => true } : undefined,
  );
const sleepTools = new Map([
  ["sleep_safe", sleeper("sleep_safe", true)],
  ["sleep_unsafe", sleeper("sleep_unsafe", false)],
]);

/** The makespan of `plan` with zero scheduling cost: each run's calls greedily on `limit` slots. */
function idealMakespan(plan, duration) {
  let clock = 0;
  for (const run of plan.runs) {
    const limit = run.concurrent ? Math.min(plan.maxConcurrency, run.indices.length) : 1;
    const slots = new Array(limit).fill(clock);
    for (const index of run.indices) {
      let earliest = 0;
      for (let slot = 1; slot < limit; slot++) if (slots[slot] < slots[earliest]) earliest = slot;
      slots[earliest] += duration(index);
    }
    clock = Math.max(...slots);
  }
  return clock;
}

let seed = 42;
const random = () => {
  seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
  return seed / 2 ** 31;
};

const makespanCases = [
  {
    label: "50 x 20 ms safe, cap 10",
    calls: Array.from({ length: 50 }, () => ["sleep_safe", 20]),
  },
  {
    label: "mixed: 10 safe, 1 unsafe, 10 safe, 1 unsafe, 20 safe (20 ms), cap 10",
    calls: [
      ...Array.from({ length: 10 }, () => ["sleep_safe", 20]),
      ["sleep_unsafe", 20],
      ...Array.from({ length: 10 }, () => ["sleep_safe", 20]),
      ["sleep_unsafe", 20],
      ...Array.from({ length: 20 }, () => ["sleep_safe", 20]),
    ],
  },
  {
    label: "mixed random: 60 calls, 15% unsafe, 5-40 ms, cap 10",
    calls: Array.from({ length: 60 }, () => [
      random() < 0.15 ? "sleep_unsafe" : "sleep_safe",
      5 + Math.round(random() * 35),
    ]),
  },
];

console.log("\nMakespan efficiency (goal: measured / ideal within 1 %)");
console.log(
  "| batch | nominal ideal ms | ideal of real durations ms | measured ms | measured / ideal |\n|---|---|---|---|---|",
);
const efficiencyFigures = [];
for (const item of makespanCases) {
  const calls = item.calls.map(([name, ms], index) => ({
    id: `toolu_${index}`,
    name,
    input: { ms, key: index },
  }));
  const ratios = [];
  const measured = [];
  const ideals = [];
  let nominal = 0;
  for (let repeat = 0; repeat < MAKESPAN_REPEATS + 1; repeat++) {
    durations = new Map();
    const started = performance.now();
    const batch = await runToolBatch({
      calls,
      tools: sleepTools,
      concurrency: { mode: "safe", maxConcurrency: 10 },
    });
    const elapsed = performance.now() - started;
    if (repeat === 0) continue; // warm-up
    const ideal = idealMakespan(batch.plan, (index) => durations.get(index));
    nominal = idealMakespan(batch.plan, (index) => item.calls[index][1]);
    ratios.push(elapsed / ideal);
    measured.push(elapsed);
    ideals.push(ideal);
  }
  const ratio = median(ratios);
  efficiencyFigures.push(ratio);
  console.log(
    `| ${item.label} | ${nominal.toFixed(1)} | ${median(ideals).toFixed(1)} | ${median(measured).toFixed(1)} | ${ratio.toFixed(4)} |`,
  );
}

console.log(
  `\nSummary: worst overhead ${Math.max(...overheadFigures).toFixed(2)} µs per call (goal < 2); worst makespan ratio ${Math.max(...efficiencyFigures).toFixed(4)} (goal <= 1.01).`,
);
