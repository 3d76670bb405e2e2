import { LatticeError } from "@lattice/tools";

/**
 * An MCP server could not be reached or used: the command would not start, the process
 * exited during the handshake, the URL refused the connection, or the server's tool list is
 * unusable (two tools that end with one name, M4). `tools()` rejects with it, and an agent
 * ends the run with `error_during_execution` and this message. Code: `"mcp_connection_failed"`.
 */
export class McpConnectionError extends LatticeError {
  /** The server's `name` as given to `mcpServer()`. */
  readonly serverName: string;
  /** The command line of a stdio server (`command` and `args`), when there is one. */
  readonly command?: string;
  /** The stdio server's exit code, when it exited; `null` when a signal ended it. */
  readonly exitCode?: number | null;
  /** The last lines the stdio server wrote to stderr (at most 2,000 characters). */
  readonly stderrTail?: string;

  /**
   * @param serverName - The server's name.
   * @param message - What happened and what to do next.
   * @param details - The command, exit code and stderr tail of a stdio server; `cause`.
   */
  constructor(
    serverName: string,
    message: string,
    details: {
      readonly command?: string;
      readonly exitCode?: number | null;
      readonly stderrTail?: string;
      readonly cause?: unknown;
    } = {},
  ) {
    super(
      "mcp_connection_failed",
      message,
      details.cause !== undefined ? { cause: details.cause } : undefined,
    );
    this.name = "McpConnectionError";
    this.serverName = serverName;
    if (details.command !== undefined) this.command = details.command;
    if (details.exitCode !== undefined) this.exitCode = details.exitCode;
    if (details.stderrTail !== undefined) this.stderrTail = details.stderrTail;
  }
}

/**
 * A call to an MCP tool failed outside the tool: a JSON-RPC error, a transport failure, a
 * server that exited mid-call, a timeout. The tool's handler throws it, so the model reads an
 * `is_error` tool_result with this message (which names the server, the tool and the cause)
 * and the run goes on (M8). Code: `"mcp_call_failed"`.
 */
export class McpToolCallError extends LatticeError {
  /** The server's `name` as given to `mcpServer()`. */
  readonly serverName: string;
  /** The tool's name on the MCP server (before prefixing). */
  readonly toolName: string;
  /** The JSON-RPC error code, when the server answered with a JSON-RPC error. */
  readonly rpcCode?: number;

  /**
   * @param serverName - The server's name.
   * @param toolName - The tool's name on the server.
   * @param message - What happened, for the model and for logs.
   * @param details - The JSON-RPC error code, the `cause`.
   */
  constructor(
    serverName: string,
    toolName: string,
    message: string,
    details: { readonly rpcCode?: number; readonly cause?: unknown } = {},
  ) {
    super(
      "mcp_call_failed",
      message,
      details.cause !== undefined ? { cause: details.cause } : undefined,
    );
    this.name = "McpToolCallError";
    this.serverName = serverName;
    this.toolName = toolName;
    if (details.rpcCode !== undefined) this.rpcCode = details.rpcCode;
  }
}
