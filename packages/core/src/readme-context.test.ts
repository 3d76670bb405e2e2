// C9: the core README's "Long conversations" example runs, offline, as written, and prints
// what it says: compactions as they happen, and the context size after each run.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, expect, it, vi } from "vitest";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = readme.slice(readme.indexOf("## Long conversations"), readme.indexOf("## Hooks"));
const code = /^```ts\n([\s\S]*?)^```/m.exec(section)![1]!;
const folder = new URL("../.readme-examples/", import.meta.url);
mkdirSync(folder, { recursive: true });
afterAll(() => rmSync(folder, { recursive: true, force: true }));

it("C9: the README's compaction example compacts a long session and reports its size", async () => {
  const file = new URL(`context-${process.pid}.ts`, folder);
  writeFileSync(file, code);
  const logged: unknown[][] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args) => {
    logged.push(args);
  });
  try {
    await import(/* @vite-ignore */ file.href);
  } finally {
    spy.mockRestore();
  }
  const compactions = logged.filter(
    ([line]) => typeof line === "string" && line.startsWith("compacted"),
  );
  expect(compactions.length).toBeGreaterThan(0);
  for (const [line] of compactions) {
    const [, before, after] = /: (\d+) → (\d+) tokens$/.exec(line as string)!;
    expect(Number(after)).toBeLessThan(Number(before));
  }
  const sizes = logged
    .filter(([value]) => typeof value === "number")
    .map(([value]) => value as number);
  expect(sizes).toHaveLength(8);
  // The size stays under the threshold's reach instead of growing with the session.
  expect(Math.max(...sizes)).toBeLessThan(1200);
});
