// `node --expose-gc bench/compare-builds.mjs <other checkout>`: CPU per turn of the plain
// stateless run (no session, no approvals), and of the same run logged in a session of the
// memory store (a fresh session per run, deleted after it), this checkout's build against another checkout's
// (for example the previous release: `git worktree add /tmp/prev <commit>`, then install and
// build there). Runs of the two builds alternate one by one in one process, so drift (JIT,
// GC, a neighbour's load) hits both alike; the figure is this build's CPU ÷ the other's,
// median of 5 repetitions of 300 interleaved runs. The runs contract's R23 asks for ≤ 1.03.
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startModelServer } from "./agent.bench.mjs";

const other = process.argv[2];
if (other === undefined) {
  console.error(
    "usage: node --expose-gc bench/compare-builds.mjs <path of another built checkout>",
  );
  process.exit(2);
}
const here = resolve(import.meta.dirname, "..");
const load = async (root) => ({
  lattice: await import(pathToFileURL(resolve(root, "packages/agent-lattice/dist/index.js")).href),
  z: (
    await import(
      pathToFileURL(resolve(root, "packages/agent-lattice/node_modules/zod/v4/index.js")).href
    )
  ).z,
});
const builds = { old: await load(other), new: await load(here) };
const TURNS = 21;
const cpu = () => {
  const u = process.cpuUsage();
  return u.user + u.system;
};
const median = (v) => {
  const s = [...v].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const server = await startModelServer();
const rows = [];
for (const [toolCount, stream, session] of [
  [1, false, false],
  [10, false, false],
  [1, true, false],
  [10, true, false],
  [1, false, true],
]) {
  const agents = {};
  for (const key of ["old", "new"]) {
    const { createAgent, memorySessionStore, tool } = builds[key].lattice;
    const { z } = builds[key];
    agents[key] = createAgent({
      apiKey: "bench",
      baseURL: server.url,
      model: `loop-${toolCount}`,
      stream,
      maxTurns: 50,
      ...(session ? { sessionStore: memorySessionStore() } : {}),
      tools: Array.from({ length: toolCount }, (_, i) =>
        tool(`t${i}`, "d", z.object({ n: z.number() }), ({ n }) => ({ content: String(n) }), {
          isConcurrencySafe: () => true,
        }),
      ),
    });
  }
  let runs = 0;
  const once = async (key) => {
    const agent = agents[key];
    const sessionId = session ? `bench-${runs++}` : undefined;
    const r = await agent.run("go", sessionId === undefined ? {} : { sessionId });
    if (r.numTurns !== TURNS) throw new Error(`turns ${r.numTurns}`);
    if (sessionId !== undefined) await agent.sessionStore.delete(sessionId);
  };
  for (let i = 0; i < 40; i++) {
    await once("old");
    await once("new");
  }
  const ratios = [];
  for (let rep = 0; rep < 5; rep++) {
    const total = { old: 0, new: 0 };
    for (let i = 0; i < 300; i++) {
      for (const key of i % 2 ? ["new", "old"] : ["old", "new"]) {
        const s = cpu();
        await once(key);
        total[key] += cpu() - s;
      }
    }
    ratios.push(total.new / total.old);
  }
  rows.push(
    `| ${toolCount} tool(s), ${stream ? "streaming" : "non-streaming"}${session ? ", memory-store session" : ""} | ${median(ratios).toFixed(3)} | ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)} |`,
  );
}
server.close();
console.log(`This checkout ÷ ${other}, CPU per turn (${21} turns per run)\n`);
console.log(
  "| case | this ÷ other (median of 5 × 300 interleaved runs) | range |\n|---|---|---|\n" +
    rows.join("\n"),
);
