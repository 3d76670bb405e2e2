import { mcpServer } from "../client/mcp-server.js";
import { call } from "../client/test-helpers.js";
import { faultServerCommand } from "./commands.js";
import { MANY_TOOLS_COUNT } from "./fault-server.js";

/**
 * H20, in a process of its own (`node --expose-gc --import tsx relist-client.ts [rounds]`):
 * the fault server lists {@link MANY_TOOLS_COUNT} tools, and each round asks it to change its
 * list (`relist` sends `notifications/tools/list_changed`), lists the tools again and calls
 * three of them (so their validators are compiled). Prints one JSON line: the heap after a
 * full GC before and after the rounds, in MB, and how long the rounds took.
 */
const rounds = Number(process.argv[2] ?? 150);
const gc = (globalThis as { gc?: () => void }).gc;
if (gc === undefined) throw new Error("run with --expose-gc");

const source = mcpServer({ name: "many", ...faultServerCommand("many"), onWarning: () => {} });

async function round(index: number): Promise<void> {
  const before = await source.tools();
  await call(before, "many__relist", {});
  const after = await source.tools();
  if (after === before || after.length !== MANY_TOOLS_COUNT + 1) {
    throw new Error(`round ${index}: the list was not listed again`);
  }
  for (const tool of [0, index % MANY_TOOLS_COUNT, MANY_TOOLS_COUNT - 1]) {
    const result = await call(after, `many__t${tool}`, { q: "no match" });
    if (!result.isError) throw new Error(`round ${index}: t${tool} accepted an invalid input`);
  }
}

function heapMb(): number {
  for (let pass = 0; pass < 3; pass++) gc?.();
  return process.memoryUsage().heapUsed / (1024 * 1024);
}

// Warm up: the first listings load code and fill the SDK's and Ajv's own caches.
for (let index = 0; index < 10; index++) await round(index);
const startMb = heapMb();
const started = performance.now();
for (let index = 0; index < rounds; index++) await round(index);
const seconds = (performance.now() - started) / 1000;
const endMb = heapMb();
process.stdout.write(
  `${JSON.stringify({ rounds, startMb: Math.round(startMb * 10) / 10, endMb: Math.round(endMb * 10) / 10, growthMb: Math.round((endMb - startMb) * 10) / 10, seconds: Math.round(seconds * 10) / 10 })}\n`,
);
await source.close();
process.exit(0);
