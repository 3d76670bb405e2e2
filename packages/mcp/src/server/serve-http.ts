import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as NodeReadableStream } from "node:stream/web";
import { LatticeError } from "@lattice/tools";
import {
  createMcpHandler,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  hostHeaderValidationResponse,
  isLegacyRequest,
  localhostAllowedHostnames,
  originValidationResponse,
} from "@modelcontextprotocol/server";
import type { CallTracker } from "./call-tracker.js";
import { createMcpServer } from "./create-mcp-server.js";
import {
  createLegacyHttpSessions,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_SESSION_IDLE_TIMEOUT_MS,
} from "./legacy-http-sessions.js";
import type { ServeMcpHttpOptions } from "./serve-mcp-options.js";
import type { ServedCatalogue } from "./served-catalogue.js";

/** A listening Streamable HTTP endpoint. */
export interface HttpEndpoint {
  /** The endpoint's URL. */
  readonly url: string;
  /** The port listened on. */
  readonly port: number;
  /** Waits for calls in flight, ends open event streams and stops listening. */
  close(): Promise<void>;
}

/** One HTTP request being served. */
interface Exchange {
  /** Settles when the response has been written or the connection dropped. */
  readonly done: Promise<void>;
  /** The response being written. */
  readonly res: ServerResponse;
  /** Aborts the request: its call, if any, is cancelled. */
  readonly controller: AbortController;
  /**
   * `reading` the request body, `serving` it, or `listening`: a subscription stream, which
   * stays open until the client or `close()` ends it.
   */
  state: "reading" | "serving" | "listening";
}

const WILDCARD_HOSTS = new Set(["0.0.0.0", "::", ""]);

/**
 * Serves a catalogue over Streamable HTTP on `node:http` (M11, M13, M14): 2026-07-28 requests
 * through the SDK's `createMcpHandler` (at most `maxSessions` `subscriptions/listen` streams
 * open at once), 2025-era requests through sessions, at most `maxSessions` of them, each
 * closed after `sessionIdleTimeoutMs` without a POST (see `createLegacyHttpSessions`, H23),
 * told apart by the SDK's `isLegacyRequest`.
 *
 * Every request passes the SDK's `Host` and `Origin` checks first (403 otherwise), then must
 * use `path` (404 otherwise). A request whose client goes away is aborted, which cancels its
 * call. While closing, new requests are answered 503.
 *
 * @param catalogue - What to serve.
 * @param tracker - The server's calls in flight.
 * @param options - Checked HTTP options.
 * @throws `LatticeError` `mcp_listen_failed` when the port cannot be listened on.
 */
