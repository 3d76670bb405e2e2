// A run in a web page (issue 25, spec/performance.md): CPU per streamed run through
// `toUIMessageStreamResponse` (the UI message stream, SSE-encoded, read to its end as bytes,
// with the trace relay's data parts), beside the same run read from `query()` alone. Each run
// is two streamed turns: a reply with two parallel tool calls, then a 600-character answer in
// 30 deltas. The model is the scripted server (web-server.mjs) in a child process. Runs of the
// two variants alternate one by one, so drift hits both alike; figures are medians.
//
//   node --expose-gc bench/web.bench.mjs [--quick]
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { toUIMessageStreamResponse, traceRelay } from "@lattice/web";
import { createAgent, tool } from "agent-lattice";
import { z } from "zod/v4";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const child = fork(join(here, "web-server.mjs"), [], {
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

const weather = tool(
  "weather",
  "Today's weather in a city",
  z.object({ city: z.string() }),
  async ({ city }) => ({ content: `${city}: sunny, 21°C` }),
  { isConcurrencySafe: () => true },
);
const relay = traceRelay();
const options = {
  apiKey: "bench",
  baseURL,
  model: "scripted",
  tools: [weather],
  includePartialMessages: true,
};
const prompt = "Weather in Paris and Tokyo?";
// Two pairs, each the same agent read two ways: without trace (the stream has no data parts),
// and with a trace consumer (a no-op beside the relay that makes the data-lattice-* parts).
const plain = createAgent(options);
const traced = createAgent({ ...options, onTrace: () => {} });
const relayed = createAgent({ ...options, onTrace: relay.onTrace });

async function queryAlone(agent) {
  for await (const message of agent.query(prompt)) {
    if (message.type === "result" && message.subtype !== "success")
      throw new Error(message.errors.join());
  }
}
async function throughResponse(agent, trace) {
  const response = toUIMessageStreamResponse(agent.query(prompt), trace ? { trace } : {});
  const bytes = await response.arrayBuffer();
  if (bytes.byteLength < 1_000) throw new Error("the UI stream is too short");
  return bytes.byteLength;
}
const variants = [
  () => queryAlone(plain),
  () => throughResponse(plain),
  () => queryAlone(traced),
  () => throughResponse(relayed, relay),
];

const runs = quick ? 150 : 600;
const repetitions = quick ? 3 : 5;
for (let index = 0; index < 100; index++) for (const variant of variants) await variant();
const perTurn = variants.map(() => []);
let streamBytes = 0;
for (let repetition = 0; repetition < repetitions; repetition++) {
  const micros = variants.map(() => 0);
  for (let index = 0; index < runs; index++) {
    for (let v = 0; v < variants.length; v++) {
      const start = cpu();
      const bytes = await variants[v]();
      micros[v] += cpu() - start;
      if (typeof bytes === "number") streamBytes = bytes;
    }
  }
  micros.forEach((total, v) => {
    perTurn[v].push(total / runs / 2);
  });
}
child.disconnect();
const [alonePlain, streamPlain, aloneTraced, streamRelayed] = perTurn.map(median);
console.log(
  "| measure | query() alone | through the UI stream | ratio | goal | met |\n|---|---|---|---|---|---|",
);
for (const [label, alone, web] of [
  ["without trace", alonePlain, streamPlain],
  [
    "with the trace relay (data-lattice-* parts) beside a no-op onTrace",
    aloneTraced,
    streamRelayed,
  ],
]) {
  const ratio = web / alone;
  console.log(
    `| CPU per streamed turn, ${label} (2 parallel calls, then 600 characters in 30 deltas; ${streamBytes.toLocaleString("en-US")} bytes of SSE per run) | ${alone.toFixed(1)} µs | ${web.toFixed(1)} µs | ${ratio.toFixed(3)} | ≤ 1.05 | ${ratio <= 1.05 ? "yes" : "NO"} |`,
  );
}
