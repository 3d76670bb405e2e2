import { randomUUID } from "node:crypto";
import type {
  ContentBlock,
  ModelMessage,
  ModelProviderV1,
  ModelResponse,
  ToolResultBlock,
  ToolUseBlock,
} from "@lattice/providers";
import {
  type BeforeToolCall,
  createAbortError,
  type ResolvedToolConcurrency,
  raceAbort,
  runToolBatch,
  type ToolBatchCall,
  type ToolBatchPolicy,
} from "@lattice/scheduler";
import type { AnyToolDefinition, ToolContext } from "@lattice/tools";
import type { AgentHooks } from "./agent-hooks.js";
import type { Mailbox } from "./mailbox.js";
import type { RunUsage, SDKMessage, SDKResultMessage, SDKResultSubtype } from "./sdk-message.js";
import type { TraceEvent } from "./trace-event.js";

/** Everything one run needs, resolved from an agent's options. Internal. */
export interface AgentRuntime {
  readonly model: string;
  readonly provider: ModelProviderV1;
  readonly system: string | undefined;
  readonly tools: readonly AnyToolDefinition[];
  readonly toolMap: ReadonlyMap<string, AnyToolDefinition>;
  readonly concurrency: ResolvedToolConcurrency;
  readonly policy: ToolBatchPolicy | undefined;
  readonly hooks: AgentHooks;
  readonly maxTurns: number;
  readonly maxTokens: number;
  /** How long an aborted batch waits for handlers that ignore their signal (H5). */
  readonly abortGraceMs: number;
  readonly temperature: number | undefined;
  /** Ask the provider for SSE (`true`) or one JSON body (`false`). */
  readonly stream: boolean;
  readonly includePartialMessages: boolean;
  readonly onTrace: ((event: TraceEvent) => void) | undefined;
}

/** How a run is embedded: top level, or inside an agent tool call of a parent run. Internal. */
export interface RunPlacement {
  /** The parent's tool_use id, or `null` at top level. */
  readonly parentToolUseId: string | null;
  /** Receives every message of the run. */
  readonly emit: (message: SDKMessage) => void;
  /** Nesting depth: 0 at top level. */
  readonly depth: number;
  /** The running agent's name (`"agent"` when it has none). */
  readonly agentName?: string | undefined;
  /** The agents from the first one to this one; default `[agentName]`. */
  readonly chain?: readonly string[] | undefined;
  /** Where handoffs of this run's agent tools go when the tool has no mailbox of its own. */
  readonly mailbox?: Mailbox | undefined;
  /** The depth limit agent tools of this run apply; default `DEFAULT_MAX_DEPTH`. */
  readonly maxDepth?: number | undefined;
  /**
   * Called before each model call after the first: texts it returns (team replies) are
   * appended as text blocks to the user message that carries the last batch's tool results.
   */
  readonly takeInbox?: (() => readonly string[] | Promise<readonly string[]>) | undefined;
  /** A parent run's trace, which also receives this run's events. */
  readonly trace?: ((event: TraceEvent) => void) | undefined;
  /** A checked conversation to continue (R4): sent before the prompt. */
  readonly history?: readonly ModelMessage[] | undefined;
}

/**
 * What a tool handler's context holds in a Lattice run, besides the public {@link ToolContext}
 * fields: the running agent's provider and model, and a way to emit nested messages and add
 * usage. Agent tools read it through {@link RUN_CONTEXT}.
 */
export interface RunContext {
  readonly provider: ModelProviderV1;
  readonly model: string;
  readonly emit: (message: SDKMessage) => void;
  readonly addUsage: (usage: RunUsage) => void;
  readonly depth: number;
  readonly sessionId: string;
  /** The running agent's name (`"agent"` when it has none). */
  readonly agentName: string;
  /** The agents from the first one to the running one. */
  readonly chain: readonly string[];
  /** The mailbox handoffs go to when the agent tool has none of its own. */
  readonly mailbox: Mailbox | undefined;
  /** The depth limit set by the team or an enclosing agent tool, if any. */
  readonly maxDepth: number | undefined;
  /** The run's trace sink (its own `onTrace` and its parents'), if any. */
  readonly trace: ((event: TraceEvent) => void) | undefined;
}

/** The symbol under which a tool context carries its {@link RunContext}. Internal. */
export const RUN_CONTEXT: unique symbol = Symbol.for("lattice.runContext");

