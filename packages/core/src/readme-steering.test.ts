// L15: every example of the core README's "Steering a run" section runs, offline, as written,
// and prints what its comments say.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { afterAll, describe, expect, it, vi } from "vitest";

const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
const section = readme.slice(
  readme.indexOf("## Steering a run"),
  readme.indexOf("## Long conversations"),
);
const examples = [...section.matchAll(/^### (.+)\n[\s\S]*?^```ts\n([\s\S]*?)^```/gm)].map(
  ([, title, code]) => ({ title: title!, code: code! }),
);
const folder = new URL("../.readme-examples/", import.meta.url);
mkdirSync(folder, { recursive: true });
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs one example as a module and returns what it logged, one array per console.log. */
async function run(index: number): Promise<unknown[][]> {
  const file = new URL(`steering-${index}-${process.pid}.ts`, folder);
  writeFileSync(file, examples[index]!.code);
  const logged: unknown[][] = [];
  const spy = vi.spyOn(console, "log").mockImplementation((...args) => {
    logged.push(args);
  });
  try {
    await import(/* @vite-ignore */ file.href);
  } finally {
    spy.mockRestore();
  }
  return logged;
}

describe("the core README's steering examples (L15)", () => {
  it("L15: the section has one runnable example per capability", () => {
    expect(examples.map((example) => example.title)).toEqual([
      "Typed output: `outputSchema`",
      "Per-step control: `prepareStep` and `stopWhen`",
      "Guardrails",
      "Fallback models",
      "Budgets and cost: `maxTotalTokens`, `maxCostUsd`, `pricing`",
    ]);
  });

  it("L15, L1: the typed-output example prints the typed total", async () => {
    expect(await run(0)).toEqual([[1200]]);
  });

  it("L15, L5, L6: the prepareStep example runs the search and answers", async () => {
    expect(await run(1)).toEqual([["Refunds take 5 days."]]);
  });

  it("L15, L8: the guardrail example ends guardrail_tripped, naming the output guardrail", async () => {
    expect(await run(2)).toEqual([
      ["guardrail_tripped", { name: "noSecrets", kind: "output", reason: "leaks a secret" }],
    ]);
  });

  it("L15, L10: the fallback example is served by the backup, priced at Haiku 4.5", async () => {
    const [[text, cost]] = (await run(3)) as [[string, number]];
    expect(text).toBe("Served by the backup.");
    expect(cost).toBeGreaterThan(0);
  });

  it("L15, L11: the budget example succeeds and prices the run with the user's table", async () => {
    expect(await run(4)).toEqual([
      [
        "success",
        (1200 * 0.5 + 300 * 2) / 1e6,
        expect.stringMatching(/^\(built-in prices of \d{4}-\d\d-\d\d\)$/),
      ],
    ]);
  });
});
