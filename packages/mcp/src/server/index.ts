export { serveMcp } from "./serve-mcp.js";
export type {
  ServeMcpAgent,
  ServeMcpDefinition,
  ServeMcpHandle,
  ServeMcpHttpHandle,
  ServeMcpHttpOptions,
  ServeMcpOptions,
  ServeMcpStdioOptions,
} from "./serve-mcp-options.js";
export type { ServedAgentInput } from "./served-agent-tool.js";