/** A tool context with the run's internals attached. Internal. */
export type LatticeToolContext = ToolContext & { readonly [RUN_CONTEXT]?: RunContext };

/**
 * Runs the agent loop once: model call, tool batch, results, until the model stops, a tool
 * ends the run, `maxTurns` is reached, or something fails. Emits every message through
 * `placement.emit` and returns the result message (also emitted).
 *
 * @throws an error named `"AbortError"` when `signal` aborts, after every started handler settled.
 */
export async function runAgent(
  runtime: AgentRuntime,
  prompt: string | readonly ContentBlock[],
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<SDKResultMessage> {
  const sessionId = randomUUID();
  const startedAt = performance.now();
  const { parentToolUseId, emit } = placement;
  const runTrace = combineTraces(runtime.onTrace, placement.trace);
  const trace = runTrace.emit;
  const agentName = placement.agentName ?? "agent";
  const toolNames = runtime.tools.map((definition) => definition.name);
  const usage = { inputTokens: 0, outputTokens: 0 };
  const addUsage = (more: RunUsage): void => {
    usage.inputTokens += more.inputTokens;
    usage.outputTokens += more.outputTokens;
  };
  let numTurns = 0;

  const finish = (
    subtype: SDKResultSubtype,
    result: string,
    errors: readonly string[],
    structuredResult?: unknown,
  ): SDKResultMessage => {
    const durationMs = performance.now() - startedAt;
    const message: SDKResultMessage = {
      type: "result",
      subtype,
      result,
      structuredResult,
      isError: subtype !== "success",
      numTurns,
      durationMs,
      usage: { inputTokens: usage.inputTokens, outputTokens: usage.outputTokens },
      errors,
      sessionId,
      parentToolUseId,
      messages: messages.slice(),
    };
    trace?.({
      type: "run_finished",
      time: performance.now(),
      sessionId,
      subtype,
      numTurns,
      durationMs,
      usage: message.usage,
    });
    const traceErrors = runTrace.failures();
    const final = traceErrors > 0 ? { ...message, traceErrors } : message;
    emit(final);
    return final;
  };
  const aborted = (): Error => {
    trace?.({
      type: "run_aborted",
      time: performance.now(),
      sessionId,
      numTurns,
      durationMs: performance.now() - startedAt,
    });
    return createAbortError(signal.reason);
  };

  trace?.({
    type: "run_started",
    time: startedAt,
    sessionId,
    model: runtime.model,
    tools: toolNames,
    parentToolUseId,
  });
  emit({
    type: "system",
    subtype: "init",
    model: runtime.model,
    tools: toolNames,
    sessionId,
    parentToolUseId,
  });

  const runContext: RunContext = {
    provider: runtime.provider,
    model: runtime.model,
    emit,
    addUsage,
    depth: placement.depth,
    sessionId,
    agentName,
    chain: placement.chain ?? [agentName],
    mailbox: placement.mailbox,
    maxDepth: placement.maxDepth,
    trace,
  };
  const messages: ModelMessage[] = [
    ...(placement.history ?? []),
    { role: "user", content: typeof prompt === "string" ? prompt : [...prompt] },
  ];

  for (;;) {
    if (signal.aborted) throw aborted();
    if (numTurns >= runtime.maxTurns) {
      return finish("error_max_turns", "", [
        `The run reached maxTurns (${runtime.maxTurns}) before the model gave a final answer. Raise maxTurns, or give the model a tool that ends the run (endTurn: true).`,
      ]);
    }
    numTurns++;
    const turn = numTurns;
    trace?.({
      type: "model_request_started",
      time: performance.now(),
      sessionId,
      turn,
      messageCount: messages.length,
    });

    let response: ModelResponse | undefined;
    try {
      for await (const event of runtime.provider.stream({
        model: runtime.model,
        ...(runtime.system !== undefined ? { system: runtime.system } : {}),
        messages,
        ...(runtime.tools.length > 0 ? { tools: runtime.tools } : {}),
        maxTokens: runtime.maxTokens,
        ...(runtime.stream ? {} : { stream: false }),
        ...(runtime.temperature !== undefined ? { temperature: runtime.temperature } : {}),
        signal,
      })) {
        if (event.type === "response") {
          response = event.response;
          continue;
        }
        if (event.type === "retry") {
          trace?.({
            type: "model_retry",
            time: performance.now(),
            sessionId,
            turn,
            attempt: event.attempt,
            delayMs: event.delayMs,
            status: event.status,
            message: event.message,
          });
        }
        if (runtime.includePartialMessages) {
          emit({ type: "stream_event", event, sessionId, parentToolUseId });
        }
      }
    } catch (error) {
      if (signal.aborted) throw aborted();
      const message = error instanceof Error ? error.message : String(error);
      trace?.({
        type: "model_request_failed",
        time: performance.now(),
        sessionId,
        turn,
        message,
        status: (error as { status?: number }).status,
      });
      return finish("error_during_execution", "", [message]);
    }
    if (signal.aborted) throw aborted();
    if (response === undefined) {
      return finish("error_during_execution", "", [
        `The model provider "${runtime.provider.name}" ended its stream without a response. This is a bug in the provider adapter.`,
      ]);
    }
    addUsage(response.usage);
    const content = response.message.content;
    const toolUses = content.filter((block): block is ToolUseBlock => block.type === "tool_use");
    trace?.({
      type: "model_request_finished",
      time: performance.now(),
      sessionId,
      turn,
      latencyMs: response.latencyMs,
      usage: { inputTokens: response.usage.inputTokens, outputTokens: response.usage.outputTokens },
      retries: response.retries,
      stopReason: response.stopReason,
      requestId: response.requestId,
      toolCalls: toolUses.length,
    });
    messages.push({ role: "assistant", content });
    emit({
      type: "assistant",
      message: { role: "assistant", content },
      stopReason: response.stopReason,
      sessionId,
      parentToolUseId,
    });

    if (toolUses.length === 0) {
      // The API paused a long turn: send the partial turn back so the model continues it.
      if (response.stopReason === "pause_turn") continue;
      return finish("success", textOf(content), []);
    }

    const duplicate = duplicateId(toolUses);
    if (duplicate !== undefined) {
      // The API would reject the results of such a reply; nothing may run first (H13).
      return finish("error_during_execution", "", [
        `The model's reply used the tool_use id "${duplicate}" for more than one tool call, so none of its ${toolUses.length} calls ran: their results could not be told apart. This is a fault of the model or the server; retry the query.`,
      ]);
    }
    const batch = await runToolBatch({
      calls: toolUses.map((block) =>
        block.inputError === undefined
          ? { id: block.id, name: block.name, input: block.input }
          : { id: block.id, name: block.name, input: block.input, inputError: block.inputError },
      ),
      tools: runtime.toolMap,
      concurrency: runtime.concurrency,
      policy: runtime.policy,
      signal,
      abortGraceMs: runtime.abortGraceMs,
      beforeCall: beforeCallFor(runtime.hooks, trace, sessionId),
      createContext: (call: ToolBatchCall): LatticeToolContext => ({
        signal,
        toolUseId: call.id,
        toolName: call.name,
        [RUN_CONTEXT]: runContext,
      }),
      ...(trace !== undefined ? { onEvent: (event) => trace({ ...event, sessionId, turn }) } : {}),
    });

    const hookErrors: string[] = [];
    const onToolResult = runtime.hooks.onToolResult;
    const results: ToolResultBlock[] = [];
    for (const outcome of batch.results) {
      results.push({
        type: "tool_result",
        tool_use_id: outcome.id,
        content: [...outcome.result.content],
        ...(outcome.result.isError ? { is_error: true } : {}),
      });
      if (onToolResult === undefined || batch.aborted || signal.aborted) continue;
      const hookStarted = performance.now();
      let hookError: string | undefined;
      try {
        // Raced against the signal: a hook that never settles must not keep an aborted
        // query from ending (T22).
        await raceAbort(
          onToolResult({
            toolUseId: outcome.id,
            toolName: outcome.name,
            kind: outcome.kind,
            input: outcome.input,
            result: outcome.result,
            status: outcome.status,
            durationMs:
              outcome.startedAt === undefined ? 0 : outcome.finishedAt - outcome.startedAt,
            sessionId,
            signal,
          }),
          signal,
        );
      } catch (error) {
        // Aborted while the hook was pending: no hook error, the run rejects below.
        if (signal.aborted) continue;
        hookError = error instanceof Error ? error.message : String(error);
        hookErrors.push(
          `The onToolResult hook threw for tool call "${outcome.name}" (${outcome.id}): ${hookError}`,
        );
      }
      trace?.({
        type: "hook",
        time: performance.now(),
        sessionId,
        hook: "onToolResult",
        toolUseId: outcome.id,
        durationMs: performance.now() - hookStarted,
        error: hookError,
      });
    }
    messages.push({ role: "user", content: results });
    emit({ type: "user", message: { role: "user", content: results }, sessionId, parentToolUseId });

    if (batch.aborted || signal.aborted) throw aborted();
    if (hookErrors.length > 0) return finish("error_during_execution", "", hookErrors);
    if (batch.endTurn !== undefined) {
      return finish("success", batch.endTurn.text, [], batch.endTurn.structuredResult);
    }
    if (placement.takeInbox !== undefined) {
      let texts: readonly string[];
      try {
        texts = await raceAbort(placement.takeInbox(), signal);
      } catch (error) {
        if (signal.aborted) throw aborted();
        throw error;
      }
      if (texts.length > 0) {
        messages[messages.length - 1] = {
          role: "user",
          content: [...results, ...texts.map((text) => ({ type: "text" as const, text }))],
        };
      }
    }
  }
}

/** The first tool_use id that appears twice in a reply, if any (H13). */
function duplicateId(toolUses: readonly ToolUseBlock[]): string | undefined {
  if (toolUses.length < 2) return undefined;
  const seen = new Set<string>();
  for (const block of toolUses) {
    if (seen.has(block.id)) return block.id;
    seen.add(block.id);
  }
  return undefined;
}

/** The scheduler's per-call hook: the user's `beforeToolCall`, traced. */
function beforeCallFor(
  hooks: AgentHooks,
  trace: ((event: TraceEvent) => void) | undefined,
  sessionId: string,
): BeforeToolCall | undefined {
  const user = hooks.beforeToolCall;
  if (user === undefined) return undefined;
  // The scheduler passes the query's signal in `context` and stops waiting on abort (T22).
  return async (call, context) => {
    const started = performance.now();
    try {
      const answer = await user(call, { signal: context.signal });
      trace?.({
        type: "hook",
        time: performance.now(),
        sessionId,
        hook: "beforeToolCall",
        toolUseId: call.id,
        durationMs: performance.now() - started,
      });
      return answer ?? undefined;
    } catch (error) {
      trace?.({
        type: "hook",
        time: performance.now(),
        sessionId,
        hook: "beforeToolCall",
        toolUseId: call.id,
        durationMs: performance.now() - started,
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  };
}

function textOf(content: readonly ContentBlock[]): string {
  let text = "";
  for (const block of content) {
    if (block.type === "text") text += text === "" ? block.text : `\n${block.text}`;
  }
  return text;
}

/** A run's trace sink, and how many times the run's own `onTrace` failed (H1). Internal. */
export interface RunTrace {
  /** Sends an event to the run's `onTrace` (made safe) and to its parent's sink. */
  readonly emit: ((event: TraceEvent) => void) | undefined;
  /** How many times `onTrace` threw or returned a promise that rejected, so far. */
  readonly failures: () => number;
}

/**
 * The run's trace sink: its own `onTrace` (made safe) and its parent's, or `undefined`.
 *
 * A listener that throws, or returns a promise that rejects (an `async` listener whose
 * database is down), never reaches the run or the host process: the failure is counted and
 * otherwise ignored (H1).
 */
export function combineTraces(
  onTrace: ((event: TraceEvent) => unknown) | undefined,
  parent: ((event: TraceEvent) => void) | undefined,
): RunTrace {
  let failures = 0;
  const count = (): void => {
    failures += 1;
  };
  if (onTrace === undefined) return { emit: parent, failures: () => failures };
  return {
    emit: (event) => {
      try {
        catchRejection(onTrace(event), count);
      } catch {
        count();
      }
      parent?.(event);
    },
    failures: () => failures,
  };
}

/**
 * When a callback returned a promise (an `async` listener), handles its rejection with
 * `onRejected`, so that it never becomes an unhandled rejection (H1). Internal.
 */
export function catchRejection(returned: unknown, onRejected: () => void): void {
  if (
    returned !== null &&
    (typeof returned === "object" || typeof returned === "function") &&
    typeof (returned as { then?: unknown }).then === "function"
  ) {
    Promise.resolve(returned).then(undefined, onRejected);
  }
}
