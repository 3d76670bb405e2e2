// Steering a run (L14, spec/performance.md "Rows added for the third release"):
//   typed output  a run with `outputSchema` whose first answer validates, beside the same run
//                 without: model calls per run (must stay 1) and CPU per run (≤ 1.05);
//   guardrails    a passing input guardrail of 200 ms next to a model call of 300 ms, beside
//                 the call alone: wall per run (≤ 1.05).
// The model is the scripted server (steering-server.mjs) in a child process. Runs of the two
// variants alternate one by one, so drift hits both alike; figures are medians.
//
//   node --expose-gc bench/steering.bench.mjs [--quick]
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createAgent } from "agent-lattice";
import { z } from "zod/v4";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const child = fork(join(here, "steering-server.mjs"), [], {
  stdio: ["ignore", "inherit", "inherit", "ipc"],
});
const baseURL = await new Promise((resolve) => child.once("message", (m) => resolve(m.url)));

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpu = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

// ---- typed output ------------------------------------------------------------------------
const Invoice = z.object({
  vendor: z.string(),
  total: z.number(),
  currency: z.enum(["EUR", "USD"]),
});
let calls = 0;
const counting = (event) => {
  if (event.type === "model_request_started") calls++;
};
const common = { apiKey: "bench", baseURL, model: "fast", stream: false, onTrace: counting };
const plain = createAgent(common);
const typed = createAgent({ ...common, outputSchema: Invoice });

const runs = quick ? 200 : 1_000;
const repetitions = quick ? 3 : 5;
for (let index = 0; index < 100; index++) {
  await plain.run("Invoice: ACME, 12.50 EUR");
  await typed.run("Invoice: ACME, 12.50 EUR");
}
const cpuPlain = [];
const cpuTyped = [];
let typedCalls = 0;
let typedRuns = 0;
for (let repetition = 0; repetition < repetitions; repetition++) {
  let plainMicros = 0;
  let typedMicros = 0;
  for (let index = 0; index < runs; index++) {
    let start = cpu();
    await plain.run("Invoice: ACME, 12.50 EUR");
    plainMicros += cpu() - start;
    calls = 0;
    start = cpu();
    const result = await typed.run("Invoice: ACME, 12.50 EUR");
    typedMicros += cpu() - start;
    if (result.subtype !== "success" || result.output.total !== 12.5) {
      throw new Error(`the typed run did not validate: ${JSON.stringify(result.errors)}`);
    }
    typedCalls += calls;
    typedRuns++;
  }
  cpuPlain.push(plainMicros / runs);
  cpuTyped.push(typedMicros / runs);
}
const plainMicros = median(cpuPlain);
const typedMicros = median(cpuTyped);
const typedRatio = typedMicros / plainMicros;
const callsPerRun = typedCalls / typedRuns;

// ---- input guardrail ---------------------------------------------------------------------
const slow = { apiKey: "bench", baseURL, model: "slow", stream: false };
const unguarded = createAgent(slow);
const guarded = createAgent({
  ...slow,
  guardrails: {
    input: [
      async function twoHundredMs() {
        await new Promise((resolve) => setTimeout(resolve, 200));
        return { tripwire: false };
      },
    ],
  },
});
const wallRuns = quick ? 5 : 15;
await unguarded.run("hello");
await guarded.run("hello");
const wallPlain = [];
const wallGuarded = [];
for (let index = 0; index < wallRuns; index++) {
  let start = performance.now();
  await unguarded.run("hello");
  wallPlain.push(performance.now() - start);
  start = performance.now();
  const result = await guarded.run("hello");
  wallGuarded.push(performance.now() - start);
  if (result.subtype !== "success") throw new Error(`the guarded run ended ${result.subtype}`);
}
const plainWall = median(wallPlain);
const guardedWall = median(wallGuarded);
const wallRatio = guardedWall / plainWall;
child.disconnect();

console.log("| measure | without | with | ratio | goal | met |\n|---|---|---|---|---|---|");
console.log(
  `| typed output, first answer valid: model calls per run | 1 | ${callsPerRun.toFixed(2)} | — | 1 | ${callsPerRun === 1 ? "yes" : "NO"} |`,
);
console.log(
  `| typed output, first answer valid: CPU per run (non-streaming) | ${plainMicros.toFixed(1)} µs | ${typedMicros.toFixed(1)} µs | ${typedRatio.toFixed(3)} | ≤ 1.05 | ${typedRatio <= 1.05 ? "yes" : "NO"} |`,
);
console.log(
  `| input guardrail of 200 ms beside a 300 ms model call: wall per run | ${plainWall.toFixed(1)} ms | ${guardedWall.toFixed(1)} ms | ${wallRatio.toFixed(3)} | ≤ 1.05 | ${wallRatio <= 1.05 ? "yes" : "NO"} |`,
);
