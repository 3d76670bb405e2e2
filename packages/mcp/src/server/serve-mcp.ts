import type { Agent } from "@lattice/core";
import { CallTracker } from "./call-tracker.js";
import { serveHttp } from "./serve-http.js";
import {
  checkServeMcpArguments,
  type ServeMcpDefinition,
  type ServeMcpHandle,
  type ServeMcpHttpHandle,
  type ServeMcpHttpOptions,
  type ServeMcpOptions,
  type ServeMcpStdioOptions,
} from "./serve-mcp-options.js";
import { serveStdioTransport } from "./serve-stdio-transport.js";
import { servedCatalogue } from "./served-catalogue.js";

/**
 * Serves Lattice tools and agents over MCP (M11–M14), over stdio or Streamable HTTP, for any
 * MCP client: Claude Desktop, an IDE, another agent SDK, or a Lattice agent's `mcpServer`.
 *
 * - Each tool is the MCP tool of its name: its JSON Schema is the `inputSchema`; a tool whose
 *   `isConcurrencySafe` is constant true (`() => true`) is annotated `readOnlyHint: true`;
 *   inputs are validated by Lattice, and an invalid one is answered `isError` with the text a
 *   model would read; a handler's throw or `isError` becomes an `isError` result; its
 *   `structuredResult` becomes `structuredContent`. A call that `needsApproval` says needs a
 *   person is refused (`isError`): nobody can approve it over MCP.
 * - Each agent is one MCP tool `{ prompt }` named after it: the run's final text comes back,
 *   its `structuredResult` as `structuredContent`; cancelling the MCP request aborts the run.
 * - HTTP binds `127.0.0.1` unless `host` says otherwise and refuses requests whose `Host` or
 *   `Origin` header is not allowed (DNS rebinding, M13). It answers 2026-07-28 clients, and
 *   2025-era ones in sessions (`Mcp-Session-Id`), so their cancellations reach the call.
 * - `close()` refuses new calls, waits for the calls in flight to be answered, then stops (M14).
 *
 * @example
 * ```ts
 * const server = await serveMcp(
 *   { name: "docs", version: "1.0.0", tools: [search, calculator], agents: [researcher] },
 *   { transport: "http", port: 3000 },
 * );
 * console.log(server.url); // http://127.0.0.1:3000/mcp
 * await server.close();
 * ```
 *
 * @param definition - {@link ServeMcpDefinition}: `name`, `version`, `tools`, `agents`.
 * @param options - {@link ServeMcpOptions}: `{ transport: "stdio" }` or
 *   `{ transport: "http", port, host?, path?, allowedHosts?, allowedOrigins? }`.
 * @returns A handle to close the server; over HTTP with the endpoint's `url`.
 * @throws `UnknownOptionError` for an unknown key in either argument; `InvalidOptionError` for
 *   a bad value, a `tools` entry that is not a Lattice tool, an agent without a name or a
 *   definition that cannot run on its own, or two tools with one name.
 * @throws `LatticeError` `mcp_listen_failed` (as a rejection) when the HTTP port is taken.
 */
export async function serveMcp(
  definition: ServeMcpDefinition,
  options: ServeMcpHttpOptions,
): Promise<ServeMcpHttpHandle>;
export async function serveMcp(
  definition: ServeMcpDefinition,
  options: ServeMcpStdioOptions,
): Promise<ServeMcpHandle>;
export async function serveMcp(
  definition: ServeMcpDefinition,
  options: ServeMcpOptions,
): Promise<ServeMcpHandle>;
export async function serveMcp(
  definition: ServeMcpDefinition,
  options: ServeMcpOptions,
): Promise<ServeMcpHandle | ServeMcpHttpHandle> {
  checkServeMcpArguments(definition, options);
  const catalogue = servedCatalogue(definition);
  const tracker = new CallTracker();
  const toolNames = Object.freeze([...catalogue.tools.keys()]);
  let closing: Promise<void> | undefined;
  let resolveClosed: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  const stopWith = (stopTransport: () => Promise<void>) => (): Promise<void> => {
    closing ??= (async () => {
      try {
        await stopTransport();
      } finally {
        await releaseAgents(catalogue.ownedAgents);
        resolveClosed();
      }
    })();
    return closing;
  };

  if (options.transport === "http") {
    let endpoint: Awaited<ReturnType<typeof serveHttp>>;
    try {
      endpoint = await serveHttp(catalogue, tracker, options);
    } catch (error) {
      await releaseAgents(catalogue.ownedAgents);
      throw error;
    }
    return Object.freeze({
      transport: "http" as const,
      url: endpoint.url,
      port: endpoint.port,
      toolNames,
      closed,
      close: stopWith(() => endpoint.close()),
    });
  }
  const endpoint = serveStdioTransport(catalogue, tracker);
  const close = stopWith(() => endpoint.close());
  void endpoint.disconnected.then(close);
  return Object.freeze({ transport: "stdio" as const, toolNames, closed, close });
}

/** Closes the agents `serveMcp` made from definitions (their tool sources end with them). */
async function releaseAgents(agents: readonly Agent[]): Promise<void> {
  await Promise.allSettled(agents.map((agent) => agent.close()));
}
