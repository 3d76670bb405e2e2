import type { TraceEvent } from "@lattice/core";
import { TraceParseError } from "./trace-parse-error.js";

/**
 * Parses a JSON Lines trace, as `jsonlTraceWriter` writes it, into trace events. Blank lines
 * (and a trailing newline) are skipped; `\r\n` line ends are accepted. Events are returned as
 * they are, in file order; fields are not validated beyond `type` and `time`.
 *
 * @param text - The file's text.
 * @returns The events, in order.
 * @throws {@link TraceParseError} naming the 1-based line of the first line that is not JSON or
 *   not an object with a string `type` and a numeric `time`.
 */
export function parseTraceJsonl(text: string): TraceEvent[] {
  const events: TraceEvent[] = [];
  const lines = text.split("\n");
  for (let index = 0; index < lines.length; index++) {
    const line = (lines[index] ?? "").trim();
    if (line === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch (error) {
      throw new TraceParseError(
        index + 1,
        `Trace line ${index + 1} is not valid JSON (${(error as Error).message}): ${preview(line)}. Each line of a trace must be one JSON event, as jsonlTraceWriter writes them; remove or fix the line.`,
        { cause: error },
      );
    }
    if (!isEvent(value)) {
      throw new TraceParseError(
        index + 1,
        `Trace line ${index + 1} is not a trace event (an object with a string "type" and a numeric "time"): ${preview(line)}. Is this a Lattice trace written by jsonlTraceWriter?`,
      );
    }
    events.push(value);
  }
  return events;
}

function isEvent(value: unknown): value is TraceEvent {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { type, time } = value as { type?: unknown; time?: unknown };
  return typeof type === "string" && typeof time === "number" && Number.isFinite(time);
}

function preview(line: string): string {
  return line.length > 80 ? `${line.slice(0, 80)}…` : line;
}
