import { createWriteStream } from "node:fs";
import type { Writable } from "node:stream";
import type { TraceEvent } from "./trace-event.js";

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
 * @param destination - A file path (created or truncated) or a `Writable`.
 */
export function jsonlTraceWriter(destination: string | Writable): JsonlTraceWriter {
  const ownsStream = typeof destination === "string";
  const stream = ownsStream ? createWriteStream(destination) : destination;
  return {
    onTrace(event) {
      stream.write(`${JSON.stringify(event, replaceErrors)}\n`);
    },
    close() {
      if (!ownsStream) return Promise.resolve();
      return new Promise((resolve, reject) => {
        stream.once("error", reject);
        stream.end(() => resolve());
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
