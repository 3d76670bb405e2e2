import { StdioServerTransport } from "@modelcontextprotocol/server/stdio";
import { createFaultServer, createFaultServerStats } from "./fault-server.js";

/**
 * The fault server over stdio, as a child process of the tests:
 * `node --import tsx fault-server-stdio.ts [collide]`. It writes its pid to stderr at start
 * so the tests can check it is gone after `close()`.
 */
const mode = process.argv[2] === "collide" ? "collide" : "normal";
const stats = createFaultServerStats();
const server = createFaultServer({ mode, crash: () => process.exit(3) }, stats);
process.stderr.write(`fault-server pid ${process.pid}\n`);
await server.connect(new StdioServerTransport());
