import type { Agent, AgentDefinition } from "@lattice/core";
import { type AnyToolDefinition, InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import type { ToolAnnotations } from "@modelcontextprotocol/server";

/**
 * An agent `serveMcp` offers as one MCP tool (M12): an `Agent` from `createAgent` (it needs a
 * `name`), or a definition from `defineAgent` that can run on its own (it names its `model` and
 * provider or credentials), which `serveMcp` turns into an agent with `createAgent`.
 */
export type ServeMcpAgent = Agent | AgentDefinition;

/**
 * What `serveMcp` serves (M11, M12): the server's name and version, as MCP clients see them,
 * and its tools and agents. Checked strictly.
 */
export interface ServeMcpDefinition {
  /** The server's name, sent to clients in `serverInfo`. */
  readonly name: string;
  /** The server's version, sent to clients in `serverInfo`. */
  readonly version: string;
  /** Lattice tools to serve, each as the MCP tool of the same name. */
  readonly tools?: readonly AnyToolDefinition[];
  /** Agents to serve, each as one MCP tool `{ prompt }` named after the agent. */
  readonly agents?: readonly ServeMcpAgent[];
  /** Instructions for the client's model about the server as a whole (MCP `instructions`). */
  readonly instructions?: string;
  /**
   * MCP annotations per tool name, merged over the ones `serveMcp` derives (`readOnlyHint: true`
   * for a tool whose `isConcurrencySafe` is constant true). Use it to mark a tool with an
   * input-dependent rule as read-only, or to add `title`, `idempotentHint`, `openWorldHint`.
   * Every key must name a served tool.
   */
  readonly annotations?: { readonly [toolName: string]: ToolAnnotations };
}

/** `serveMcp` over the process's stdin and stdout (M11). */
export interface ServeMcpStdioOptions {
  readonly transport: "stdio";
}

/** `serveMcp` over Streamable HTTP (M11, M13). */
export interface ServeMcpHttpOptions {
  readonly transport: "http";
  /** The TCP port to listen on; `0` picks a free one (read it from the handle's `url`). */
  readonly port: number;
  /**
   * The address to bind. Default `"127.0.0.1"`: only this machine can connect (M13). Bind
   * `"0.0.0.0"` or a LAN address only behind authentication you trust.
   */
  readonly host?: string;
  /** The endpoint's path. Default `"/mcp"`; other paths answer 404. */
  readonly path?: string;
  /**
   * Hostnames a request's `Host` header may name (no port; IPv6 in brackets). Default:
   * `localhost`, `127.0.0.1`, `[::1]`, plus `host` when it is a specific address. Any other
   * `Host` is refused with 403: the DNS-rebinding defence (M13).
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Hostnames a browser's `Origin` header may name. Default: the same as `allowedHosts`.
   * Requests without `Origin` (every non-browser client) pass; any other origin, and the
   * opaque `null` origin, are refused with 403 (M13).
   */
  readonly allowedOrigins?: readonly string[];
  /**
   * The most 2025-era sessions (`Mcp-Session-Id`) open at once (H23). At the cap, a new
   * session closes the one idle longest; a session with a POST in flight is never closed for
   * it, and when every one has, a new session is refused with 503. The standing `GET` event
   * stream a client keeps open does not make its session busy; it is closed with the session.
   * A request in a closed session is answered 404 "Session not found" (the client then
   * initializes again). Default 1,000. 2026-07-28 clients hold no session; at most this many
   * of their `subscriptions/listen` streams are open at once, past it one is refused with the
   * JSON-RPC error "Subscription limit reached" (the SDK's `maxSubscriptions`).
   */
  readonly maxSessions?: number;
  /**
   * How long a 2025-era session may go without a POST before it is closed, with its event
   * stream, in milliseconds (H23). Default 1,800,000 (30 minutes); at most 2,147,483,647.
   */
  readonly sessionIdleTimeoutMs?: number;
}

/** How `serveMcp` serves: `{ transport: "stdio" }` or `{ transport: "http", port, ... }`. */
export type ServeMcpOptions = ServeMcpStdioOptions | ServeMcpHttpOptions;

/** A running MCP server, as `serveMcp` returns it. */
export interface ServeMcpHandle {
  /** The transport the server speaks. */
  readonly transport: "stdio" | "http";
  /** The names of the MCP tools served, tools first, then agents. */
  readonly toolNames: readonly string[];
  /**
   * Stops the server (M14): new calls are refused, calls in flight run to the end and are
   * answered, then the transport closes. Resolves when everything has settled. Idempotent:
   * every call returns the same promise.
   */
  close(): Promise<void>;
  /**
   * Settles when the server has stopped: after `close()`, or (stdio) once the client closed
   * the server's stdin and the calls in flight have settled.
   */
  readonly closed: Promise<void>;
}

/** A running Streamable HTTP server: a {@link ServeMcpHandle} with its address. */
export interface ServeMcpHttpHandle extends ServeMcpHandle {
  readonly transport: "http";
  /** The endpoint's URL, for example `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
  /** The port the server listens on (the one chosen when `port` was `0`). */
  readonly port: number;
}

const DEFINITION_KEYS = ["name", "version", "tools", "agents", "instructions", "annotations"];
const STDIO_KEYS = ["transport"];
const HTTP_KEYS = [
  "transport",
  "port",
  "host",
  "path",
  "allowedHosts",
  "allowedOrigins",
  "maxSessions",
  "sessionIdleTimeoutMs",
];
/** The longest delay a Node.js timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;
const DEFINITION_PREFIX = "serveMcp(definition):";
const OPTIONS_PREFIX = "serveMcp(options):";

/**
 * Checks `serveMcp`'s arguments strictly. Tools and agents are checked where they are
 * turned into MCP tools.
 *
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a bad value.
 */
export function checkServeMcpArguments(definition: unknown, options: unknown): void {
  if (definition === undefined) {
    throw new InvalidOptionError(
      DEFINITION_PREFIX,
      "definition",
      'is required: pass { name, version, tools, agents? }, for example serveMcp({ name: "my-tools", version: "1.0.0", tools: [search] }, { transport: "stdio" }).',
    );
  }
  assertKnownOptions(definition, DEFINITION_KEYS, DEFINITION_PREFIX);
  const d = definition as Record<string, unknown>;
  requireString(d.name, "name", DEFINITION_PREFIX);
  requireString(d.version, "version", DEFINITION_PREFIX);
  if (d.instructions !== undefined && typeof d.instructions !== "string") {
    throw new InvalidOptionError(
      DEFINITION_PREFIX,
      "instructions",
      `must be a string, received ${describeValue(d.instructions)}.`,
    );
  }
  for (const key of ["tools", "agents"] as const) {
    if (d[key] !== undefined && !Array.isArray(d[key])) {
      throw new InvalidOptionError(
        DEFINITION_PREFIX,
        key,
        `must be an array, received ${describeValue(d[key])}.`,
      );
    }
  }
  if (
    d.annotations !== undefined &&
    (d.annotations === null || typeof d.annotations !== "object" || Array.isArray(d.annotations))
  ) {
    throw new InvalidOptionError(
      DEFINITION_PREFIX,
      "annotations",
      `must be an object keyed by tool name, received ${describeValue(d.annotations)}.`,
    );
  }
  checkTransportOptions(options);
}

function checkTransportOptions(options: unknown): void {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "options",
      `must be { transport: "stdio" } or { transport: "http", port }, received ${describeValue(options)}.`,
    );
  }
  const transport = (options as { transport?: unknown }).transport;
  if (transport === "stdio") {
    assertKnownOptions(options, STDIO_KEYS, OPTIONS_PREFIX);
    return;
  }
  if (transport !== "http") {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "transport",
      `must be "stdio" or "http", received ${describeValue(transport)}.`,
    );
  }
  assertKnownOptions(options, HTTP_KEYS, OPTIONS_PREFIX);
  const o = options as Record<string, unknown>;
  if (typeof o.port !== "number" || !Number.isInteger(o.port) || o.port < 0 || o.port > 65535) {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "port",
      `must be an integer from 0 to 65535 (0 picks a free port), received ${describeValue(o.port)}.`,
    );
  }
  if (o.host !== undefined) requireString(o.host, "host", OPTIONS_PREFIX);
  if (o.path !== undefined && (typeof o.path !== "string" || !o.path.startsWith("/"))) {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "path",
      `must be a string starting with "/", for example "/mcp", received ${describeValue(o.path)}.`,
    );
  }
  if (
    o.maxSessions !== undefined &&
    (typeof o.maxSessions !== "number" || !Number.isSafeInteger(o.maxSessions) || o.maxSessions < 1)
  ) {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "maxSessions",
      `must be a whole number >= 1, for example 1000, received ${describeValue(o.maxSessions)}.`,
    );
  }
  const idle = o.sessionIdleTimeoutMs;
  if (
    idle !== undefined &&
    (typeof idle !== "number" || !Number.isFinite(idle) || idle <= 0 || idle > MAX_TIMER_MS)
  ) {
    throw new InvalidOptionError(
      OPTIONS_PREFIX,
      "sessionIdleTimeoutMs",
      `must be a number of milliseconds > 0 and at most ${MAX_TIMER_MS}, for example 1800000 (30 minutes), received ${describeValue(idle)}.`,
    );
  }
  for (const key of ["allowedHosts", "allowedOrigins"] as const) {
    const list = o[key];
    if (
      list !== undefined &&
      (!Array.isArray(list) ||
        list.length === 0 ||
        list.some((item) => typeof item !== "string" || item === ""))
    ) {
      throw new InvalidOptionError(
        OPTIONS_PREFIX,
        key,
        `must be a non-empty array of hostnames (no scheme, no port), for example ["localhost", "mcp.example.com"], received ${describeValue(list)}.`,
      );
    }
  }
}

function requireString(value: unknown, key: string, prefix: string): void {
  if (typeof value !== "string" || value === "") {
    throw new InvalidOptionError(
      prefix,
      key,
      `must be a non-empty string, received ${describeValue(value)}.`,
    );
  }
}
