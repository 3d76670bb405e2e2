import { serveStdio } from "@modelcontextprotocol/server/stdio";
import type { CallTracker } from "./call-tracker.js";
import { createMcpServer } from "./create-mcp-server.js";
import type { ServedCatalogue } from "./served-catalogue.js";

/** A catalogue served over the process's stdin and stdout. */
export interface StdioEndpoint {
  /** Waits for calls in flight, then closes the connection. */
  close(): Promise<void>;
  /** Resolves when the client closed the server's stdin (the client went away). */
  readonly disconnected: Promise<void>;
}

/**
 * Serves a catalogue over stdio (M11) through the SDK's `serveStdio`, which answers both a
 * 2025-era `initialize` and a 2026-07-28 opening. Nothing but MCP messages is written to
 * stdout.
 *
 * @param catalogue - What to serve.
 * @param tracker - The server's calls in flight.
 */
export function serveStdioTransport(
  catalogue: ServedCatalogue,
  tracker: CallTracker,
): StdioEndpoint {
  const connection = serveStdio(() => createMcpServer(catalogue, tracker));
  const disconnected = new Promise<void>((resolve) => {
    process.stdin.once("end", resolve);
    process.stdin.once("close", resolve);
  });
  return {
    disconnected,
    async close() {
      await tracker.drain();
      // The answer of the last call is written by the SDK after its handler settles.
      await new Promise((resolve) => setImmediate(resolve));
      await connection.close();
    },
  };
}
