// H29: no example in a README runs code the model sends. Every README.md of the repository
// (outside node_modules and build output) is read, and each fenced code block is searched for
// the ways JavaScript runs text as code (`Function(...)`, `eval(...)`, `node:vm`, string timers):
// a user copies examples, model input and all.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const root = fileURLToPath(new URL("..", import.meta.url));
const SKIPPED = new Set(["node_modules", "dist", ".git", ".turbo", "coverage"]);

/** Every README.md under `folder`, depth first. */
function readmes(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) found.push(...readmes(join(folder, entry.name)));
    } else if (entry.name === "README.md") {
      found.push(join(folder, entry.name));
    }
  }
  return found;
}

/** Every source file (`.ts`, `.js`, `.mjs`, tests left out) under `folder`, depth first. */
function sources(folder: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    if (entry.isDirectory()) {
      if (!SKIPPED.has(entry.name)) found.push(...sources(join(folder, entry.name)));
    } else if (/\.(?:ts|js|mjs)$/.test(entry.name) && !/\.test(?:-d)?\.ts$/.test(entry.name)) {
      found.push(join(folder, entry.name));
    }
  }
  return found;
}

/** The fenced code blocks of a Markdown text, with the line each starts on. */
function codeBlocks(markdown: string): { readonly line: number; readonly code: string }[] {
  const blocks: { line: number; code: string }[] = [];
  const lines = markdown.split("\n");
  let open: { line: number; fence: string; code: string[] } | undefined;
  lines.forEach((text, index) => {
    const fence = /^\s*(`{3,}|~{3,})/.exec(text)?.[1];
    if (open === undefined) {
      if (fence !== undefined) open = { line: index + 1, fence, code: [] };
    } else if (
      fence !== undefined &&
      fence[0] === open.fence[0] &&
      fence.length >= open.fence.length
    ) {
      blocks.push({ line: open.line, code: open.code.join("\n") });
      open = undefined;
    } else {
      open.code.push(text);
    }
  });
  return blocks;
}

/** How code reaches the global object: `globalThis.`, `window.`, `self.`, `global.`. */
const GLOBAL = String.raw`(?:(?:globalThis|window|self|global)\s*\.\s*)?`;

/**
 * Ways to run text as JavaScript (with or without `new`, spaces before the parenthesis):
 * - the global `Function` constructor and `eval`, also through the global object
 *   (`globalThis.Function(`, `window.eval(`, `globalThis["eval"](`); a method of the same name
 *   on another object (`redis.eval(...)`) is not one;
 * - Node's `vm` module: `vm.runInNewContext`, `runInThisContext`, `runInContext`,
 *   `compileFunction`, `new vm.Script`, `new Script(` (also imported by name);
 * - a timer given a string (`setTimeout("...")`, `setInterval`), which browsers evaluate.
 */
const RUNS_CODE = new RegExp(
  [
    String.raw`(?<![\w$.])${GLOBAL}(?:Function|eval)\s*\(`,
    String.raw`(?<![\w$.])(?:globalThis|window|self|global)\s*\[\s*["'\x60](?:Function|eval)["'\x60]\s*\]`,
    String.raw`(?<![\w$])(?:vm\s*\.\s*)?(?:runInNewContext|runInThisContext|runInContext|compileFunction)\s*\(`,
    String.raw`\bnew\s+(?:vm\s*\.\s*)?Script\s*\(`,
    String.raw`(?<![\w$.])${GLOBAL}(?:setTimeout|setInterval)\s*\(\s*["'\x60]`,
  ].join("|"),
);

/** Where the code blocks of a Markdown text run code: `line N: the line`. */
function codeRunners(markdown: string): string[] {
  const found: string[] = [];
  for (const block of codeBlocks(markdown)) {
    block.code.split("\n").forEach((text, offset) => {
      if (RUNS_CODE.test(text)) found.push(`line ${block.line + 1 + offset}: ${text.trim()}`);
    });
  }
  return found;
}

describe("README examples (H29)", () => {
  it("H29: the check finds Function( and eval( in a code block, and nothing in prose or in a method call", () => {
    const markdown = [
      "Never write Function(text) in an example.",
      "```ts",
      'const ok = redis.eval("return 1", 0);',
      'async (input) => ({ content: String(Function("return " + input.expr)()) }),',
      "```",
      "~~~js",
      "eval (input.code);",
      "new Function ('return 1');",
      "~~~",
    ].join("\n");
    expect(codeRunners(markdown)).toEqual([
      'line 4: async (input) => ({ content: String(Function("return " + input.expr)()) }),',
      "line 7: eval (input.code);",
      "line 8: new Function ('return 1');",
    ]);
  });

  it("H29: the check finds code run through the global object, node:vm and string timers, and leaves their look-alikes alone", () => {
    const runners = [
      'const value = globalThis.Function("return " + input.expr)();',
      "window.eval(input.code);",
      'globalThis["eval"](input.code);',
      "vm.runInNewContext(input.code, {});",
      "runInThisContext(input.code);",
      "const script = new vm.Script(input.code);",
      "new Script(input.code).runInThisContext();",
      "vm.compileFunction(input.body);",
      'setTimeout("alert(1)", 10);',
      "window.setInterval(`tick()`, 1000);",
    ];
    const harmless = [
      "setTimeout(() => controller.abort(), 1000);",
      "await redis.eval(script, 1, key);",
      "const { Script } = shapes; // not node:vm",
      "myFunction(input);",
      "evaluate(input);",
    ];
    const markdown = ["```ts", ...runners, ...harmless, "```"].join("\n");
    expect(codeRunners(markdown)).toEqual(
      runners.map((text, index) => `line ${index + 2}: ${text}`),
    );
  });

  it("H29: no README's code block runs code (Function(...), eval(...), node:vm, string timers)", () => {
    const files = readmes(root);
    expect(files.map((file) => relative(root, file))).toContain("README.md");
    const offenders = files.flatMap((file) =>
      codeRunners(readFileSync(file, "utf8")).map((where) => `${relative(root, file)} ${where}`),
    );
    expect(offenders).toEqual([]);
  });

  it("H29: no sample app's source runs code (apps/*: what a user copies after the README)", () => {
    const files = sources(join(root, "apps"));
    expect(files.map((file) => relative(root, file))).toContain("apps/quickstart/src/tools.ts");
    const offenders = files.flatMap((file) =>
      readFileSync(file, "utf8")
        .split("\n")
        .flatMap((text, index) =>
          RUNS_CODE.test(text) ? [`${relative(root, file)} line ${index + 1}: ${text.trim()}`] : [],
        ),
    );
    expect(offenders).toEqual([]);
  });
});
