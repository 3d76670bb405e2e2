import type { ToolResultContentBlock } from "./content.js";
import type { StandardSchemaV1 } from "./standard-schema.js";

/**
 * What kind of tool made a call, as the batch policy sees it (T23): `"tool"` for `tool()`,
 * `"agent_tool"` for `agentTool()` and `delegateTool()`, `"builtin"` for Read, LS, Glob, Grep,
 * Write, Edit and Bash, `"mcp"` for tools from an MCP server.
 */
export type ToolKind = "tool" | "agent_tool" | "builtin" | "mcp";

/** A JSON Schema document, as a plain object. */
export type JsonSchema = { [keyword: string]: unknown };

/** The JSON Schema of a tool's input: always an object schema (draft 2020-12, no `$schema`). */
export interface ToolInputSchema extends JsonSchema {
  readonly type: "object";
  readonly properties?: Record<string, JsonSchema>;
  readonly required?: readonly string[];
}

/**
 * The run a tool call belongs to, when a Lattice agent made it: ids for logs, metrics and
 * idempotency keys. Present in every call an agent makes; absent when you call a handler
 * yourself or run a batch with `runToolBatch` directly.
 */
export interface ToolRunInfo {
  /** The run (one `query()`, `run()` or `resume()`; a resumed run keeps its id). */
  readonly runId: string;
  /** The conversation the run belongs to (its `sessionId`, or a fresh id for a one-off run). */
  readonly sessionId: string;
  /** The running agent's name (`"agent"` when it has none). */
  readonly agentName: string;
  /** How deep the run is nested in agent tools: 0 at top level. */
  readonly depth: number;
}

/**
 * What a handler receives besides its input (T7).
 *
 * @typeParam TContext - The type of the caller's `context` (R9): annotate a handler's second
 *   parameter as `ToolContext<MyContext>` to read it typed.
 */
export interface ToolContext<TContext = unknown> {
  /** This query's AbortSignal: aborted when the user cancels the run (T22). Pass it on to I/O. */
  readonly signal: AbortSignal;
  /** The id of the tool_use block this call answers, for example `"toolu_01A..."`. */
  readonly toolUseId: string;
  /** The name of the tool being called. */
  readonly toolName: string;
  /**
   * The value the caller passed as `query(prompt, { context })` (R9): a user, a database
   * handle, a tenant. Never sent to the model and never stored; agent tools pass it to their
   * child runs. `undefined` when the query gave none.
   */
  readonly context?: TContext;
  /** The run this call belongs to, when a Lattice agent made the call. */
  readonly run?: ToolRunInfo;
  /**
   * Reports progress of a long call (an MCP server's progress notifications): the agent turns
   * each report into a `tool_progress` trace event. Absent outside an agent's run, and when
   * the run has no trace listener.
   */
  readonly reportProgress?: (progress: ToolProgress) => void;
}

/** A progress report of a running tool call. */
export interface ToolProgress {
  /** Work done so far, in the tool's own unit. */
  readonly progress: number;
  /** The total, when known. */
  readonly total?: number;
  /** A human-readable status line. */
  readonly message?: string;
}

/**
 * What a handler returns (T4, T5, T8, T11).
 */
export interface ToolHandlerResult {
  /** The tool_result content: a string, or an array of text and image blocks. */
  readonly content: string | readonly ToolResultContentBlock[];
  /**
   * Marks the result as a failure (`is_error: true`) without throwing. Default `false`.
   */
  readonly isError?: boolean;
  /**
   * Ends the run after this batch (T8): the run's result is this tool's text content and no
   * further model call is made. Other calls of the same batch still finish (T9).
   */
  readonly endTurn?: boolean;
  /**
   * A machine-readable payload set on the run's result message as `structuredResult` (T11).
   * Ignored unless `endTurn` is `true`.
   */
  readonly structuredResult?: unknown;
  /**
   * Structured data next to the content (an MCP tool's `structuredContent`): kept on the
   * call's result for `onToolResult` hooks and the caller, never sent to the model.
   */
  readonly structuredContent?: unknown;
}

/**
 * A tool handler: receives the validated input and the call's context, returns (or resolves
 * to) a {@link ToolHandlerResult}. A throw or rejection becomes an `is_error` result (T6).
 */
