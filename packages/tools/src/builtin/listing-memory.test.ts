/**
 * H8: LS, Glob and Grep stream and stop at their caps, so memory stays proportional to the
 * caps, not to the tree. One directory of 100,000 files is the tree.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globTool, grepTool } from "./index.js";
import { call, text } from "./test-fixture.js";

const FILES = 100_000;

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/**
 * The most live heap (after a full GC) that `run` held above what was live before it, in MB,
 * sampled every 50 ms: garbage does not count, what the call keeps does.
 */
async function liveHeapGrowth(run: () => Promise<unknown>): Promise<number> {
  gc();
  const base = process.memoryUsage().heapUsed;
  let peak = base;
  const sample = (): void => {
    gc();
    peak = Math.max(peak, process.memoryUsage().heapUsed);
  };
  const sampler = setInterval(sample, 50);
  try {
    await run();
  } finally {
    clearInterval(sampler);
  }
  return (peak - base) / 1e6;
}

let root: string;
let flat: string;
beforeAll(async () => {
  root = await mkdtemp(path.join(os.tmpdir(), "lattice-h8-"));
  flat = path.join(root, "flat");
  mkdirSync(flat);
  for (let index = 0; index < FILES; index++) {
    writeFileSync(path.join(flat, `f${String(index).padStart(6, "0")}.ts`), "x\n");
  }
}, 60_000);
afterAll(() => rm(root, { recursive: true, force: true }));

describe("H8: listings stream and stop at their caps", () => {
  it("H8: Glob over 100,000 files holds memory for its 100 results, not for the tree", async () => {
    let output = "";
    const growth = await liveHeapGrowth(async () => {
      output = text(await call(globTool({ cwd: flat }), { pattern: "**/*.ts" }));
    });
    expect(output).toContain(`most recently modified of ${FILES} matching files`);
    // Collecting the 100,000 paths first held about 180 MB here.
    expect(growth).toBeLessThan(20);
  }, 30_000);

  it("H8: Grep over 100,000 files stops at maxResults and holds little memory", async () => {
    let output = "";
    const growth = await liveHeapGrowth(async () => {
      output = text(await call(grepTool({ cwd: flat }), { pattern: "x" }));
    });
    const lines = output.split("\n");
    // Path order: the first 250 names, then the note.
    expect(lines[0]).toBe("f000000.ts");
    expect(lines[249]).toBe("f000249.ts");
    expect(lines[250]).toContain("[Results cut at 250 files; there are more.");
    // Crawling and sorting every path first held about 50 MB here.
    expect(growth).toBeLessThan(10);
  }, 30_000);

  it("H8: Grep keeps path order in a directory read in several passes", async () => {
    const result = await call(grepTool({ cwd: flat }), { pattern: "x", glob: "*9999.ts" });
    expect(text(result).split("\n")).toEqual(
      Array.from({ length: 10 }, (_, index) => `f0${index}9999.ts`),
    );
  }, 30_000);

  it("H8: LS of a 100,000-entry directory runs in a 28 MB heap", () => {
    // A child process with a small heap: reading every entry, then sorting them all, needs
    // more than that; keeping the first 1,000 names does not. tsx runs the TypeScript source.
    const script = [
      `const { runTool, toolResultText } = await import(${JSON.stringify(path.join(import.meta.dirname, "..", "index.ts"))});`,
      `const { lsTool } = await import(${JSON.stringify(path.join(import.meta.dirname, "index.ts"))});`,
      `const result = await runTool(lsTool({ cwd: ${JSON.stringify(root)} }), { path: "flat" }, { signal: new AbortController().signal, toolUseId: "t", toolName: "LS" });`,
      "console.log(toolResultText(result).split('\\n').at(-1));",
    ].join("\n");
    const child = spawnSync(
      process.execPath,
      ["--max-old-space-size=28", "--import", "tsx", "--input-type=module", "-e", script],
      { cwd: path.join(import.meta.dirname, "..", "..", "..", ".."), encoding: "utf8" },
    );
    expect(child.stderr).not.toContain("heap out of memory");
    expect(child.status).toBe(0);
    expect(child.stdout.trim()).toBe(
      `[Listing cut at 1000 of ${FILES} entries. Use Glob with a pattern to narrow it.]`,
    );
  }, 30_000);
});
