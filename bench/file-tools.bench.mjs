// Benchmark of the built-in file tools (not a test): time per call of Read, Write, Edit, LS,
// Glob and Grep on a generated tree, as ms per call and calls per second. Run from the
// repository root after building @lattice/tools (`pnpm bench` builds first):
//
//   node bench/file-tools.bench.mjs            # add --quick for fewer rounds, --json for JSON
//
// LATTICE_TOOLS_DIST=/path/to/packages/tools/dist measures another build (an older commit's
// worktree, say) with the same script, so before and after are measured alike.
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath, pathToFileURL } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
const asJson = process.argv.includes("--json");
const ROUNDS = quick ? 3 : 7;

const dist = resolve(
  process.env.LATTICE_TOOLS_DIST ?? join(here, "..", "packages", "tools", "dist"),
);
const { runTool } = await import(pathToFileURL(join(dist, "index.js")).href);
const { builtinTools } = await import(pathToFileURL(join(dist, "builtin.js")).href);

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};

/** A deterministic pseudo-random generator, so every run sees the same tree. */
function generator(seed) {
  let state = seed;
  return (limit) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return (state >> 8) % limit;
  };
}

const WORDS = [
  "const",
  "value",
  "return",
  "export",
  "function",
  "result",
  "import",
  "await",
  "options",
  "signal",
  "handler",
  "index",
  "config",
  "request",
  "response",
  "message",
];

/** A line of code-like text, about 40 characters. */
function codeLine(next) {
  const words = [];
  const count = 3 + next(6);
  for (let index = 0; index < count; index++) words.push(WORDS[next(WORDS.length)]);
  return `${"  ".repeat(next(4))}${words.join(next(3) === 0 ? "(" : " ")};`;
}

/** Builds the tree: a 2,000-line file, a 1,000-entry directory, ~5,000 files to glob, 2,000 ~20 KB files to grep. */
function buildTree(root) {
  const next = generator(42);
  const lines2000 = Array.from({ length: 2000 }, () => codeLine(next));
  writeFileSync(join(root, "read.ts"), `${lines2000.join("\n")}\n`);
  writeFileSync(join(root, "edit.ts"), `${lines2000.join("\n")}\nconst MARKER = "before";\n`);
  mkdirSync(join(root, "ls"));
  for (let index = 0; index < 1000; index++) {
    const name = `entry-${String(index).padStart(4, "0")}`;
    if (index % 10 === 0) mkdirSync(join(root, "ls", name));
    else writeFileSync(join(root, "ls", `${name}.txt`), "x\n");
  }
  // Glob: 100 directories of 50 files, three in five .ts, with spread modification times.
  for (let directory = 0; directory < 100; directory++) {
    const path = join(root, "glob", `pkg-${directory % 10}`, `dir-${directory}`);
    mkdirSync(path, { recursive: true });
    for (let index = 0; index < 50; index++) {
      const file = join(path, `file-${index}.${index % 5 < 3 ? "ts" : "md"}`);
      writeFileSync(file, "export {};\n");
      const seconds = 1_700_000_000 + next(10_000_000);
      utimesSync(file, seconds, seconds);
    }
  }
  // Grep: 2,000 files of about 20 KB; about one in twenty holds the literal, one in ten the regex.
  for (let directory = 0; directory < 40; directory++) {
    const path = join(root, "grep", `src-${directory}`);
    mkdirSync(path, { recursive: true });
    for (let index = 0; index < 50; index++) {
      const lines = [];
      let size = 0;
      while (size < 20_000) {
        const line = codeLine(next);
        lines.push(line);
        size += line.length + 1;
      }
      if (next(20) === 0) lines.splice(next(lines.length), 0, "// TODO: remove this workaround");
      if (next(10) === 0) lines.splice(next(lines.length), 0, "  handleRequest(options);");
      writeFileSync(join(path, `module-${index}.ts`), `${lines.join("\n")}\n`);
    }
  }
  return lines2000;
}

const root = mkdtempSync(join(tmpdir(), "lattice-file-bench-"));
try {
  const lines2000 = buildTree(root);
  const tools = Object.fromEntries(
    builtinTools({ tools: ["Read", "Write", "Edit", "LS", "Glob", "Grep"], cwd: root }).map(
      (definition) => [definition.name, definition],
    ),
  );
  const signal = new AbortController().signal;
  const call = async (name, input) => {
    const result = await runTool(tools[name], input, {
      signal,
      toolUseId: "toolu_bench",
      toolName: name,
    });
    if (result.isError) throw new Error(`${name} failed: ${JSON.stringify(result.content)}`);
    return result;
  };

  let marker = "before";
  const writeContent = `${lines2000.join("\n")}\n`;
  const cases = [
    {
      label: "Read, 2,000-line file",
      calls: 200,
      run: () => call("Read", { file_path: "read.ts" }),
    },
    {
      label: "Write, 2,000 lines (~80 KB)",
      calls: 200,
      run: () => call("Write", { file_path: "written.ts", content: writeContent }),
    },
    {
      label: "Edit, one unique string in 2,000 lines",
      calls: 200,
      run: () => {
        const next = marker === "before" ? "after" : "before";
        const done = call("Edit", {
          file_path: "edit.ts",
          old_string: `const MARKER = "${marker}";`,
          new_string: `const MARKER = "${next}";`,
        });
        marker = next;
        return done;
      },
    },
    { label: "LS, 1,000 entries", calls: 100, run: () => call("LS", { path: "ls" }) },
    {
      label: 'Glob "**/*.ts", 5,000 files',
      calls: 20,
      run: () => call("Glob", { pattern: "**/*.ts", path: "glob" }),
    },
    {
      label: "Grep literal, 2,000 files (~40 MB)",
      calls: 5,
      run: () => call("Grep", { pattern: "TODO: remove", path: "grep" }),
    },
    {
      label: "Grep regex, 2,000 files (~40 MB)",
      calls: 5,
      run: () => call("Grep", { pattern: "handle[A-Z]\\w*\\(", path: "grep" }),
    },
  ];

  const figures = [];
  for (const { label, calls, run } of cases) {
    for (let index = 0; index < Math.min(calls, 5); index++) await run(); // warm up
    const perCall = [];
    for (let round = 0; round < ROUNDS; round++) {
      const started = performance.now();
      for (let index = 0; index < calls; index++) await run();
      perCall.push((performance.now() - started) / calls);
    }
    const ms = median(perCall);
    figures.push({ label, msPerCall: ms, callsPerSecond: 1000 / ms });
  }

  if (asJson) {
    console.log(JSON.stringify({ dist, node: process.version, quick, figures }));
  } else {
    console.log(`Built-in file tools (${dist}), median of ${ROUNDS} rounds\n`);
    console.log("| call | ms per call | calls/s |\n|---|---|---|");
    for (const figure of figures) {
      console.log(
        `| ${figure.label} | ${figure.msPerCall.toFixed(3)} | ${figure.callsPerSecond.toFixed(1)} |`,
      );
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
