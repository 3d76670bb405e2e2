import { randomUUID } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
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
 * client. The `crash` tool drops every open connection, as a server that died would. Calls
 * of the hostile HTTP tools (see `HOSTILE_TOOLS`) are answered here, below MCP: an endless
 * JSON body or SSE line, the `Authorization` header echoed in a tool error, a JSON-RPC error
 * and a 401 body.
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
      const body = req.method === "POST" ? await readJson(req) : undefined;
      if (answerBelowMcp(body, req.headers.authorization ?? "", res)) return;
      await transport.handleRequest(req, res, body);
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

/** A request body as JSON; `undefined` when it is not JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/** How much one write of an endless answer carries. */
const FLOOD_CHUNK = Buffer.alloc(64 * 1024, "a");

/**
 * Answers a `tools/call` of a hostile HTTP tool itself; `false` for any other request.
 *
 * @param body - The request's JSON body.
 * @param authorization - The request's `Authorization` header, echoed back.
 * @param res - The response to write.
 */
function answerBelowMcp(body: unknown, authorization: string, res: ServerResponse): boolean {
  const message = body as { method?: unknown; id?: unknown; params?: { name?: unknown } };
  if (message === null || typeof message !== "object" || message.method !== "tools/call") {
    return false;
  }
  const id = message.id;
  const reply = (payload: object) => {
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id, ...payload }));
  };
  switch (message.params?.name) {
    case "flood_json":
      res.writeHead(200, { "content-type": "application/json" });
      res.write(
        `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"content":[{"type":"text","text":"`,
      );
      flood(res);
      return true;
    case "flood_sse":
      res.writeHead(200, { "content-type": "text/event-stream" });
      res.write("event: message\ndata: ");
      flood(res);
      return true;
    case "echo_auth":
      reply({
        result: {
          content: [{ type: "text", text: `access denied for ${authorization}` }],
          isError: true,
        },
      });
      return true;
    case "rpc_echo_auth":
      reply({ error: { code: -32001, message: `the credential "${authorization}" has expired` } });
      return true;
    case "reject_auth":
      res.writeHead(401, { "content-type": "application/json" });
      res.end(
        JSON.stringify({ error: "invalid_token", error_description: `rejected ${authorization}` }),
      );
      return true;
    default:
      return false;
  }
}

/** Writes to `res` without end, as fast as the client reads, until the client goes away. */
function flood(res: ServerResponse): void {
  let open = true;
  res.once("close", () => {
    open = false;
  });
  const pump = () => {
    while (open && res.write(FLOOD_CHUNK)) {
      // Keep writing while the socket takes it.
    }
    if (open) res.once("drain", pump);
  };
  pump();
}
