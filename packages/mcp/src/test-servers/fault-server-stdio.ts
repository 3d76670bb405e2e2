import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { createFaultServer, createFaultServerStats, type FaultServerMode } from "./fault-server.js";

/**
 * The fault server over stdio, as a child process of the tests:
 * `node --import tsx fault-server-stdio.ts [mode]` (see `FaultServerMode`). It writes its pid
 * to stderr at start so the tests can check it is gone after `close()`.
 */
const MODES: readonly FaultServerMode[] = ["normal", "collide", "hostile", "silent_list", "many"];
const mode = MODES.find((name) => name === process.argv[2]) ?? "normal";
const stats = createFaultServerStats();
const server = createFaultServer({ mode, crash: () => process.exit(3) }, stats);
process.stderr.write(`fault-server pid ${process.pid}\n`);
await server.connect(new StdioServerTransport());
