import { randomBytes } from "node:crypto";
import { fstatSync } from "node:fs";
import { lstat, open, realpath, rename, stat, unlink, writeFile } from "node:fs/promises";
import { basename, dirname, extname, isAbsolute, sep } from "node:path";
import { parseTraceJsonl } from "./parse-trace-jsonl.js";
import { printableText } from "./printable-text.js";
import { renderTimeline } from "./render-timeline.js";
import { TraceEventError } from "./trace-event-error.js";
import { TraceParseError } from "./trace-parse-error.js";

/** Where the command line writes: stdout and stderr lines. */
export interface TraceCliOutput {
  /** A line for standard output. */
  readonly out: (line: string) => void;
  /** A line for standard error. */
  readonly error: (line: string) => void;
}

const USAGE = `Usage: lattice-trace timeline <trace.jsonl> [-o out.html]
       lattice-trace timeline - -o out.html     (the trace on standard input)

Draws a Lattice JSONL trace (written by jsonlTraceWriter) as a self-contained HTML timeline.
The page is written next to the trace (trace.jsonl -> trace.html) unless -o names its file.
The page replaces the file it is written to, never writing through a symlink.`;

/** A file's identity: the device and inode it is on (`undefined` when it has none, as a pipe). */
interface FileIdentity {
  readonly dev: bigint;
  readonly ino: bigint;
}

/**
 * Runs `lattice-trace` with its arguments (without `node` and the script). Returns the exit
 * code: 0 on success; 1 when the trace cannot be read or drawn (a line that is not JSON, or an
 * event with a field the viewer cannot draw: the line and the field are named) or the page
 * cannot be written; 2 for bad arguments (`-o` naming a folder, `-` without `-o`); and 2 when
 * the page would be written over the trace itself: `-o` naming the input (as the system
 * resolves it: through `..`, a symlink or a hard link; for `-`, a file redirected to standard
 * input), or a trace named `*.html` with no `-o`. The page is written to a new file beside
 * the target and renamed over it, so a symlink at the target is replaced, never written
 * through. A last line cut by a stopped writer is dropped, with a note on standard error and
 * on the page. Never prints a stack trace, and escapes control characters and bidi overrides
 * in what it prints.
 *
 * @param args - The arguments, for example `["timeline", "run.jsonl", "-o", "run.html"]`;
 *   `["timeline", "-", "-o", "run.html"]` reads the trace from standard input.
 * @param lines - Where lines go.
 */
export async function runTraceCli(args: readonly string[], lines: TraceCliOutput): Promise<number> {
  // What reaches a terminal carries no control character from a trace or a path.
  const printable = (line: string) => line.split("\n").map(printableText).join("\n");
  const output: TraceCliOutput = {
    out: (line) => lines.out(printable(line)),
    error: (line) => lines.error(printable(line)),
  };
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
  if (input === "-" && out === undefined) {
    output.error(
      "lattice-trace timeline: reading the trace from standard input (-) needs -o with the page's file name: there is no trace file to write it next to.",
    );
    return 2;
  }
  const target = out ?? besideTrace(input, ".html");
  const name = input === "-" ? "standard input" : `"${input}"`;
  if ((await stat(target).catch(() => undefined))?.isDirectory()) {
    output.error(
      `lattice-trace timeline: "${target}" is a folder: -o names the page's file, for example -o "${target.replace(/[\\/]+$/, "")}${sep}${input === "-" ? "trace" : basename(input, extname(input))}.html".`,
    );
    return 2;
  }
  const read = await readTrace(input);
  if ("error" in read) {
    output.error(read.error);
    return 1;
  }
  const refuse = async (): Promise<number | undefined> => {
    const same = await namesFile(target, read.identity);
    if (same === undefined) return undefined;
    const other = input === "-" ? "trace.html" : besideTrace(input, ".timeline.html");
    output.error(
      `lattice-trace timeline: writing the page to "${target}" would overwrite the trace ${name} (both name ${same}). Nothing was written. Pass -o with another file name, for example -o "${other}".`,
    );
    return 2;
  };
  const early = await refuse();
  if (early !== undefined) return early;
  let html: string;
  try {
    const notes: string[] = [];
    const events = parseTraceJsonl(read.text, {
      onCutLastLine: (cut) => {
        output.error(
          `lattice-trace timeline: ${input}:${cut.line}: the last line is cut (no newline at its end, and not valid JSON), as a writer that was stopped leaves it. It was dropped: the page shows the ${cut.events} events before it.`,
        );
        notes.push(
          `The trace's last line (line ${cut.line}) is cut, as a writer that was stopped leaves it: it was dropped, and the page shows the ${cut.events} events before it.`,
        );
      },
    });
    const title = input === "-" ? "standard input" : basename(input);
    html = renderTimeline(events, { title: `Lattice tool timeline: ${title}`, notes });
  } catch (error) {
    if (error instanceof TraceParseError) {
      output.error(`lattice-trace timeline: ${input}:${error.line}: ${error.message}`);
    } else if (error instanceof TraceEventError) {
      output.error(`lattice-trace timeline: ${input}: ${error.message}`);
    } else {
      // A defect of the viewer: say so, without a stack trace into the bundle.
      output.error(
        `lattice-trace timeline: could not draw ${name}: ${(error as Error)?.message ?? String(error)}. This is a bug in @lattice/trace-viewer; please report it with the trace.`,
      );
    }
    return 1;
  }
  // Into a new file beside the target, then renamed over it: the rename replaces a symlink
  // named by the target rather than writing through it, and a reader never sees half a page.
  const temporary = besideFile(
    target,
    `.${basename(target)}.${randomBytes(6).toString("hex")}.tmp`,
  );
  try {
    await writeFile(temporary, html, { flag: "wx" });
    // The trace may have been moved to the target's name meanwhile: look again, last thing.
    const late = await refuse();
    if (late !== undefined) {
      await unlink(temporary).catch(() => undefined);
      return late;
    }
    await rename(temporary, target);
  } catch (error) {
    await unlink(temporary).catch(() => undefined);
    output.error(
      `lattice-trace timeline: cannot write "${target}": ${(error as Error).message}. Check that its folder exists and is writable, or pass -o with another path.`,
    );
    return 1;
  }
  output.out(`Wrote ${target} (${Buffer.byteLength(html)} bytes). Open it in a browser.`);
  return 0;
}

