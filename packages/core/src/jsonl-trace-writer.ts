import { createWriteStream } from "node:fs";
import { LatticeError } from "@lattice/tools";
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
  /**
   * Flushes and closes the file (a stream you passed in is left open). Rejects with a
   * `LatticeError` (code `"trace_write_failed"`, naming the path) when the file could not be
   * written; from that failure on, events are dropped.
   */
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
 * A file that cannot be opened or written never crashes the process: the failure is kept,
 * later events are dropped, and `close()` rejects with it.
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
  // Listen from the start: a write stream that fails (a missing directory, no permission, a
  // full disk) emits 'error', which would crash the process with nobody listening.
  let failure: Error | undefined;
  file.on("error", (error) => {
    failure ??= error;
  });
  let closing: Promise<void> | undefined;
  const settled = (): Promise<void> =>
    failure === undefined ? Promise.resolve() : Promise.reject(writeFailed(destination, failure));
  return {
    onTrace(event) {
      if (failure !== undefined || closing !== undefined) return;
      file.write(`${JSON.stringify(event, replaceErrors)}\n`);
    },
    close() {
      closing ??= new Promise<void>((resolve) => {
        if (file.closed) {
          resolve();
          return;
        }
        file.once("close", () => resolve());
        if (!file.destroyed) file.end();
      }).then(settled);
      return closing;
    },
  };
}

function writeFailed(path: string, cause: Error): LatticeError {
  return new LatticeError(
    "trace_write_failed",
    `jsonlTraceWriter(${JSON.stringify(path)}): cannot write the trace file: ${cause.message}. Check that its directory exists and is writable; events after the failure were not written.`,
    { cause },
  );
}

function replaceErrors(_key: string, value: unknown): unknown {
  if (value instanceof Error) {
    const { code } = value as { code?: unknown };
    return { name: value.name, ...(code !== undefined ? { code } : {}), message: value.message };
  }
  return value;
}
