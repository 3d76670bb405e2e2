import type { BeforeToolCallResult, ToolBatchCall, ToolCallStatus } from "@lattice/scheduler";
import type { ToolKind, ToolResult } from "@lattice/tools";

/** What `onToolResult` receives for each finished call. */
export interface ToolResultHookEvent {
  /** The tool_use id the result answers. */
  readonly toolUseId: string;
  /** The tool's name as the model called it. */
  readonly toolName: string;
  /** The tool's kind (`"tool"`, `"agent_tool"`, `"builtin"`, `"mcp"`). */
  readonly kind: ToolKind;
  /** The validated input (or the raw input when it was invalid or never ran). */
  readonly input: unknown;
  /** The normalised result sent back to the model. */
  readonly result: ToolResult;
  /** How the call ended: `"completed"`, `"failed"`, `"invalid_input"`, `"refused"`, ... */
  readonly status: ToolCallStatus;
  /** The handler's wall time, or 0 when it never ran. */
  readonly durationMs: number;
  /** The query's session id. */
  readonly sessionId: string;
}

/**
 * What `beforeToolCall` may return: nothing (the call runs), `{ deny: "reason" }`, or
 * `{ input }` to replace the input.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: a hook that returns nothing lets the call run.
export type BeforeToolCallHookResult = BeforeToolCallResult | void;

/**
 * Host callbacks around tool calls. Checked strictly like every options object.
 *
 * What a throwing hook does:
 * - `beforeToolCall` throws (or rejects): that one call does not run; it gets an `is_error`
 *   result naming the hook failure, and the run goes on.
 * - `onToolResult` throws (or rejects): every result of the batch is still recorded in the
 *   history, then the run ends with `subtype: "error_during_execution"` and the hook's error
 *   in `errors`. An observer that lost a result must not be silently skipped.
 */
export interface AgentHooks {
  /**
   * Called once per tool call after the batch policy allowed the batch and before planning.
   * Return `{ deny: "reason" }` to answer the call with an `is_error` result instead of running
   * it, `{ input }` to replace its input (validated again with the tool's schema), or nothing.
   */
  readonly beforeToolCall?: (
    call: ToolBatchCall,
  ) => BeforeToolCallHookResult | Promise<BeforeToolCallHookResult>;
  /**
   * Called for every tool result, in tool_use order, after the whole batch finished; also for
   * batches whose results end the run (T9). Awaited before the next model call.
   */
  readonly onToolResult?: (event: ToolResultHookEvent) => void | Promise<void>;
}

/** The keys {@link AgentHooks} accepts. */
export const AGENT_HOOK_KEYS: ReadonlySet<string> = new Set(["beforeToolCall", "onToolResult"]);
