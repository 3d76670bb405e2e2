#!/usr/bin/env node
/**
 * `lattice-mcp serve <module>`: serves the tools and agents a module exports over MCP, without
 * writing a server. Stdio by default; `--http --port N` for Streamable HTTP. See
 * `loadToolModule` for what the module must export. Diagnostics go to stderr (stdout carries
 * the MCP messages over stdio).
 *
 * @module
 */
import { basename, extname } from "node:path";
import { parseArgs } from "node:util";
import { loadToolModule } from "../server/load-tool-module.js";
import { serveMcp } from "../server/serve-mcp.js";
import type { ServeMcpHandle } from "../server/serve-mcp-options.js";

const USAGE = `Usage: lattice-mcp serve <module> [options]

Serves the tools and agents a JavaScript module exports over MCP (stdio by default).
The module's default export (a tool, an agent, or an array of them) is served; without one,
every named export that is a tool or an agent is.

Options:
  --http                    Serve Streamable HTTP instead of stdio
  --port <n>                HTTP port (default 0: a free port, printed on stderr)
  --host <address>          HTTP address to bind (default 127.0.0.1)
  --path <path>             HTTP endpoint path (default /mcp)
  --allowed-host <name>     A Host header to accept (repeatable; default: localhost names)
  --allowed-origin <name>   An Origin hostname to accept (repeatable; default: as hosts)
  --max-sessions <n>        HTTP: most 2025-era sessions kept; the one idle longest goes
                            first (default 1000)
  --session-idle-timeout <ms>
                            HTTP: a session without a POST for this long is closed
                            (default 1800000, 30 minutes)
  --name <name>             Server name (default: the module's file name)
  --server-version <v>      Server version (default 0.0.0)
  -h, --help                Show this help

Examples:
  lattice-mcp serve ./dist/tools.js
  lattice-mcp serve ./dist/tools.js --http --port 3000
  node --import tsx ./node_modules/@lattice/mcp/dist/bin/lattice-mcp.js serve ./src/tools.ts`;

/** Reports a failure on stderr and ends the process. */
function fail(message: string, code: number): never {
  process.stderr.write(`${message}\n`);
  process.exit(code);
}

async function main(argv: readonly string[]): Promise<void> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    fail(`lattice-mcp: ${error instanceof Error ? error.message : String(error)}\n\n${USAGE}`, 2);
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stderr.write(`${USAGE}\n`);
    return;
  }
  const [command, specifier, ...extra] = positionals;
  if (command !== "serve" || specifier === undefined || extra.length > 0) {
    fail(`lattice-mcp: expected "serve <module>".\n\n${USAGE}`, 2);
  }
  const port = values.port === undefined ? 0 : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    fail(`lattice-mcp: --port must be an integer from 0 to 65535, received "${values.port}".`, 2);
  }
  const maxSessions = values["max-sessions"];
  if (maxSessions !== undefined && !/^[1-9]\d*$/.test(maxSessions)) {
    fail(`lattice-mcp: --max-sessions must be a whole number >= 1, received "${maxSessions}".`, 2);
  }
  const idle = values["session-idle-timeout"];
  if (idle !== undefined && !/^[1-9]\d*$/.test(idle)) {
    fail(
      `lattice-mcp: --session-idle-timeout must be a number of milliseconds >= 1, received "${idle}".`,
      2,
    );
  }

  let handle: ServeMcpHandle;
  try {
    const { tools, agents } = await loadToolModule(specifier);
    const definition = {
      name: values.name ?? basename(specifier, extname(specifier)),
      version: values["server-version"] ?? "0.0.0",
      tools,
      agents,
    };
    handle = values.http
      ? await serveMcp(definition, {
          transport: "http",
          port,
          ...(values.host !== undefined ? { host: values.host } : {}),
          ...(values.path !== undefined ? { path: values.path } : {}),
          ...(values["allowed-host"] !== undefined ? { allowedHosts: values["allowed-host"] } : {}),
          ...(values["allowed-origin"] !== undefined
            ? { allowedOrigins: values["allowed-origin"] }
            : {}),
          ...(maxSessions !== undefined ? { maxSessions: Number(maxSessions) } : {}),
          ...(idle !== undefined ? { sessionIdleTimeoutMs: Number(idle) } : {}),
        })
      : await serveMcp(definition, { transport: "stdio" });
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), 1);
  }

  const where = "url" in handle ? `at ${handle.url}` : "over stdio";
  process.stderr.write(
    `lattice-mcp: serving ${handle.toolNames.length} tool(s) ${where}: ${handle.toolNames.join(", ")}\n`,
  );
  const stop = () => void handle.close();
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  await handle.closed;
  process.exit(0);
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      http: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      path: { type: "string" },
      "allowed-host": { type: "string", multiple: true },
      "allowed-origin": { type: "string", multiple: true },
      "max-sessions": { type: "string" },
      "session-idle-timeout": { type: "string" },
      name: { type: "string" },
      "server-version": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}

await main(process.argv.slice(2));
