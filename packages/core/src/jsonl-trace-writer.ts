import { createWriteStream } from "node:fs";
import type { TraceEvent } from "./trace-event.js";

/** Where JSON Lines go when not to a file: a Node `Writable` (e.g. `process.stdout`) or anything with `write`. */
export interface TraceSink {
  /** Receives one line (with its newline) per event. */
  write(chunk: string): unknown;
}

/** What {@link jsonlTraceWriter} returns: pass `onTrace` to an agent, `close()` when done. */
export interface JsonlTraceWriter {
  /** Writes one event as one JSON line. */
  readonly onTrace: (event: TraceEvent) => void;
  /** Flushes and closes the file (a stream you passed in is ended only if you created it by path). */
  close(): Promise<void>;
}

/**
 * Writes trace events as JSON Lines, one event per line, to a file path or a writable stream.
 * Errors in events are written as `{ name, code, message }`; nothing else is transformed.
 *
 * @example
 * ```ts
 * const trace = jsonlTraceWriter("run.jsonl");
 * const agent = createAgent({ model, tools, onTrace: trace.onTrace });
 * await agent.run("...");
 * await trace.close();
 * ```
 *
 * @param destination - A file path (created or truncated) or a {@link TraceSink} such as a `Writable`.
 */
export function jsonlTraceWriter(destination: string | TraceSink): JsonlTraceWriter {
  if (typeof destination !== "string") {
    return {
      onTrace(event) {
        destination.write(`${JSON.stringify(event, replaceErrors)}\n`);
      },
      close: () => Promise.resolve(),
    };
  }
  const file = createWriteStream(destination);
  return {
    onTrace(event) {
      file.write(`${JSON.stringify(event, replaceErrors)}\n`);
    },
    close() {
      return new Promise((resolve, reject) => {
        file.once("error", reject);
        file.end(() => resolve());
      });
    },
  };
}

function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const { code } = value as { code?: unknown };
    return { name: value.name, ...(code !== undefined ? { code } : {}), message: value.message };
  }
  return value;
}
