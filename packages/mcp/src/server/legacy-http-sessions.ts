import { randomUUID } from "node:crypto";
import {
  isInitializeRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/** 2025-era Streamable HTTP sessions, one server instance each. */
export interface LegacyHttpSessions {
  /**
   * Serves one 2025-era request: an `initialize` opens a session, every other request names
   * its session in `Mcp-Session-Id`.
   *
   * @param request - The request, its body already read.
   * @param parsedBody - The body as JSON, or `undefined` when it is not JSON.
   */
  fetch(request: Request, parsedBody: unknown): Promise<Response>;
  /** How many sessions are open. */
  readonly size: number;
  /** Closes every session: their event streams end. */
  close(): Promise<void>;
}

/**
 * Serves 2025-era clients with sessions (`Mcp-Session-Id`), the SDK's
 * `WebStandardStreamableHTTPServerTransport` with one server instance per session.
 *
 * Sessions rather than the SDK's stateless fallback because a 2025-era client cancels a call
 * with a `notifications/cancelled` sent in a separate request: only a session routes it to
 * the instance running the call, so MCP cancellation reaches the handler (M12). A session
 * ends when its client sends `DELETE` or the server closes.
 *
 * @param createServer - Makes the server instance of a new session.
 */
export function createLegacyHttpSessions(createServer: () => Server): LegacyHttpSessions {
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  return {
    get size() {
      return sessions.size;
    },
    async fetch(request, parsedBody) {
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId !== null) {
        const transport = sessions.get(sessionId);
        if (transport === undefined) {
          return jsonRpcError(
            404,
            -32001,
            "Session not found: it ended or never existed. Send initialize to start a new one.",
          );
        }
        return transport.handleRequest(request, withBody(parsedBody));
      }
      if (request.method !== "POST" || !opensSession(parsedBody)) {
        return parsedBody === undefined && request.method === "POST"
          ? jsonRpcError(400, -32700, "Parse error: the body is not JSON.")
          : jsonRpcError(
              400,
              -32000,
              "Bad Request: no Mcp-Session-Id. Send initialize first, then the session id it returns.",
            );
      }
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
        onsessionclosed: (id) => {
          sessions.delete(id);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.delete(transport.sessionId);
      };
      await createServer().connect(transport);
      return transport.handleRequest(request, withBody(parsedBody));
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.allSettled(open.map((transport) => transport.close()));
    },
  };
}

function opensSession(body: unknown): boolean {
  return Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
}

function withBody(parsedBody: unknown): { parsedBody?: unknown } | undefined {
  return parsedBody === undefined ? undefined : { parsedBody };
}

function jsonRpcError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code, message }, id: null }, { status });
}
