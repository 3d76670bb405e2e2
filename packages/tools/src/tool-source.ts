import type { AnyToolDefinition } from "./tool-definition.js";

/**
 * Tools that arrive asynchronously and have a lifetime: an MCP server's tools, a plugin
 * registry, a remote catalogue. A source goes into an agent's `tools` list next to ordinary
 * tools; the agent asks it for its current tools before the first model call of every run
 * and before every later model call, so a source whose list changed (MCP's
 * `notifications/tools/list_changed`) is seen at the next turn.
 *
 * A source connects lazily (on the first `tools()` call), caches its list, and returns the
 * same array while nothing changed (the agent then reuses what it derived from it). One
 * source object may serve many agents and runs at once; it is released by `close()`, which
 * `agent.close()` calls for every source of the agent.
 */
export interface ToolSource {
  /** The discriminant that tells a source from a tool definition in `tools`. */
  readonly kind: "tool_source";
  /** The source's name, for messages: `mcp server "fs"`. */
  readonly name: string;
  /**
   * The source's current tools: connects if needed. Throws (rejects) when the source cannot
   * provide them; the run then ends with `error_during_execution` and that error's message,
   * which should name the source and the cause.
   *
   * @param signal - The run's signal: aborting it may stop a connection in progress.
   */
  tools(signal: AbortSignal): Promise<readonly AnyToolDefinition[]>;
  /** Releases the source: closes connections, ends child processes. Safe to call twice. */
  close(): Promise<void>;
}

/** Whether a `tools` entry is a {@link ToolSource} rather than a tool definition. */
export function isToolSource(value: unknown): value is ToolSource {
  return (
    value !== null &&
    typeof value === "object" &&
    (value as { kind?: unknown }).kind === "tool_source" &&
    typeof (value as { tools?: unknown }).tools === "function" &&
    typeof (value as { close?: unknown }).close === "function"
  );
}
