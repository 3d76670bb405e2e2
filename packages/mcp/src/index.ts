// ── Client: an MCP server's tools in a Lattice agent (M1–M10) ──────────────────────────
export { McpConnectionError, McpToolCallError } from "./client/errors.js";
export type { McpToolInput } from "./client/json-schema-validator.js";
export { type McpToolSource, mcpServer } from "./client/mcp-server.js";
export type {
  McpConcurrencySafe,
  McpHttpServerOptions,
  McpNeedsApproval,
  McpProgressEvent,
  McpServerCommonOptions,
  McpServerOptions,
  McpStdioServerOptions,
  McpToolAnnotations,
  McpToolInfo,
  McpWarning,
} from "./client/mcp-server-options.js";

// ── Server: Lattice tools and agents served over MCP (M11–M14) ─────────────────────────
export {
  type ServedAgentInput,
  type ServeMcpAgent,
  type ServeMcpDefinition,
  type ServeMcpHandle,
  type ServeMcpHttpHandle,
  type ServeMcpHttpOptions,
  type ServeMcpOptions,
  type ServeMcpStdioOptions,
  serveMcp,
} from "./server/index.js";
// ── end server exports ──────────────────────────────────────────────────────────────────
