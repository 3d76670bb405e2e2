import type {
  BeforeToolCallContext,
  BeforeToolCallResult,
  ToolBatchCall,
  ToolCallStatus,
} from "@lattice/scheduler";
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
  /** The conversation the run belongs to (R7). */
  readonly sessionId: string;
  /** The run. */
  readonly runId: string;
  /**
   * The query's signal. A hook that waits on something (a database, a service) should stop
   * when it aborts: the run does not wait for a pending `onToolResult` once the query is
   * aborted (T22).
   */
  readonly signal: AbortSignal;
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
 *
 * On abort, a hook still pending is not waited for: the query rejects with an `AbortError` at
 * once, even if the hook's promise never settles (T22). Both hooks receive the query's signal
 * (`beforeToolCall(call, { signal })`, `event.signal`) so they can stop their own work.
 */
export interface AgentHooks {
  /**
   * Called once per tool call after the batch policy allowed the batch and before planning.
   * Return `{ deny: "reason" }` to answer the call with an `is_error` result instead of running
   * it, `{ input }` to replace its input (validated again with the tool's schema), or nothing.
   * `context.signal` is the query's signal; if it aborts while the hook is pending, the calls
   * of the batch that have not started are cancelled without waiting for the hook.
   */
  readonly beforeToolCall?: (
    call: ToolBatchCall,
    context: BeforeToolCallContext,
  ) => BeforeToolCallHookResult | Promise<BeforeToolCallHookResult>;
  /**
   * Called for every tool result, in tool_use order, after the whole batch finished; also for
   * batches whose results end the run (T9). Awaited before the next model call, unless the
   * query's signal (`event.signal`) aborts first.
   */
  readonly onToolResult?: (event: ToolResultHookEvent) => void | Promise<void>;
}

/** The keys {@link AgentHooks} accepts. */
export const AGENT_HOOK_KEYS: ReadonlySet<string> = new Set(["beforeToolCall", "onToolResult"]);
