import { randomUUID } from "node:crypto";
import { createServer, type Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import { NodeStreamableHTTPServerTransport } from "@modelcontextprotocol/node";
import {
  createFaultServer,
  createFaultServerStats,
  type FaultServerOptions,
  type FaultServerStats,
} from "./fault-server.js";

/** A running fault server over Streamable HTTP, in the test process. */
export interface FaultHttpServer {
  /** The MCP endpoint, `http://127.0.0.1:<port>/mcp`. */
  readonly url: string;
  /** What the server saw. */
  readonly stats: FaultServerStats;
  /** The `Authorization` header of every request, in order (`""` when absent). */
  readonly authorizations: string[];
  /** How many sessions were initialised so far. */
  sessionCount(): number;
  /** Ends every session on the server side: the next request with its id gets 404. */
  endSessions(): Promise<void>;
  /** Stops the server. */
  close(): Promise<void>;
}

/**
 * Starts the fault server over Streamable HTTP on a free loopback port, one session per
 * client. The `crash` tool drops every open connection, as a server that died would.
 *
 * @param mode - The fault server's mode.
 */
export async function startFaultHttpServer(
  mode: FaultServerOptions["mode"] = "normal",
): Promise<FaultHttpServer> {
  const stats = createFaultServerStats();
  const sessions = new Map<string, NodeStreamableHTTPServerTransport>();
  let initialised = 0;
  let http: HttpServer;
  // A dead server: it stops listening, forgets its sessions and drops every connection.
  const crash = () => {
    sessions.clear();
    http.close();
    http.closeAllConnections();
  };

  const authorizations: string[] = [];
  http = createServer(async (req, res) => {
    authorizations.push(req.headers.authorization ?? "");
    const sessionId = req.headers["mcp-session-id"];
    if (typeof sessionId === "string") {
      const transport = sessions.get(sessionId);
      if (transport === undefined) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            jsonrpc: "2.0",
            error: { code: -32001, message: "Session not found" },
            id: null,
          }),
        );
        return;
      }
      await transport.handleRequest(req, res);
      return;
    }
    const transport: NodeStreamableHTTPServerTransport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        initialised++;
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
    };
    const server = createFaultServer({ mode, crash }, stats);
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    stats,
    authorizations,
    sessionCount: () => initialised,
    async endSessions() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((transport) => transport.close()));
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((transport) => transport.close().catch(() => {})));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