/**
 * A file named like `file` but with `suffix` for its extension, in the same folder as the
 * system finds it: the folder part is kept as given, not normalised, since `link/..` is not
 * the folder `link` sits in when `link` is a symlink to a folder elsewhere.
 */
function besideTrace(file: string, suffix: string): string {
  return besideFile(file, `${basename(file, extname(file))}${suffix}`);
}

/** `name` in the folder of `file`, the folder part as given (see {@link besideTrace}). */
function besideFile(file: string, name: string): string {
  const folder = dirname(file);
  if (folder === "." && !file.startsWith(`.${sep}`) && !file.startsWith("./")) return name;
  return folder.endsWith(sep) || folder.endsWith("/")
    ? `${folder}${name}`
    : `${folder}${sep}${name}`;
}

/**
 * Reads the trace: the file (through one open handle, whose identity is the file actually
 * read) or, for `-`, standard input (its identity when it is a file redirected in).
 */
async function readTrace(
  input: string,
): Promise<{ text: string; identity: FileIdentity | undefined } | { error: string }> {
  if (input === "-") {
    const stats = fstatSync(0, { bigint: true });
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Buffer));
    return {
      text: Buffer.concat(chunks).toString("utf8"),
      identity: stats.isFile() ? { dev: stats.dev, ino: stats.ino } : undefined,
    };
  }
  let handle: Awaited<ReturnType<typeof open>> | undefined;
  try {
    handle = await open(input, "r");
    const stats = await handle.stat({ bigint: true });
    return {
      text: await handle.readFile("utf8"),
      identity: { dev: stats.dev, ino: stats.ino },
    };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    return {
      error:
        code === "ENOENT"
          ? `lattice-trace timeline: trace file "${input}" does not exist${isAbsolute(input) ? "" : ` (looked from ${process.cwd()})`}. Check the path; a trace is written by jsonlTraceWriter(path).`
          : `lattice-trace timeline: cannot read trace file "${input}": ${(error as Error).message}.`,
    };
  } finally {
    await handle?.close();
  }
}

/**
 * Whether `target`, looked up as the system does (no lexical clean-up of `..`), is the file
 * with `identity`: the same directory entry or a hard link (`lstat`), or a symlink to it
 * (`stat`). Returns the file's real path (for the message), or `undefined`.
 */
async function namesFile(
  target: string,
  identity: FileIdentity | undefined,
): Promise<string | undefined> {
  if (identity === undefined || identity.ino === 0n) return undefined;
  for (const look of [lstat, stat]) {
    const found = await look(target, { bigint: true }).catch(() => undefined);
    if (found !== undefined && found.dev === identity.dev && found.ino === identity.ino) {
      return realpath(target).catch(() => target);
    }
  }
  return undefined;
}
