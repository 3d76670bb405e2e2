import { readFile, writeFile } from "node:fs/promises";
import { basename, dirname, extname, join, resolve } from "node:path";
import { parseTraceJsonl } from "./parse-trace-jsonl.js";
import { renderTimeline } from "./render-timeline.js";
import { TraceParseError } from "./trace-parse-error.js";

/** Where the command line writes: stdout and stderr lines. */
export interface TraceCliOutput {
  /** A line for standard output. */
  readonly out: (line: string) => void;
  /** A line for standard error. */
  readonly error: (line: string) => void;
}

const USAGE = `Usage: lattice-trace timeline <trace.jsonl> [-o out.html]

Draws a Lattice JSONL trace (written by jsonlTraceWriter) as a self-contained HTML timeline.
The page is written next to the trace (trace.jsonl -> trace.html) unless -o names a file.`;

/**
 * Runs `lattice-trace` with its arguments (without `node` and the script). Returns the exit
 * code: 0 on success, 1 when the trace cannot be read or parsed or the page cannot be
 * written, 2 for bad arguments.
 *
 * @param args - The arguments, for example `["timeline", "run.jsonl", "-o", "run.html"]`.
 * @param output - Where lines go.
 */
export async function runTraceCli(
  args: readonly string[],
  output: TraceCliOutput,
): Promise<number> {
  const [command, ...rest] = args;
  if (command === undefined || command === "-h" || command === "--help" || command === "help") {
    output.out(USAGE);
    return command === undefined ? 2 : 0;
  }
  if (command !== "timeline") {
    output.error(`lattice-trace: unknown command "${command}".\n\n${USAGE}`);
    return 2;
  }
  let input: string | undefined;
  let out: string | undefined;
  for (let index = 0; index < rest.length; index++) {
    const arg = rest[index] as string;
    if (arg === "-o" || arg === "--out") {
      out = rest[++index];
      if (out === undefined) {
        output.error(`lattice-trace timeline: ${arg} needs a file name.\n\n${USAGE}`);
        return 2;
      }
    } else if (arg.startsWith("-") && arg !== "-") {
      output.error(`lattice-trace timeline: unknown option "${arg}".\n\n${USAGE}`);
      return 2;
    } else if (input === undefined) {
      input = arg;
    } else {
      output.error(
        `lattice-trace timeline: one trace file at a time (got "${input}" and "${arg}").`,
      );
      return 2;
    }
  }
  if (input === undefined) {
    output.error(`lattice-trace timeline: name the trace file to draw.\n\n${USAGE}`);
    return 2;
  }
  let text: string;
  try {
    text = await readFile(input, "utf8");
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    output.error(
      code === "ENOENT"
        ? `lattice-trace timeline: trace file "${input}" does not exist (looked at ${resolve(input)}). Check the path; a trace is written by jsonlTraceWriter(path).`
        : `lattice-trace timeline: cannot read trace file "${input}": ${(error as Error).message}.`,
    );
    return 1;
  }
  let html: string;
  try {
    const events = parseTraceJsonl(text);
    html = renderTimeline(events, { title: `Lattice tool timeline: ${basename(input)}` });
  } catch (error) {
    if (error instanceof TraceParseError) {
      output.error(`lattice-trace timeline: ${input}:${error.line}: ${error.message}`);
      return 1;
    }
    throw error;
  }
  const target = out ?? join(dirname(input), `${basename(input, extname(input))}.html`);
  try {
    await writeFile(target, html);
  } catch (error) {
    output.error(
      `lattice-trace timeline: cannot write "${target}": ${(error as Error).message}. Check that its directory exists and is writable, or pass -o with another path.`,
    );
    return 1;
  }
  output.out(`Wrote ${target} (${Buffer.byteLength(html)} bytes). Open it in a browser.`);
  return 0;
}
