// Builds packages with turbo and prints one line per package as its build starts (cached or
// not), instead of tsup's output or nothing at all; when a build fails, everything that package
// printed is shown. Usage: node scripts/build-quietly.mjs [turbo run arguments...], e.g.
// `--filter=@lattice-apps/quickstart^...`. Run it through `pnpm run`, which puts turbo on PATH.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const started = Date.now();
const turbo = spawn("turbo", ["run", "build", "--output-logs=new-only", ...process.argv.slice(2)], {
  stdio: ["ignore", "pipe", "pipe"],
});
const output = new Map();
const seconds = () => `${((Date.now() - started) / 1000).toFixed(0)} s`;
const readLines = (stream) =>
  createInterface({ input: stream }).on("line", (line) => {
    const task = /^(\S+):build: (.*)$/.exec(line);
    if (task === null) {
      // turbo's own lines: its errors and summary are kept for a failure.
      output.set("", [...(output.get("") ?? []), line]);
      return;
    }
    const [, name, text] = task;
    if (/^cache (hit|miss|bypass)/.test(text)) {
      process.stdout.write(
        `  ${name} ${text.startsWith("cache hit") ? "(cached)" : "building…"} ${seconds()}\n`,
      );
    } else output.set(name, [...(output.get(name) ?? []), line]);
  });
readLines(turbo.stdout);
readLines(turbo.stderr);
process.stdout.write("Building the packages (turbo, one line per package):\n");
turbo.on("close", (code) => {
  if (code === 0) {
    process.stdout.write(`Built in ${seconds()}.\n`);
    return;
  }
  for (const lines of output.values()) process.stderr.write(`${lines.join("\n")}\n`);
  process.exitCode = code ?? 1;
});
