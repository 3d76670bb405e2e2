import { ProtocolError, ProtocolErrorCode, Server } from "@modelcontextprotocol/server";
import { callServedTool } from "./call-served-tool.js";
import type { CallTracker } from "./call-tracker.js";
import type { ServedCatalogue } from "./served-catalogue.js";

/**
 * Makes one MCP server instance for a catalogue: the SDK's low-level `Server` with
 * `tools/list` and `tools/call`. The serving entries of the SDK make one per connection
 * (stdio) or per request (HTTP); they all share the catalogue and the tracker.
 *
 * The low-level `Server` is used rather than `McpServer` because Lattice already has each
 * tool's JSON Schema and validates inputs itself, with the text its agents' models read.
 *
 * @param catalogue - What to serve.
 * @param tracker - Counts calls in flight; refuses calls once the server is closing.
 */
export function createMcpServer(catalogue: ServedCatalogue, tracker: CallTracker): Server {
  const server = new Server(
    { name: catalogue.name, version: catalogue.version },
    {
      capabilities: { tools: { listChanged: false } },
      ...(catalogue.instructions !== undefined ? { instructions: catalogue.instructions } : {}),
    },
  );
  const listings = [...catalogue.tools.values()].map((tool) => tool.listing);
  server.setRequestHandler("tools/list", () => ({ tools: listings }));
  server.setRequestHandler("tools/call", async (request, ctx) => {
    const { name } = request.params;
    const served = catalogue.tools.get(name);
    if (served === undefined) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `Unknown tool "${name}" on MCP server "${catalogue.name}". Its tools: ${[...catalogue.tools.keys()].join(", ") || "none"}.`,
      );
    }
    if (tracker.closing) {
      return {
        content: [
          {
            type: "text",
            text: `MCP server "${catalogue.name}" is shutting down; the call to "${name}" was not run. Call it again once the server is back.`,
          },
        ],
        isError: true,
      };
    }
    const result = await tracker.track(() =>
      callServedTool(served.definition, request.params.arguments ?? {}, ctx.mcpReq.signal),
    );
    return server.projectCallToolResult(result, undefined);
  });
  return server;
}