export type ToolHandler<Input, TContext = unknown> = (
  input: Input,
  context: ToolContext<TContext>,
) => ToolHandlerResult | Promise<ToolHandlerResult>;

/**
 * A tool the SDK can offer to a model and run: what `tool()` returns.
 *
 * The object is frozen. `metadata` is present only when it was given (T29).
 *
 * @typeParam Input - The validated input type, inferred from the schema.
 */
export interface ToolDefinition<Input = unknown> {
  /** The name the model calls the tool by; matches `^[a-zA-Z0-9_-]{1,64}$`. */
  readonly name: string;
  /** What the tool does, for the model. */
  readonly description: string;
  /** The JSON Schema the model receives (T2), converted once at definition time. */
  readonly inputSchema: ToolInputSchema;
  /** Who made the tool; the batch policy sees it as each call's `kind`. */
  readonly kind: ToolKind;
  /**
   * The schema every input is validated with before the handler runs (T3), through its
   * Standard Schema interface (`~standard.validate`): a Zod schema for `tool()`, any Standard
   * Schema v1 for definitions made with `createToolDefinition({ ..., inputSchema })`.
   */
  readonly schema: StandardSchemaV1<unknown, Input>;
  /** Runs the tool on a validated input. Declared as a method so definitions of any input type share one array. */
  handler(input: Input, context: ToolContext): ToolHandlerResult | Promise<ToolHandlerResult>;
  /**
   * Whether one call may overlap other calls (T13), evaluated on its validated input.
   * Absent means never: the call runs alone.
   */
  isConcurrencySafe?(input: Input): boolean;
  /**
   * Ask OpenAI-compatible providers for strict function calling (`strict: true`). Absent
   * means not strict. Anthropic-style providers ignore it.
   */
  readonly strict?: boolean;
  /** Host-owned annotations, passed through unchanged and never shown to the model (T29). */
  readonly metadata?: Readonly<Record<string, unknown>>;
  /**
   * Whether a call needs a person's decision before it runs (R13): `true`, or a function of
   * the validated input. Absent means never. An agent pauses the run instead of calling it.
   */
  readonly needsApproval?: NeedsApproval<Input>;
  /**
   * How long a call's handler may run, in milliseconds (R20); absent means no limit of the
   * tool's own (the agent's `toolTimeoutMs` applies).
   */
  readonly timeoutMs?: number;
}

/**
 * Whether a tool call needs a person's decision (R13): `true`, or a function of the validated
 * input and the call's context that returns (or resolves to) a boolean.
 */
export type NeedsApproval<Input = unknown> =
  | true
  | ((input: Input, context: ToolContext) => boolean | Promise<boolean>);

/**
 * The options `tool()` accepts as its fifth argument. Checked strictly (T31): an unknown key
 * throws when the tool is defined.
 *
 * @typeParam Input - The validated input type.
 */
export interface ToolOptions<Input> {
  /** Whether a call with this input may run at the same time as others (T13). Default: never. */
  readonly isConcurrencySafe?: (input: Input) => boolean;
  /** Host-owned annotations, passed through to `ToolDefinition.metadata` unchanged (T29). */
  readonly metadata?: Record<string, unknown>;
  /** Ask OpenAI-compatible providers for strict function calling. Default `false`. */
  readonly strict?: boolean;
  /**
   * Calls need a person's decision before they run (R13): `true`, or a function of the
   * validated input (it may be async). An agent then pauses the run: it ends `"interrupted"`
   * with the pending calls, and `agent.resume(sessionId, { decisions })` continues it.
   * Default: never.
   */
  readonly needsApproval?: NeedsApproval<Input>;
  /**
   * How long a call's handler may run, in milliseconds (R20). At the deadline its
   * `ctx.signal` aborts with a `TimeoutError` and the call's result is an `is_error`
   * "timed out" result, even if the handler ignores the signal. Default: the agent's
   * `toolTimeoutMs` (none by default).
   */
  readonly timeoutMs?: number;
}

/** Any tool definition, whatever its input type: the element type of an agent's `tools`. */
// biome-ignore lint/suspicious/noExplicitAny: a heterogeneous list of tools needs `any` inputs.
export type AnyToolDefinition = ToolDefinition<any>;
