// Benchmark of @lattice/mcp's client (not a test): the CPU one MCP tool call costs this
// process through Lattice, beside the same call made with the MCP SDK's `Client` directly
// (contract clause M16: under 1 ms added). Run from the repository root after building the
// packages (`pnpm bench` builds first):
//
//   node bench/mcp.bench.mjs            # add --quick for fewer rounds, --json for JSON
//
// The server is `@modelcontextprotocol/server-everything` over stdio, one child process per
// connection, so process.cpuUsage() counts the client's CPU alone. Its `echo` tool is called
// N times in sequence per round:
//   floor:   `client.callTool({ name: "echo", arguments: { message } })` on an SDK Client;
//   Lattice: the `everything__echo` definition of an `mcpServer()` source through `runTool`
//            (input validated by Ajv against the server's schema, the call, the result mapped).
// The two run in alternating rounds (which goes first alternates too) after a warm-up.
import { createRequire } from "node:module";
import { performance } from "node:perf_hooks";
import { mcpServer } from "@lattice/mcp";
import { runTool, toolResultText } from "@lattice/tools";
import { Client } from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";

const require = createRequire(import.meta.url);
const quick = process.argv.includes("--quick");
const asJson = process.argv.includes("--json");
const ROUNDS = quick ? 6 : 20;
const CALLS = quick ? 200 : 500;
const WARM_UP = quick ? 200 : 500;
const GOAL_MICROS = 1000;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const { user, system } = process.cpuUsage();
  return user + system;
};

const server = {
  command: process.execPath,
  args: [require.resolve("@modelcontextprotocol/server-everything/dist/index.js"), "stdio"],
};

// Floor: the SDK's client, set up as @lattice/mcp sets up its own (same client options).
const floorClient = new Client({ name: "bench-floor", version: "0.0.0" }, { capabilities: {} });
await floorClient.connect(
  new StdioClientTransport({ ...server, stderr: "ignore" }),
  // The server-everything handshake takes a few seconds on a cold npm cache.
  { timeout: 30_000 },
);
await floorClient.listTools(); // as the source does once per connection
const floorCall = async (message) => {
  const result = await floorClient.callTool({ name: "echo", arguments: { message } });
  if (result.isError || result.content[0]?.text !== `Echo: ${message}`) {
    throw new Error(`floor call failed: ${JSON.stringify(result)}`);
  }
};

// Lattice: an mcpServer() source on its own connection (its own server process).
const source = mcpServer({ name: "everything", ...server, include: ["echo"] });
const [echo] = await source.tools();
if (echo?.name !== "everything__echo") throw new Error(`no everything__echo tool: ${echo?.name}`);
const signal = new AbortController().signal;
const context = { signal, toolUseId: "toolu_bench", toolName: echo.name };
// The Lattice path validates every input (M5): a wrong one never reaches the server.
if (!(await runTool(echo, { message: 1 }, context)).isError) {
  throw new Error("an invalid input was not refused: the bench would not measure validation");
}
const latticeCall = async (message) => {
  const result = await runTool(echo, { message }, context);
  if (result.isError || toolResultText(result) !== `Echo: ${message}`) {
    throw new Error(`Lattice call failed: ${JSON.stringify(result)}`);
  }
};

/** N sequential calls; CPU and wall time per call, in µs. */
async function round(call, calls) {
  const cpu = cpuMicros();
  const wall = performance.now();
  for (let index = 0; index < calls; index++) await call(`hello ${index}`);
  return {
    cpu: (cpuMicros() - cpu) / calls,
    wall: ((performance.now() - wall) * 1000) / calls,
  };
}

const started = performance.now();
try {
  await round(floorCall, WARM_UP);
  await round(latticeCall, WARM_UP);
  const floor = [];
  const lattice = [];
  for (let index = 0; index < ROUNDS; index++) {
    if (index % 2 === 0) {
      floor.push(await round(floorCall, CALLS));
      lattice.push(await round(latticeCall, CALLS));
    } else {
      lattice.push(await round(latticeCall, CALLS));
      floor.push(await round(floorCall, CALLS));
    }
  }
  const figures = {
    rounds: ROUNDS,
    callsPerRound: CALLS,
    floorCpuMicros: median(floor.map((r) => r.cpu)),
    latticeCpuMicros: median(lattice.map((r) => r.cpu)),
    floorWallMicros: median(floor.map((r) => r.wall)),
    latticeWallMicros: median(lattice.map((r) => r.wall)),
    // The median of the per-round differences, a check on the difference of the medians.
    pairedAddedCpuMicros: median(floor.map((r, index) => lattice[index].cpu - r.cpu)),
  };
  figures.addedCpuMicros = figures.latticeCpuMicros - figures.floorCpuMicros;
  figures.ratio = figures.latticeCpuMicros / figures.floorCpuMicros;
  figures.met = figures.addedCpuMicros < GOAL_MICROS;
  figures.seconds = (performance.now() - started) / 1000;

  if (asJson) {
    console.log(JSON.stringify({ node: process.version, quick, ...figures }));
  } else {
    const us = (value) => `${value.toFixed(1)} µs`;
    console.log(
      `MCP tool call, server-everything \`echo\` over stdio in a child process: client CPU per call, median of ${ROUNDS} alternating rounds × ${CALLS} sequential calls (after ${WARM_UP} warm-up calls each)\n`,
    );
    console.log(
      "| measure | floor (SDK Client.callTool) | Lattice (runTool on mcpServer tool) | added | Lattice ÷ floor | goal | met |\n|---|---|---|---|---|---|---|",
    );
    console.log(
      `| client CPU per call | ${us(figures.floorCpuMicros)} | ${us(figures.latticeCpuMicros)} | ${figures.addedCpuMicros >= 0 ? "+" : ""}${us(figures.addedCpuMicros)} (paired: ${figures.pairedAddedCpuMicros >= 0 ? "+" : ""}${us(figures.pairedAddedCpuMicros)}) | ${figures.ratio.toFixed(2)} | < +1000 µs (M16) | ${figures.met ? "yes" : "NO"} |`,
    );
    console.log(
      `| wall time per call (round trip) | ${us(figures.floorWallMicros)} | ${us(figures.latticeWallMicros)} | ${figures.latticeWallMicros - figures.floorWallMicros >= 0 ? "+" : ""}${us(figures.latticeWallMicros - figures.floorWallMicros)} | ${(figures.latticeWallMicros / figures.floorWallMicros).toFixed(2)} | — | — |`,
    );
  }
} finally {
  await Promise.allSettled([floorClient.close(), source.close()]);
}
