import { randomUUID } from "node:crypto";
import {
  isInitializeRequest,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from "@modelcontextprotocol/server";

/** The default `maxSessions` of `serveMcp` over HTTP. */
export const DEFAULT_MAX_SESSIONS = 1_000;

/** The default `sessionIdleTimeoutMs` of `serveMcp` over HTTP: 30 minutes. */
export const DEFAULT_SESSION_IDLE_TIMEOUT_MS = 30 * 60 * 1_000;

/** How many sessions to keep and for how long (H23). */
export interface LegacyHttpSessionsOptions {
  /** The most sessions open at once; at the cap, a new one evicts the one idle longest. */
  readonly maxSessions: number;
  /** How long a session may go without a POST before it is closed, in milliseconds. */
  readonly idleTimeoutMs: number;
}

/** 2025-era Streamable HTTP sessions, one server instance each. */
export interface LegacyHttpSessions {
  /**
   * Serves one 2025-era request: an `initialize` opens a session, every other request names
   * its session in `Mcp-Session-Id`.
   *
   * @param request - The request, its body already read.
   * @param parsedBody - The body as JSON, or `undefined` when it is not JSON.
   * @param settled - Settles when the response has been written or the client went away:
   *   until then a POST keeps its session in use, neither evicted nor expired. (A `GET`, the
   *   client's standing event stream, does not: it is closed with its session.)
   */
  fetch(request: Request, parsedBody: unknown, settled: Promise<void>): Promise<Response>;
  /** How many sessions are open. */
  readonly size: number;
  /** Closes every session: their event streams end. */
  close(): Promise<void>;
}

/** One open session. */
interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  /** POSTs of the session not yet answered (its standing `GET` event stream does not count). */
  inUse: number;
  /** Closes the session once it has been idle for the idle time. */
  timer: NodeJS.Timeout | undefined;
}

/**
 * Serves 2025-era clients with sessions (`Mcp-Session-Id`), the SDK's
 * `WebStandardStreamableHTTPServerTransport` with one server instance per session.
 *
 * Sessions rather than the SDK's stateless fallback because a 2025-era client cancels a call
 * with a `notifications/cancelled` sent in a separate request: only a session routes it to
 * the instance running the call, so MCP cancellation reaches the handler (M12). A session
 * ends when its client sends `DELETE`, when it has had no POST for `idleTimeoutMs`, when
 * `maxSessions` are open and a new one needs its place (the session idle longest goes
 * first; one with a POST in flight is never evicted), or when the server closes (H23). Only
 * POSTs in flight make a session busy: the standing `GET` event stream every SDK client opens
 * does not, and is closed with its session. A request naming a session that ended is answered
 * 404 "Session not found", which tells the client to initialize again. When every session has
 * a POST in flight, a new one is refused with 503.
 *
 * @param createServer - Makes the server instance of a new session.
 * @param options - The cap and the idle time.
 */
export function createLegacyHttpSessions(
  createServer: () => Server,
  options: LegacyHttpSessionsOptions,
): LegacyHttpSessions {
  // In order of last use: the first is the one idle longest.
  const sessions = new Map<string, Session>();
  /** `initialize` requests being answered: sessions about to open. */
  let opening = 0;

  const end = (id: string, session: Session): void => {
    clearTimeout(session.timer);
    sessions.delete(id);
    void session.transport.close().catch(() => {});
  };

  /** Marks the session in use by a POST until `settled`; then it is the most recently used. */
  const use = (id: string, session: Session, settled: Promise<void>): void => {
    session.inUse++;
    clearTimeout(session.timer);
    session.timer = undefined;
    void settled.then(() => {
      session.inUse--;
      if (sessions.get(id) !== session) return;
      sessions.delete(id);
      sessions.set(id, session);
      if (session.inUse === 0) {
        session.timer = setTimeout(() => {
          if (sessions.get(id) === session && session.inUse === 0) end(id, session);
        }, options.idleTimeoutMs);
        session.timer.unref?.();
      }
    });
  };

  /** Makes room for one more session: `false` when every open session is in use. */
  const makeRoom = (): boolean => {
    if (sessions.size + opening < options.maxSessions) return true;
    for (const [id, session] of sessions) {
      if (session.inUse > 0) continue;
      end(id, session);
      return true;
    }
    return false;
  };

  return {
    get size() {
      return sessions.size;
    },
    async fetch(request, parsedBody, settled) {
      const sessionId = request.headers.get("mcp-session-id");
      if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (session === undefined) {
          return jsonRpcError(
            404,
            -32001,
            "Session not found: it ended or never existed. Send initialize to start a new one.",
          );
        }
        // H23: every SDK client keeps a GET event stream open for the server's own messages;
        // it is no work in flight, and must not keep an abandoned session alive.
        if (request.method === "POST") use(sessionId, session, settled);
        return session.transport.handleRequest(request, withBody(parsedBody));
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
      if (!makeRoom()) {
        return jsonRpcError(
          503,
          -32000,
          `Too many sessions: all ${options.maxSessions} are in use. Try again later.`,
        );
      }
      opening++;
      let opened = false;
      const transport: WebStandardStreamableHTTPServerTransport =
        new WebStandardStreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            opened = true;
            opening--;
            const session: Session = { transport, inUse: 0, timer: undefined };
            sessions.set(id, session);
            use(id, session, settled);
          },
          onsessionclosed: (id) => {
            const session = sessions.get(id);
            if (session?.transport === transport) {
              clearTimeout(session.timer);
              sessions.delete(id);
            }
          },
        });
      transport.onclose = () => {
        const id = transport.sessionId;
        const session = id === undefined ? undefined : sessions.get(id);
        if (id !== undefined && session?.transport === transport) {
          clearTimeout(session.timer);
          sessions.delete(id);
        }
      };
      try {
        await createServer().connect(transport);
        return await transport.handleRequest(request, withBody(parsedBody));
      } finally {
        if (!opened) opening--;
      }
    },
    async close() {
      const open = [...sessions.values()];
      sessions.clear();
      for (const session of open) clearTimeout(session.timer);
      await Promise.allSettled(open.map((session) => session.transport.close()));
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
