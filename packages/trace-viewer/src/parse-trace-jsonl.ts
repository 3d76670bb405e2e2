import type { TraceEvent } from "@lattice/core";
import { assertKnownOptions } from "@lattice/tools/internal";
import { checkTraceEvent } from "./check-trace-event.js";
import { printableText } from "./printable-text.js";
import { shorten } from "./timeline-text.js";
import { TraceParseError } from "./trace-parse-error.js";

/** The last line of a trace that a writer stopped in the middle of, as {@link parseTraceJsonl} found it. */
export interface CutTraceLine {
  /** The line's 1-based number. */
  readonly line: number;
  /** Its first 80 characters, with control characters and bidi overrides escaped (`\u001b`). */
  readonly preview: string;
  /** How many events the complete lines before it hold. */
  readonly events: number;
}

/** Options of {@link parseTraceJsonl}. */
export interface ParseTraceJsonlOptions {
  /**
   * Called when the last line is cut: no newline after it and not valid JSON, as a writer
   * that was killed leaves it. The line is dropped either way; this says so. Default: none.
   */
  readonly onCutLastLine?: ((cut: CutTraceLine) => void) | undefined;
}

const OPTION_KEYS: ReadonlySet<string> = new Set(["onCutLastLine"]);

/**
 * Parses a JSON Lines trace, as `jsonlTraceWriter` writes it, into trace events, checking each
 * event as the viewer will read it. Blank lines (and a trailing newline) are skipped; `\r\n`
 * line ends and a byte order mark are accepted. A last line that is cut (no newline after it
 * and not valid JSON, after at least one complete event: the writer was stopped mid-line) is
 * dropped, and `onCutLastLine` is told; the events of the complete lines are returned. Text
 * from the trace quoted in a message has its control characters and bidi overrides escaped.
 *
 * @param text - The file's text.
 * @param options - {@link ParseTraceJsonlOptions}.
 * @returns The events, in file order.
 * @throws {@link TraceParseError} naming the 1-based line (and the `field`, when there is one) of
 *   the first line that is not JSON (also a last line with no complete event before it), not an event (an object with a string `type` and a `time`
 *   within ±1e15 ms), or an event with a field the viewer cannot draw (an unknown `status`, a
 *   `turn` that is not an integer, a missing `usage`, `plan` or `approvals`, ...).
 * @throws `InvalidOptionError` / `UnknownOptionError` for options that are not an object or have unknown keys.
 */
export function parseTraceJsonl(text: string, options?: ParseTraceJsonlOptions): TraceEvent[] {
  assertKnownOptions(options, OPTION_KEYS, "parseTraceJsonl():");
  const events: TraceEvent[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] ?? "").trim();
    if (line === "") continue;
    const number = index + 1;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      // The last line, with no newline after it, after complete events: a writer stopped
      // mid-line. A file with no complete event before such a line is not a trace.
      if (index === lines.length - 1 && events.length > 0) {
        options?.onCutLastLine?.({ line: number, preview: preview(line), events: events.length });
        break;
      }
      const why =
        index === lines.length - 1
          ? " and there is no complete event before it, so this is not a trace whose writer was stopped"
          : "";
      throw new TraceParseError(
        number,
        `Trace line ${number} is not valid JSON (${printableText((error as Error).message)}): ${preview(line)}${why}. Each line of a trace must be one JSON event, as jsonlTraceWriter writes them; remove or fix the line.`,
        { cause: error },
      );
    }
    const problem = checkTraceEvent(value);
    if (problem !== undefined) {
      throw new TraceParseError(
        number,
        problem.field === ""
          ? `Trace line ${number} ${problem.message}. Is this a Lattice trace written by jsonlTraceWriter?`
          : `Trace line ${number} (${problem.type ?? "event"}): ${problem.message}. The viewer cannot draw this event: was the line edited, or written by something other than @lattice/core's jsonlTraceWriter? Fix or remove the line.`,
        { field: problem.field === "" ? undefined : problem.field },
      );
    }
    events.push(value as TraceEvent);
  }
  return events;
}

/** The line's first 80 characters, with control characters and bidi overrides escaped. */
function preview(line: string): string {
  return printableText(shorten(line, 81));
}