export async function serveHttp(
  catalogue: ServedCatalogue,
  tracker: CallTracker,
  options: ServeMcpHttpOptions,
): Promise<HttpEndpoint> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const allowedHosts = [...(options.allowedHosts ?? defaultAllowedHosts(host))];
  const allowedOrigins = [...(options.allowedOrigins ?? allowedHosts)];
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  // H23: 2026-07-28 clients hold no session, but each `subscriptions/listen` stream stays open;
  // the SDK refuses one past `maxSubscriptions` ("Subscription limit reached").
  const modern = createMcpHandler(() => createMcpServer(catalogue, tracker), {
    legacy: "reject",
    maxSubscriptions: maxSessions,
  });
  const legacy = createLegacyHttpSessions(() => createMcpServer(catalogue, tracker), {
    maxSessions,
    idleTimeoutMs: options.sessionIdleTimeoutMs ?? DEFAULT_SESSION_IDLE_TIMEOUT_MS,
  });
  const exchanges = new Set<Exchange>();
  let base = "http://127.0.0.1";

  async function serve(req: IncomingMessage, res: ServerResponse, exchange: Exchange) {
    res.once("close", () => {
      if (!res.writableFinished) exchange.controller.abort();
    });
    const url = new URL(req.url ?? "/", base);
    const headers = webHeaders(req);
    const head = new Request(url, { method: req.method ?? "GET", headers });
    const refused =
      hostHeaderValidationResponse(head, allowedHosts) ??
      originValidationResponse(head, allowedOrigins);
    if (refused !== undefined) return writeResponse(refused, res);
    if (url.pathname !== path) {
      return writeResponse(
        jsonRpcError(404, `Not found: this MCP server answers at ${path}.`),
        res,
      );
    }
    if (tracker.closing) {
      return writeResponse(
        jsonRpcError(503, `MCP server "${catalogue.name}" is shutting down.`),
        res,
      );
    }
    const body = await readBody(req);
    if (body === undefined) {
      return writeResponse(
        jsonRpcError(413, `Request body over ${DEFAULT_MAX_REQUEST_BODY_SIZE} bytes.`),
        res,
      );
    }
    const parsedBody = parseJson(body);
    exchange.state = opensStream(head.method, parsedBody) ? "listening" : "serving";
    const request = new Request(url, {
      method: head.method,
      headers,
      signal: exchange.controller.signal,
      ...(body.length > 0 ? { body: new Uint8Array(body) } : {}),
    });
    const response = (await isLegacyRequest(request, parsedBody))
      ? await legacy.fetch(request, parsedBody, exchange.done)
      : await modern.fetch(request, parsedBody !== undefined ? { parsedBody } : undefined);
    return writeResponse(response, res);
  }

  const server = createServer((req, res) => {
    const exchange: Exchange = {
      done: new Promise((resolve) => res.once("close", resolve)),
      controller: new AbortController(),
      state: "reading",
      res,
    };
    exchanges.add(exchange);
    void exchange.done.then(() => exchanges.delete(exchange));
    serve(req, res, exchange).catch(() => {
      if (!res.headersSent && !res.destroyed) {
        res.statusCode = 500;
        res.end();
      } else res.destroy();
    });
  });
  const port = await listen(server, options.port, host, catalogue.name);
  base = `http://${urlHost(host)}:${port}`;
  const closed = new Promise<void>((resolve) => server.once("close", resolve));

  return {
    url: `${base}${path}`,
    port,
    async close() {
      // New requests are answered 503 from here on; the calls in flight run to the end.
      await tracker.drain();
      // Their answers are on their way: let every exchange finish but the event streams
      // (open until ended) and requests whose body never arrived.
      for (const exchange of exchanges) {
        if (exchange.state === "serving") continue;
        exchange.controller.abort();
        exchange.res.destroy();
      }
      await Promise.all([...exchanges].map((exchange) => exchange.done));
      await Promise.all([modern.close(), legacy.close()]);
      // Only now: Node's close() also drops connections it deems idle, which may include
      // one whose request is still being answered.
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

/** `localhost`, `127.0.0.1`, `[::1]`, plus the bound address when it is a specific one. */
function defaultAllowedHosts(host: string): string[] {
  const names = localhostAllowedHostnames();
  if (WILDCARD_HOSTS.has(host)) return names;
  const name = urlHost(host);
  return names.includes(name) ? names : [...names, name];
}

/** A host as a URL writes it: IPv6 in brackets; a wildcard address as the loopback one. */
function urlHost(host: string): string {
  if (host === "0.0.0.0" || host === "") return "127.0.0.1";
  if (host === "::") return "[::1]";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

function listen(
  server: ReturnType<typeof createServer>,
  port: number,
  host: string,
  name: string,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const onError = (error: NodeJS.ErrnoException) => {
      reject(
        new LatticeError(
          "mcp_listen_failed",
          `serveMcp: MCP server "${name}" cannot listen on ${host}:${port} (${error.code ?? error.message}). Choose another port (0 picks a free one) or host.`,
          { cause: error },
        ),
      );
    };
    server.once("error", onError);
    server.listen(port, host, () => {
      server.off("error", onError);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** A `node:http` request's headers as web `Headers`. */
function webHeaders(req: IncomingMessage): Headers {
  const headers = new Headers();
  for (let index = 0; index + 1 < req.rawHeaders.length; index += 2) {
    headers.append(req.rawHeaders[index] as string, req.rawHeaders[index + 1] as string);
  }
  return headers;
}

/** The request body, or `undefined` when it is over the SDK's size limit. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const declared = Number(req.headers["content-length"]);
  if (declared > DEFAULT_MAX_REQUEST_BODY_SIZE) return undefined;
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > DEFAULT_MAX_REQUEST_BODY_SIZE) return undefined;
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks);
}

/** The body as JSON, or `undefined` when it is empty or not JSON. */
function parseJson(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  try {
    return JSON.parse(body.toString("utf8")) as unknown;
  } catch {
    return undefined;
  }
}

/**
 * Whether a request opens an event stream that stays open until the client or `close()` ends
 * it: a 2025-era `GET`, or a 2026-07-28 `subscriptions/listen`.
 */
function opensStream(method: string, body: unknown): boolean {
  if (method === "GET") return true;
  const messages = Array.isArray(body) ? body : [body];
  return messages.some(
    (item) =>
      item !== null &&
      typeof item === "object" &&
      (item as { method?: unknown }).method === "subscriptions/listen",
  );
}

/** Writes a web `Response` to a `node:http` response, streaming its body. */
async function writeResponse(response: Response, res: ServerResponse): Promise<void> {
  res.statusCode = response.status;
  response.headers.forEach((value, key) => {
    res.setHeader(key, value);
  });
  if (response.body === null) {
    res.end();
    return;
  }
  res.flushHeaders();
  await pipeline(Readable.fromWeb(response.body as NodeReadableStream), res);
}

function jsonRpcError(status: number, message: string): Response {
  return Response.json({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }, { status });
}
