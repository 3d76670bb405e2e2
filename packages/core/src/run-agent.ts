import type {
  ContentBlock,
  ModelMessage,
  ModelProviderV1,
  ModelRequest,
  ModelResponse,
  ToolResultBlock,
} from "@lattice/providers";
import {
  type BeforeToolCall,
  type ResolvedToolConcurrency,
  runToolBatch,
  type ToolBatchCall,
  type ToolBatchPendingApproval,
  type ToolBatchPolicy,
  type ToolCallOutcome,
  type ToolCallStatus,
} from "@lattice/scheduler";
import { catchRejection, createAbortError, raceAbort } from "@lattice/scheduler/internal";
import {
  type AnyToolDefinition,
  InvalidOptionError,
  type LatticeError,
  type ToolContext,
  type ToolRunInfo,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import type { AgentHooks } from "./agent-hooks.js";
import type { Mailbox } from "./mailbox.js";
import { randomId, randomToken } from "./random-id.js";
import {
  addUsage,
  type DecisionsEntry,
  type LoggedDecision,
  type LoggedRun,
  nextStep,
  type PendingApproval,
  RUN_LOG_VERSION,
  type RunFinishedEntry,
  type RunLogEntry,
  RunLogState,
  SessionError,
  stepNumberOf,
  type ToolResultEntry,
  zeroUsage,
} from "./run-log.js";
import type { RunUsage, SDKMessage, SDKResultMessage, SDKResultSubtype } from "./sdk-message.js";
import {
  type JsonValue,
  SessionConflictError,
  type SessionEntry,
  SessionFencedError,
  type SessionSnapshot,
  type SessionStore,
} from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";
import { SessionWriter } from "./session-writer.js";
import { checkStepLease, leaseLapsed, type StepLease } from "./step-lease.js";
import { type TraceEvent, toToolBatchTraceEvent } from "./trace-event.js";

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
  /** The time limit of handlers whose tool sets none (R20). */
  readonly toolTimeoutMs: number | undefined;
  /** Whether some tool has `needsApproval`: only then may a run pause (R14). */
  readonly canPause: boolean;
  /**
   * With tool sources: resolves them into the runtime over all current tools (the same object
   * while no source's list changed). Called before a run's first step and every model call.
   */
  readonly withSources?: ((signal: AbortSignal) => Promise<AgentRuntime>) | undefined;
  readonly temperature: number | undefined;
  /** Ask the provider for SSE (`true`) or one JSON body (`false`). */
  readonly stream: boolean;
  /**
   * What every model request of a run sends besides its messages and signal: model, system,
   * the tools as plain data, limits and model controls. Built once per agent.
   */
  readonly request: Omit<ModelRequest, "messages" | "signal">;
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
   * The before-step hook of a team member's run: called before each model call that follows a
   * reply. The texts it returns (team replies) are appended to the run log as a `mail` entry,
   * so they reach the next model call, or the resumed run if this one is cut first.
   */
  readonly beforeModelCall?: (() => readonly string[] | Promise<readonly string[]>) | undefined;
  /** A parent run's trace, which also receives this run's events. */
  readonly trace?: ((event: TraceEvent) => void) | undefined;
  /** The caller's context (R9), handed to every tool as `ctx.context`. */
  readonly context?: unknown;
  /** The conversation id of a run without a session: a parent run's, or a fresh one. */
  readonly sessionId?: string | undefined;
  /**
   * Where a run without a session stores its log when it is interrupted for approvals (R14),
   * so that `resume()` finds it: the agent's `sessionStore`. Absent for agent tools' child
   * runs, which cannot pause.
   */
  readonly store?: SessionStore | undefined;
  /**
   * Whether the run may still start something (H28): asked before each model request (and
   * each retry of one) and each tool call starts. A parent run's, inherited by its agent
   * tools' child runs through `RunContext.mayStart`: a step whose lease lapsed stops its
   * children too. Absent: always.
   */
  readonly mayStart?: (() => boolean) | undefined;
}

/** What a run starts from. Internal. */
export type RunStart =
  | {
      /** A new run on a prompt: one-off (with an optional caller-kept history) or on a session. */
      readonly kind: "prompt";
      readonly prompt: string | readonly ContentBlock[];
      /** A checked conversation to continue (R4): sent before the prompt. */
      readonly history?: readonly ModelMessage[] | undefined;
      /** The stored conversation to continue and append to (R6). */
      readonly session?: { readonly store: SessionStore; readonly sessionId: string } | undefined;
    }
  | {
      /** The unfinished run of a stored session, taken up again (R18). */
      readonly kind: "resume";
      readonly store: SessionStore;
      readonly sessionId: string;
      /** Decisions on the pending approvals of an interrupted run, by approval id (R15). */
      readonly decisions?: { readonly [approvalId: string]: LoggedDecision } | undefined;
    }
  | {
      /**
       * One step of a stored session's run (`agent.step()`): a new run's first step on
       * `prompt`, or the next step of the latest run; the run returns a {@link StepYield}
       * before its second step.
       */
      readonly kind: "step";
      readonly store: SessionStore;
      readonly sessionId: string;
      /** Starts a new run on this prompt, unless the latest run already has `runId`. */
      readonly prompt?: string | readonly ContentBlock[] | undefined;
      /** The new run's id, or the id the latest run must have. */
      readonly runId?: string | undefined;
      /** Take the step only when the log is at this step; otherwise yield it as stale. */
      readonly expectedStep?: number | undefined;
      /** Decisions on the pending approvals of an interrupted run, by approval id (R15). */
      readonly decisions?: { readonly [approvalId: string]: LoggedDecision } | undefined;
      /** Called as the step starts, once any decisions are stored. */
      readonly onStepStart?: ((step: number) => void) | undefined;
      /**
       * The lease the step runs under (H28), and the controller that stops the step (its
       * signal is part of the run's) once the lease no longer holds.
       */
      readonly fencing?: { readonly lease: StepLease; readonly stop: AbortController } | undefined;
    };

/**
 * How a run taken one step at a time stops before its next step: everything the step appended
 * is stored. `stale` when the log was not at the expected step, so nothing ran. Internal.
 */
export interface StepYield {
  readonly type: "step_yield";
  readonly sessionId: string;
  readonly runId: string;
  /** The step taken, or `undefined` when stale. */
  readonly step: number | undefined;
  /** The step the log is at now. */
  readonly nextStep: number;
  readonly stale: boolean;
}

/**
 * What a tool handler's context holds as `ctx.run` in a Lattice run: the public
 * {@link ToolRunInfo}, and for agent tools the running agent's provider and model and a way
 * to emit nested messages and add usage. Internal beyond `ToolRunInfo`.
 */
export interface RunContext extends ToolRunInfo {
  readonly provider: ModelProviderV1;
  readonly model: string;
  readonly emit: (message: SDKMessage) => void;
  readonly addUsage: (usage: RunUsage) => void;
  /** The agents from the first one to the running one. */
  readonly chain: readonly string[];
  /** The mailbox handoffs go to when the agent tool has none of its own. */
  readonly mailbox: Mailbox | undefined;
  /** The depth limit set by the team or an enclosing agent tool, if any. */
  readonly maxDepth: number | undefined;
  /** The run's trace sink (its own `onTrace` and its parents'), if any. */
  readonly trace: ((event: TraceEvent) => void) | undefined;
  /** The caller's context (R9), passed on to child runs. */
  readonly context: unknown;
  /** Whether the run may still start something (`RunPlacement.mayStart`), for child runs. */
  readonly mayStart: (() => boolean) | undefined;
}

/** The class of the run contexts this module makes: agent tools recognise `ctx.run` by it. */
class LatticeRunContext {
  constructor(fields: RunContext) {
    Object.assign(this, fields);
  }
}

/** The Lattice run a tool call belongs to, when a Lattice agent made it. Internal. */
export function runContextOf(context: ToolContext): RunContext | undefined {
  const run = context.run;
  return run instanceof LatticeRunContext ? (run as unknown as RunContext) : undefined;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** Statuses whose result is final: logged, never run again on resume (R18). */
function isLoggable(status: ToolCallStatus, aborted: boolean): boolean {
  if (status === "cancelled" || status === "abandoned") return false;
  // A handler that failed once the query was aborted may have failed because of the abort.
  return !(aborted && status === "failed");
}

/**
 * Runs the agent loop as a step function over the run log (R1–R3): each step reads what the
 * log says comes next — a model call, the latest reply's tool calls, or the end — takes it,
 * and appends its outcome; with a session, every entry is appended to the store before the
 * next step starts (R6). Messages, trace events and hooks observe the steps. Returns the
 * result message (also emitted).
 *
 * @throws an error named `"AbortError"` when `signal` aborts, after every started handler
 *   settled; `SessionConflictError` when another run holds the session (R8); `SessionError`
 *   for a resume of an unknown or finished session or a log this release cannot read.
 */
export async function runAgent(
  initialRuntime: AgentRuntime,
  start: RunStart,
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<SDKResultMessage> {
  const outcome = await runSteps(initialRuntime, start, signal, placement);
  if (outcome.type !== "result") throw new Error("runAgent(): a step start needs runSteps()");
  return outcome;
}

/**
 * {@link runAgent}, which with a `step` start takes one step and returns a {@link StepYield}
 * before the next one (or the result, when the run ends within the step). Internal.
 */
export async function runSteps(
  initialRuntime: AgentRuntime,
  start: RunStart,
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<SDKResultMessage | StepYield> {
  const startedAt = performance.now();
  let runtime = initialRuntime;
  const { parentToolUseId, emit } = placement;
  const runTrace = combineTraces(runtime.onTrace, placement.trace);
  const trace = runTrace.emit;
  const agentName = placement.agentName ?? "agent";
  const state = new RunLogState();
  let writer: SessionWriter | undefined;
  let sessionId!: string;
  let runId: string;
  let resumed = false;
  let first: RunLogEntry | undefined;
  // A run taken one step at a time: the step expected, and the one taken once it is.
  let stepping: { readonly expected: number | undefined; taken: number | undefined } | undefined;
  let decided: { readonly [approvalId: string]: LoggedDecision } | undefined;
  let decisionsEntry: DecisionsEntry | undefined;
  // Every entry of this run, kept for a run without a session until it finishes: an interrupt
  // stores them in the agent's store so that resume() finds them (R14).
  const written: RunLogEntry[] = [];

  const fencing = start.kind === "step" ? start.fencing : undefined;
  /**
   * Whether the step's lease still holds (H28); when it does not, stops the step, which then
   * rejects with `SessionFencedError`. Consulted before each model or tool call starts (the
   * writer consults the lease before each append).
   */
  const leaseHeld = (): boolean => {
    if (fencing === undefined || fencing.lease.held()) return true;
    if (!fencing.stop.signal.aborted) {
      fencing.stop.abort(leaseLapsed(sessionId, fencing.lease.fence));
    }
    return false;
  };
  /**
   * Whether the run may still start something: its step's lease holds, and so does its parent
   * run's (an agent tool's child run). Undefined, and never asked, for a run under no lease.
   */
  const inherited = placement.mayStart;
  const mayStart: (() => boolean) | undefined =
    fencing === undefined
      ? inherited
      : inherited === undefined
        ? leaseHeld
        : () => leaseHeld() && inherited();
  const loaded = start.kind === "step" ? await loadStep(start, state) : undefined;
  const continuing = loaded?.latest;
  if (start.kind === "step") {
    stepping = { expected: start.expectedStep, taken: undefined };
    sessionId = start.sessionId;
    writer = new SessionWriter(
      start.store,
      sessionId,
      loaded!.version,
      fencing === undefined
        ? undefined
        : {
            fence: fencing.lease.fence,
            held: () => fencing.lease.held(),
            fenced: (error) => {
              if (!fencing.stop.signal.aborted) fencing.stop.abort(error);
            },
          },
    );
  }
  if (continuing !== undefined) {
    // The next step of the session's latest run: nothing is appended unless decisions are.
    const last = continuing;
    runId = last.runId;
    resumed = true;
    if (last.finished) return rebuiltResult(last, state, sessionId, placement);
    // A step job delivered again after its run paused for approvals (its worker died after
    // storing the interrupt): the pause is the step's outcome, given again.
    if (
      start.kind === "step" &&
      start.expectedStep !== undefined &&
      start.decisions === undefined &&
      last.pending !== undefined
    ) {
      return rebuiltResult(last, state, sessionId, placement);
    }
    decided = checkDecisions(
      start.kind === "step" ? "step()" : "resume()",
      sessionId,
      last.pending,
      start.kind === "step" ? start.decisions : undefined,
    );
    if (decided !== undefined) {
      first = { v: RUN_LOG_VERSION, type: "run_resumed", runId, time: new Date().toISOString() };
      decisionsEntry = { v: RUN_LOG_VERSION, type: "decisions", runId, decisions: decided };
    }
  } else if (start.kind === "resume") {
    sessionId = start.sessionId;
    const snapshot = await loadSession(start.store, sessionId, state);
    const last = state.run;
    if (snapshot.version === 0) {
      throw new SessionError(
        "session_not_found",
        sessionId,
        `resume(): session ${JSON.stringify(sessionId)} does not exist in ${storeLabel(start.store)}. Start it with agent.query(prompt, { sessionId }), or check the id (sessionStore.list() lists the sessions).`,
      );
    }
    if (last === undefined || last.finished) {
      throw new SessionError(
        "not_interrupted",
        sessionId,
        `resume(): session ${JSON.stringify(sessionId)} has no unfinished run: its last run ended. Send the next prompt with agent.query(prompt, { sessionId: ${JSON.stringify(sessionId)} }).`,
      );
    }
    runId = last.runId;
    resumed = true;
    writer = new SessionWriter(start.store, sessionId, snapshot.version);
    first = { v: RUN_LOG_VERSION, type: "run_resumed", runId, time: new Date().toISOString() };
    decided = checkDecisions("resume()", sessionId, last.pending, start.decisions);
    if (decided !== undefined)
      decisionsEntry = { v: RUN_LOG_VERSION, type: "decisions", runId, decisions: decided };
  } else {
    const prompt = start.prompt!;
    runId = (start.kind === "step" ? start.runId : undefined) ?? randomId();
    const message: ModelMessage = {
      role: "user",
      content: typeof prompt === "string" ? prompt : [...prompt],
    };
    const time = new Date().toISOString();
    first =
      start.kind === "prompt" && start.history !== undefined
        ? {
            v: RUN_LOG_VERSION,
            type: "run_started",
            runId,
            time,
            history: start.history,
            message,
          }
        : { v: RUN_LOG_VERSION, type: "run_started", runId, time, message };
    if (start.kind === "step") {
      assertNoUnfinishedRun(state, sessionId, state.size);
    } else if (start.session !== undefined) {
      sessionId = start.session.sessionId;
      const snapshot = await loadSession(start.session.store, sessionId, state);
      assertNoUnfinishedRun(state, sessionId, snapshot.version);
      writer = new SessionWriter(start.session.store, sessionId, snapshot.version);
    } else {
      sessionId = placement.sessionId ?? randomId();
    }
  }

  // Usage of agent tools' child runs, not yet written to the log.
  const pendingUsage = zeroUsage();
  const addChildUsage = (more: RunUsage): void => addUsage(pendingUsage, more);
  const takePendingUsage = (): RunUsage | undefined => {
    if (
      pendingUsage.inputTokens === 0 &&
      pendingUsage.outputTokens === 0 &&
      pendingUsage.cacheReadInputTokens === 0 &&
      pendingUsage.cacheCreationInputTokens === 0
    ) {
      return undefined;
    }
    const usage = { ...pendingUsage };
    pendingUsage.inputTokens = 0;
    pendingUsage.outputTokens = 0;
    pendingUsage.cacheReadInputTokens = 0;
    pendingUsage.cacheCreationInputTokens = 0;
    return usage;
  };

  /** Appends an entry: the conversation follows it (R2), observers see it, the store gets it. */
  const appendEntry = (entry: RunLogEntry): void => {
    state.apply(entry);
    if (writer !== undefined) writer.push(entry as unknown as SessionEntry);
    else if (runtime.canPause) written.push(entry);
    observe(entry);
  };

  /** The SDK message stream, an observer of the log's entries (R3). */
  const observe = (entry: RunLogEntry): void => {
    if (entry.type === "reply") {
      emit({
        type: "assistant",
        message: entry.message,
        stopReason: entry.stopReason,
        sessionId,
        runId,
        parentToolUseId,
      });
      return;
    }
    if (entry.type !== "tool_result") return;
    const batch = state.run?.batch;
    // The entry that completed its batch: the results message is the conversation's last.
    if (batch?.complete === true && batch.results.get(entry.toolUseId) === entry) {
      const last = state.messages[state.messages.length - 1]!;
      emit({
        type: "user",
        message: { role: "user", content: last.content as ToolResultBlock[] },
        sessionId,
        runId,
        parentToolUseId,
      });
    }
  };

  // Write-ahead: the run's first entry is stored before anything runs; losing the race for
  // the session ends here, before any model call or tool (R8).
  if (first !== undefined) appendEntry(first);
  if (decisionsEntry !== undefined) appendEntry(decisionsEntry);
  if (writer !== undefined && first !== undefined) {
    const failure = await writer.flush();
    if (failure !== undefined) {
      throw storeFailure(failure, writer, resumed ? "resume the run" : "start the run");
    }
  }
  const run = state.run!;

  const finish = async (
    subtype: SDKResultSubtype,
    result: string,
    errors: readonly string[],
    structuredResult?: unknown,
    // A model call that failed counts as a turn, though no reply was logged.
    numTurns: number = run.numTurns,
    pendingApprovals?: readonly PendingApproval[],
  ): Promise<SDKResultMessage> => {
    const extra = takePendingUsage();
    const usage = { ...run.usage };
    if (extra !== undefined) addUsage(usage, extra);
    let allErrors = errors;
    let finalSubtype = subtype;
    // An interrupted run is unfinished: its log ends with the interrupt (R14).
    if (pendingApprovals === undefined) {
      const entry: RunFinishedEntry =
        structuredResult !== undefined
          ? {
              v: RUN_LOG_VERSION,
              type: "run_finished",
              runId,
              subtype,
              result,
              structuredResult: toJson(structuredResult),
              errors,
              numTurns,
              usage,
            }
          : {
              v: RUN_LOG_VERSION,
              type: "run_finished",
              runId,
              subtype,
              result,
              errors,
              numTurns,
              usage,
            };
      if (writer === undefined || writer.failure !== undefined) {
        // Not stored, but the result's messages are the conversation as the log would give
        // it once the run ended (calls left without results answered or left out, H24), so
        // that they can be sent again with query(prompt, { messages }).
        state.apply(entry);
      } else {
        appendEntry(entry);
        const failure = await writer.flush();
        if (failure !== undefined) {
          if (failure instanceof SessionConflictError) {
            throw storeFailure(failure, writer, "finish");
          }
          // A step's caller retries the step: an end that is not in the log is no end.
          if (stepping !== undefined) throw storeFailure(failure, writer, "finish the run");
          finalSubtype = "error_during_execution";
          allErrors = [...errors, storeFailure(failure, writer, "finish the run").message];
        }
      }
    }
    // A run taken step by step (by workers) lasts from its first step, not this one's start.
    const durationMs =
      stepping !== undefined
        ? Math.max(0, Date.now() - Date.parse(run.startedTime))
        : performance.now() - startedAt;
    const message: SDKResultMessage = {
      type: "result",
      subtype: finalSubtype,
      result,
      structuredResult,
      isError: finalSubtype !== "success" && finalSubtype !== "interrupted",
      numTurns,
      durationMs,
      usage,
      errors: allErrors,
      sessionId,
      runId,
      parentToolUseId,
      messages: state.messages.slice(),
      ...(pendingApprovals !== undefined ? { pendingApprovals } : {}),
    };
    trace?.({
      type: "run_finished",
      time: performance.now(),
      sessionId,
      runId,
      subtype: finalSubtype,
      numTurns,
      durationMs,
      usage,
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
      runId,
      numTurns: run.numTurns,
      durationMs: performance.now() - startedAt,
    });
    // A step stopped because its lease no longer holds rejects with the fence's error (H28).
    const stopped = fencing?.stop.signal;
    return stopped?.aborted === true ? (stopped.reason as Error) : createAbortError(signal.reason);
  };
  /** After a step: waits for its entries to be stored (write-ahead, R6). */
  const stored = async (): Promise<SDKResultMessage | undefined> => {
    if (writer === undefined) return undefined;
    const failure = await writer.flush();
    if (failure === undefined) return undefined;
    if (failure instanceof SessionConflictError) throw storeFailure(failure, writer, "continue");
    // A step's caller retries the step from what the log holds.
    if (stepping !== undefined) throw storeFailure(failure, writer, "append to the run log");
    return finish("error_during_execution", "", [
      storeFailure(failure, writer, "append to the run log").message,
    ]);
  };

  // Tool sources (MCP servers and the like) are resolved before the run's first step.
  let sourceFailure: string | undefined;
  if (runtime.withSources !== undefined) {
    try {
      runtime = await runtime.withSources(signal);
    } catch (error) {
      if (signal.aborted) throw aborted();
      sourceFailure = errorMessage(error);
    }
  }
  const toolNames = runtime.tools.map((definition) => definition.name);
  if (decided !== undefined) {
    trace?.({
      type: "approval_decided",
      time: performance.now(),
      sessionId,
      runId,
      decisions: Object.entries(decided).map(([approvalId, decision]) => ({
        approvalId,
        approved: decision.approved,
        ...(decision.approved && decision.input !== undefined ? { edited: true } : {}),
      })),
    });
  }
  trace?.({
    type: "run_started",
    time: startedAt,
    sessionId,
    runId,
    agentName,
    provider: runtime.provider.name,
    model: runtime.model,
    tools: toolNames,
    parentToolUseId,
    ...(resumed ? { resumed: true } : {}),
  });
  // A run taken step by step introduces itself on its first step only.
  if (continuing === undefined)
    emit({
      type: "system",
      subtype: "init",
      model: runtime.model,
      tools: toolNames,
      sessionId,
      runId,
      parentToolUseId,
    });

  const runContext = new LatticeRunContext({
    runId,
    sessionId,
    agentName,
    depth: placement.depth,
    provider: runtime.provider,
    model: runtime.model,
    emit,
    addUsage: addChildUsage,
    chain: placement.chain ?? [agentName],
    mailbox: placement.mailbox,
    maxDepth: placement.maxDepth,
    trace,
    context: placement.context,
    mayStart,
  }) as unknown as RunContext;
  const context = placement.context;
  const beforeCall = beforeCallFor(runtime.hooks, trace, sessionId, runId);
  if (sourceFailure !== undefined) return finish("error_during_execution", "", [sourceFailure]);
  const onCallSettled = (outcome: ToolCallOutcome): void => {
    if (!isLoggable(outcome.status, signal.aborted)) return;
    const result = outcome.result;
    const extra = takePendingUsage();
    const block: ToolResultBlock = result.isError
      ? {
          type: "tool_result",
          tool_use_id: outcome.id,
          content: [...result.content],
          is_error: true,
        }
      : { type: "tool_result", tool_use_id: outcome.id, content: [...result.content] };
    const entry: Mutable<ToolResultEntry> = {
      v: RUN_LOG_VERSION,
      type: "tool_result",
      runId,
      toolUseId: outcome.id,
      toolName: outcome.name,
      status: outcome.status,
      block,
    };
    if (result.endTurn) {
      entry.endTurn = true;
      if (result.structuredResult !== undefined) {
        entry.structuredResult = toJson(result.structuredResult);
      }
    }
    if (extra !== undefined) entry.usage = extra;
    appendEntry(entry);
  };

  /** Pauses the run for approvals (R14): the interrupt is stored, then the result is given. */
  const interrupt = async (
    calls: readonly ToolBatchPendingApproval[],
  ): Promise<SDKResultMessage> => {
    const approvals: PendingApproval[] = calls.map((call) => ({
      approvalId: `appr_${randomToken(18)}`,
      toolUseId: call.id,
      toolName: call.name,
      kind: call.kind,
      input: toJson(call.input),
    }));
    if (writer === undefined) {
      if (placement.store === undefined) {
        return finish("error_during_execution", "", [
          `Tool call(s) ${calls.map((call) => `"${call.name}" (${call.id})`).join(", ")} need approval, but this run cannot pause: it is an agent tool's run inside another run. Mark the agent tool itself with needsApproval, or decide in beforeToolCall.`,
        ]);
      }
      // A run without a session keeps its log in the agent's store from now on, under its
      // sessionId, so that resume() finds it.
      writer = new SessionWriter(placement.store, sessionId, 0);
      for (const entry of written) writer.push(entry as unknown as SessionEntry);
      written.length = 0;
    }
    appendEntry({ v: RUN_LOG_VERSION, type: "interrupt", runId, approvals });
    trace?.({ type: "approval_requested", time: performance.now(), sessionId, runId, approvals });
    const failure = await writer.flush();
    if (failure !== undefined) {
      if (stepping !== undefined) throw storeFailure(failure, writer, "store the interrupt");
      if (failure instanceof SessionConflictError) throw storeFailure(failure, writer, "pause");
      return finish("error_during_execution", "", [
        storeFailure(failure, writer, "store the interrupt").message,
      ]);
    }
    return finish("interrupted", "", [], undefined, run.numTurns, approvals);
  };

  for (;;) {
    if ((mayStart !== undefined && !mayStart()) || signal.aborted) throw aborted();
    const step = nextStep(run, runtime.maxTurns);
    if (step.type === "finish") {
      return finish(step.subtype, step.result, step.errors, step.structuredResult);
    }
    if (stepping !== undefined) {
      // One step per call: the next one is the caller's (a worker's next job).
      const number = stepNumberOf(step, run);
      const expected = stepping.expected;
      if (stepping.taken !== undefined || (expected !== undefined && number !== expected)) {
        trace?.({
          type: "run_step_finished",
          time: performance.now(),
          sessionId,
          runId,
          step: stepping.taken,
          nextStep: number,
        });
        return {
          type: "step_yield",
          sessionId,
          runId,
          step: stepping.taken,
          nextStep: number,
          stale: stepping.taken === undefined,
        };
      }
      stepping.taken = number;
      if (start.kind === "step") start.onStepStart?.(number);
      if (fencing !== undefined) {
        // The step's fence reaches the store before anything runs: from now on a holder of an
        // older lease can log nothing (H28).
        writer!.raiseFence();
        await stored();
        if (!mayStart!() || signal.aborted) throw aborted();
      }
    }

    if (step.type === "model") {
      if (placement.beforeModelCall !== undefined && run.lastReply !== undefined) {
        const taken = placement.beforeModelCall();
        let texts: readonly string[];
        if (Array.isArray(taken)) texts = taken;
        else {
          try {
            texts = await raceAbort(taken, signal);
          } catch (error) {
            if (signal.aborted) {
              // Mail taken from the mailbox after the abort still goes to the log, for resume().
              Promise.resolve(taken).then((late) => {
                if (late.length > 0)
                  appendEntry({ v: RUN_LOG_VERSION, type: "mail", runId, texts: [...late] });
              }, ignore);
              throw aborted();
            }
            throw error;
          }
        }
        // In the log before anything else: an abort now leaves the mail for the resumed run.
        if (texts.length > 0) {
          appendEntry({ v: RUN_LOG_VERSION, type: "mail", runId, texts: [...texts] });
          if (writer !== undefined) {
            const failed = await stored();
            if (failed !== undefined) return failed;
          }
        }
        if (signal.aborted) throw aborted();
      }
      if (runtime.withSources !== undefined) {
        // A source whose list changed (MCP tools/list_changed) is seen from this turn on.
        try {
          runtime = await runtime.withSources(signal);
        } catch (error) {
          if (signal.aborted) throw aborted();
          return finish("error_during_execution", "", [errorMessage(error)]);
        }
      }
      if (mayStart !== undefined && !mayStart()) throw aborted();
      const turn = run.numTurns + 1;
      trace?.({
        type: "model_request_started",
        time: performance.now(),
        sessionId,
        runId,
        turn,
        messageCount: state.messages.length,
        maxTokens: runtime.request.maxTokens,
      });
      let response: ModelResponse | undefined;
      // Under a lease, a retry's wait ends with a check of it, made just before the provider
      // sends the retry: a process frozen during the wait sends nothing when it wakes (H28).
      let retryCheck: ReturnType<typeof setTimeout> | undefined;
      try {
        for await (const event of runtime.provider.stream({
          ...runtime.request,
          messages: state.messages,
          signal,
        })) {
          if (event.type === "response") {
            response = event.response;
            continue;
          }
          if (event.type === "retry") {
            if (mayStart !== undefined) {
              clearTimeout(retryCheck);
              // No retry once the run may start nothing more: the check below stops it.
              if (!mayStart()) break;
              retryCheck = checkBeforeRetry(mayStart, event.delayMs);
            }
            trace?.({
              type: "model_retry",
              time: performance.now(),
              sessionId,
              runId,
              turn,
              attempt: event.attempt,
              delayMs: event.delayMs,
              status: event.status,
              message: event.message,
            });
          }
          if (runtime.includePartialMessages) {
            emit({ type: "stream_event", event, sessionId, runId, parentToolUseId });
          }
        }
      } catch (error) {
        if (signal.aborted) throw aborted();
        const message = errorMessage(error);
        trace?.({
          type: "model_request_failed",
          time: performance.now(),
          sessionId,
          runId,
          turn,
          message,
          status: (error as { status?: number }).status,
        });
        return finish("error_during_execution", "", [message], undefined, turn);
      } finally {
        if (retryCheck !== undefined) clearTimeout(retryCheck);
      }
      if (signal.aborted || (mayStart !== undefined && !mayStart())) throw aborted();
      if (response === undefined) {
        return finish(
          "error_during_execution",
          "",
          [
            `The model provider "${runtime.provider.name}" ended its stream without a response. This is a bug in the provider adapter.`,
          ],
          undefined,
          turn,
        );
      }
      const content = response.message.content;
      const reported = response.usage;
      const usage: RunUsage = {
        inputTokens: reported.inputTokens,
        outputTokens: reported.outputTokens,
        cacheReadInputTokens: reported.cacheReadInputTokens ?? 0,
        cacheCreationInputTokens: reported.cacheCreationInputTokens ?? 0,
      };
      trace?.({
        type: "model_request_finished",
        time: performance.now(),
        sessionId,
        runId,
        turn,
        latencyMs: response.latencyMs,
        usage,
        retries: response.retries,
        stopReason: response.stopReason,
        responseId: response.id,
        responseModel: response.model !== "" ? response.model : undefined,
        requestId: response.requestId,
        toolCalls: countToolUses(content),
      });
      appendEntry({
        v: RUN_LOG_VERSION,
        type: "reply",
        runId,
        turn,
        message: { role: "assistant", content },
        stopReason: response.stopReason,
        usage,
      });
      if (writer !== undefined) {
        const failed = await stored();
        if (failed !== undefined) return failed;
      }
      continue;
    }

    // A batch: the latest reply's calls that have no logged result yet.
    const turn = run.numTurns;
    const batch = await runToolBatch({
      calls: step.calls.map((block) =>
        block.inputError === undefined
          ? { id: block.id, name: block.name, input: block.input }
          : { id: block.id, name: block.name, input: block.input, inputError: block.inputError },
      ),
      tools: runtime.toolMap,
      concurrency: runtime.concurrency,
      // A batch cut by a crash after its first result had been accepted by the policy (R18).
      policy: step.whole ? runtime.policy : undefined,
      signal,
      abortGraceMs: runtime.abortGraceMs,
      beforeCall,
      // Asked as each call would start: a run whose lease lapsed starts no handler (H28).
      mayStartCall: mayStart,
      createContext: (call: ToolBatchCall, _definition, callSignal): ToolContext => {
        const base: Mutable<ToolContext> = {
          signal: callSignal,
          toolUseId: call.id,
          toolName: call.name,
          run: runContext,
        };
        if (context !== undefined) base.context = context;
        if (trace !== undefined) {
          base.reportProgress = (progress) =>
            trace({
              type: "tool_progress",
              time: performance.now(),
              sessionId,
              runId,
              toolUseId: call.id,
              toolName: call.name,
              progress: progress.progress,
              total: progress.total,
              message: progress.message,
            });
        }
        return base;
      },
      onCallSettled,
      ...(runtime.toolTimeoutMs !== undefined ? { toolTimeoutMs: runtime.toolTimeoutMs } : {}),
      ...(step.decisions !== undefined ? { approvalDecisions: step.decisions } : {}),
      ...(trace !== undefined
        ? { onEvent: (event) => trace(toToolBatchTraceEvent(event, sessionId, runId, turn)) }
        : {}),
    });

    if (batch.pendingApprovals !== undefined && !signal.aborted) {
      return interrupt(batch.pendingApprovals);
    }
    const hookErrors: string[] = [];
    const onToolResult = runtime.hooks.onToolResult;
    if (onToolResult !== undefined && !batch.aborted) {
      for (const outcome of batch.results) {
        if (signal.aborted) break;
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
              runId,
              signal,
            }),
            signal,
          );
        } catch (error) {
          // Aborted while the hook was pending: no hook error, the run rejects below.
          if (signal.aborted) continue;
          hookError = errorMessage(error);
          hookErrors.push(
            `The onToolResult hook threw for tool call "${outcome.name}" (${outcome.id}): ${hookError}`,
          );
        }
        trace?.({
          type: "hook",
          time: performance.now(),
          sessionId,
          runId,
          hook: "onToolResult",
          toolUseId: outcome.id,
          durationMs: performance.now() - hookStarted,
          error: hookError,
        });
      }
    }
    const failed = writer !== undefined ? await stored() : undefined;
    if (batch.aborted || signal.aborted) throw aborted();
    if (failed !== undefined) return failed;
    if (hookErrors.length > 0) return finish("error_during_execution", "", hookErrors);
  }
}

/**
 * Refuses a new prompt on a session whose latest run is unfinished (R8): it would interleave
 * with that run, or leave its pending approvals unanswered.
 */
function assertNoUnfinishedRun(state: RunLogState, sessionId: string, version: number): void {
  const run = state.run;
  if (run === undefined || run.finished) return;
  const pending = run.pending;
  throw new SessionConflictError(
    sessionId,
    version,
    version,
    pending !== undefined
      ? `Session ${JSON.stringify(sessionId)} has a run waiting for approval of ${pending.length} tool call(s) (${pending.map((approval) => `${approval.toolName}: ${approval.approvalId}`).join(", ")}). A new prompt would leave those calls unanswered, so nothing was sent. Decide them first: agent.resume(${JSON.stringify(sessionId)}, { decisions: { [approvalId]: { approved: true } | { approved: false, reason } } }).`
      : `Session ${JSON.stringify(sessionId)} has an unfinished run (${run.runId}): it is still running, or it was cut by an abort or a crash. A new prompt would interleave with it, so nothing was sent. Continue it with agent.resume(${JSON.stringify(sessionId)}), or wait for it to finish.`,
  );
}

/**
 * Loads the session of a `step` start into `state`. Returns its version, and the latest run
 * when the step continues it (no prompt, or a prompt for a run that already started: a
 * repeated first step).
 *
 * @throws `SessionError` `session_not_found` without a prompt for an empty session, and
 *   `not_interrupted` when `runId` is given and the latest run is another one.
 */
async function loadStep(
  start: Extract<RunStart, { kind: "step" }>,
  state: RunLogState,
): Promise<{ readonly latest: LoggedRun | undefined; readonly version: number }> {
  const sessionId = start.sessionId;
  const snapshot = await loadSession(start.store, sessionId, state);
  const latest = state.run;
  const version = snapshot.version;
  if (start.prompt !== undefined && (latest === undefined || latest.runId !== start.runId)) {
    // A first step asked again after its run ended and another began: never a second start.
    if (
      start.runId !== undefined &&
      snapshot.entries.some((entry) => entry.type === "run_started" && entry.runId === start.runId)
    ) {
      throw new SessionError(
        "not_interrupted",
        sessionId,
        `step(): run ${JSON.stringify(start.runId)} already ran in session ${JSON.stringify(sessionId)} and ended before the session moved on; it is not started again.`,
      );
    }
    return { latest: undefined, version };
  }
  if (latest === undefined) {
    throw new SessionError(
      "session_not_found",
      sessionId,
      `step(): session ${JSON.stringify(sessionId)} has no run in ${storeLabel(start.store)}. Take the first step of a run with agent.step(${JSON.stringify(sessionId)}, { prompt }).`,
    );
  }
  if (start.runId !== undefined && latest.runId !== start.runId) {
    throw new SessionError(
      "not_interrupted",
      sessionId,
      `step(): run ${JSON.stringify(start.runId)} is not the latest run of session ${JSON.stringify(sessionId)} (that is ${JSON.stringify(latest.runId)}), so it cannot take a step; it ended before the session moved on.`,
    );
  }
  return { latest, version };
}

/**
 * The result of a run that ended, rebuilt from the log (a step taken again after the run
 * ended): from its `run_finished` entry, or, for a run paused for approvals, the `interrupted`
 * result with its pending approvals. Emitted and returned as the run gave it, its `durationMs`
 * counted from the run's start.
 */
function rebuiltResult(
  run: LoggedRun,
  state: RunLogState,
  sessionId: string,
  placement: RunPlacement,
): SDKResultMessage {
  const entry = run.finishedEntry;
  const base = {
    type: "result",
    durationMs: Math.max(0, Date.now() - Date.parse(run.startedTime)),
    sessionId,
    runId: run.runId,
    parentToolUseId: placement.parentToolUseId,
    messages: state.messages.slice(),
  } as const;
  const message: SDKResultMessage =
    entry !== undefined
      ? {
          ...base,
          subtype: entry.subtype,
          result: entry.result,
          structuredResult: entry.structuredResult,
          isError: entry.subtype !== "success" && entry.subtype !== "interrupted",
          numTurns: entry.numTurns,
          usage: entry.usage,
          errors: entry.errors,
        }
      : {
          ...base,
          subtype: "interrupted",
          result: "",
          structuredResult: undefined,
          isError: false,
          numTurns: run.numTurns,
          usage: { ...run.usage },
          errors: [],
          pendingApprovals: run.pending ?? [],
        };
  placement.emit(message);
  return message;
}

/**
 * Checks a resume's decisions against the pending approvals (R16): one for every pending id,
 * none for another (own keys only). Returns the decisions to log, or `undefined` when nothing
 * was pending. `method` names the call in messages (`resume()`, `step()`).
 */
function checkDecisions(
  method: string,
  sessionId: string,
  pending: readonly PendingApproval[] | undefined,
  given: { readonly [approvalId: string]: LoggedDecision } | undefined,
): { readonly [approvalId: string]: LoggedDecision } | undefined {
  const ids = Object.keys(given ?? {});
  const pendingIds = new Set((pending ?? []).map((approval) => approval.approvalId));
  const unknown = ids.filter((id) => !pendingIds.has(id));
  if (unknown.length > 0) {
    throw new SessionError(
      "approval_unknown",
      sessionId,
      pending === undefined
        ? `${method}: session ${JSON.stringify(sessionId)} is not waiting for approvals, so the decision(s) for ${unknown.map((id) => describeValue(id)).join(", ")} cannot apply (already decided, or never asked). Nothing ran. If another process resumed it, its run goes on there; resume() without decisions is only for a run cut by a crash or an abort.`
        : `${method}: ${unknown.map((id) => describeValue(id)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not pending in session ${JSON.stringify(sessionId)} (already decided, or never asked). The pending approvals are ${[...pendingIds].map((id) => JSON.stringify(id)).join(", ")}. Nothing ran.`,
    );
  }
  if (pending === undefined) return undefined;
  const has = (id: string): boolean => given !== undefined && Object.hasOwn(given, id);
  const missing = pending.filter((approval) => !has(approval.approvalId));
  if (missing.length > 0) {
    throw new SessionError(
      "approval_missing",
      sessionId,
      `${method}: session ${JSON.stringify(sessionId)} waits for a decision on ${missing.map((approval) => `${approval.toolName} (${approval.approvalId})`).join(", ")}. Pass one for each: agent.resume(${JSON.stringify(sessionId)}, { decisions: { [approvalId]: { approved: true } | { approved: true, input } | { approved: false, reason } } }). Nothing ran.`,
    );
  }
  // Checked and copied as JSON where they entered (checkApprovalDecisions, H26); defined as
  // own properties, whatever the ids.
  return Object.fromEntries(
    pending.map((approval) => [approval.approvalId, given![approval.approvalId]!]),
  );
}

/**
 * Loads a session's run log and folds it into `state`, checking each entry as it goes (H24).
 *
 * @throws `SessionError` `session_store_failed` when the store fails or answers something that
 *   is not a snapshot; `session_log_version` or `session_log_invalid` for a log this release
 *   cannot read, naming the entry.
 */
async function loadSession(
  store: SessionStore,
  sessionId: string,
  state: RunLogState,
): Promise<{ readonly entries: readonly RunLogEntry[]; readonly version: number }> {
  let snapshot: SessionSnapshot;
  try {
    snapshot = await store.load(sessionId);
  } catch (error) {
    throw new SessionError(
      "session_store_failed",
      sessionId,
      `${storeLabel(store)} failed to load session ${JSON.stringify(sessionId)}: ${errorMessage(error)}. Nothing ran; retry once the store works.`,
      { cause: error },
    );
  }
  const { entries, version } = (snapshot ?? {}) as Partial<SessionSnapshot>;
  if (!Array.isArray(entries) || !Number.isSafeInteger(version) || (version as number) < 0) {
    throw new SessionError(
      "session_store_failed",
      sessionId,
      `${storeLabel(store)} answered load(${JSON.stringify(sessionId)}) with ${describeValue(snapshot)}, not a snapshot ({ entries: an array, version: an integer >= 0 }). Nothing ran; fix the store's load().`,
    );
  }
  for (const entry of entries) state.load(sessionId, entry);
  return { entries: entries as unknown as readonly RunLogEntry[], version: version as number };
}

/**
 * A check of `mayStart` due 1 ms before a provider's retry wait of `delayMs` ends, so that it
 * runs before the provider's own timer even when both are overdue (a process frozen during
 * the wait): when the run may start nothing more, `mayStart` stops it (a step's lease check
 * aborts the step's signal), and the provider's wait ends with the abort instead of a retry
 * (H28). Does not keep the process alive.
 */
function checkBeforeRetry(mayStart: () => boolean, delayMs: number): ReturnType<typeof setTimeout> {
  const timer = setTimeout(mayStart, Math.max(0, delayMs - 1));
  timer.unref?.();
  return timer;
}

/** The error a run stops with when its store failed; a conflict stays a conflict (R8). */
function storeFailure(failure: unknown, writer: SessionWriter, doing: string): LatticeError {
  const sessionId = writer.sessionId;
  // The writer must stop, not reload: the error says so as it is (H28).
  if (failure instanceof SessionFencedError) return failure;
  if (failure instanceof SessionConflictError) {
    return new SessionConflictError(
      sessionId,
      failure.expectedVersion,
      failure.actualVersion,
      `Session ${JSON.stringify(sessionId)} was written by another run while this one tried to ${doing}: another process started or resumed a run on it. Nothing of this run was appended after that; the other run owns the session now.`,
    );
  }
  return new SessionError(
    "session_store_failed",
    sessionId,
    `${storeLabel(writer.store)} failed to ${doing} of session ${JSON.stringify(sessionId)}: ${errorMessage(failure)}. The entries appended before stay; once the store works, continue with agent.resume(${JSON.stringify(sessionId)}).`,
    { cause: failure },
  );
}

/** How messages name a store: by its `name`, when it has one. */
function storeLabel(store: SessionStore): string {
  return typeof store.name === "string" && store.name !== ""
    ? `the session store ${store.name}`
    : "the session store";
}

function ignore(): void {}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A value as the log keeps it: what a JSON round trip gives back. */
function toJson(value: unknown): JsonValue {
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}

function countToolUses(content: readonly ContentBlock[]): number {
  let count = 0;
  for (const block of content) if (block.type === "tool_use") count++;
  return count;
}

/** The scheduler's per-call hook: the user's `beforeToolCall`, traced. */
function beforeCallFor(
  hooks: AgentHooks,
  trace: ((event: TraceEvent) => void) | undefined,
  sessionId: string,
  runId: string,
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
        runId,
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
        runId,
        hook: "beforeToolCall",
        toolUseId: call.id,
        durationMs: performance.now() - started,
        error: error instanceof Error ? error.message : String(error),
      });
      throw error;
    }
  };
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

/** Options of {@link endRun}. Checked strictly. */
export interface EndRunOptions {
  /** The session's store. */
  readonly store: SessionStore;
  /** The session. */
  readonly sessionId: string;
  /** The run to end: it must be the session's latest run. Default: the latest run. */
  readonly runId?: string;
  /** Why the run ends; becomes the result's `errors`. At least one non-empty string. */
  readonly errors: readonly string[];
  /**
   * The lease the caller ends the run under, when steps of the session are spread over
   * workers (H28), as `StepOptions.lease`: the end is appended with its `fence`, and nothing is
   * appended once `held()` answers `false`. Default: none (an unfenced append).
   */
  readonly lease?: StepLease;
}

const END_RUN_OPTION_KEYS: ReadonlySet<string> = new Set([
  "store",
  "sessionId",
  "runId",
  "errors",
  "lease",
]);

/**
 * Ends a session's unfinished run as failed, without running anything: appends its
 * `run_finished` entry (`error_during_execution`, with `errors`, the turns and usage the log
 * counts) and returns the result message. Calls of its open batch that have no result get an
 * `is_error` result saying so, so the conversation stays valid for the next prompt. For a run that cannot go on — a step that fails on
 * every attempt, say — so that the session takes new prompts again. A run that had already
 * ended gives its result again.
 *
 * @param options - {@link EndRunOptions}.
 * @throws `InvalidOptionError` for a bad option; `SessionError` `session_not_found` or `not_interrupted` (the latest run is another
 *   one), `SessionConflictError` when another writer appended meanwhile (nothing appended);
 *   `SessionFencedError` when `lease` no longer holds or a newer holder raised the session's
 *   fence (nothing appended).
 */
export async function endRun(options: EndRunOptions): Promise<SDKResultMessage> {
  assertKnownOptions(options, END_RUN_OPTION_KEYS, "endRun():");
  const { store, sessionId } = options;
  if (store === null || typeof store !== "object" || typeof store.append !== "function") {
    throw new InvalidOptionError(
      "endRun():",
      "store",
      `must be a SessionStore, received ${describeValue(store)}.`,
    );
  }
  checkSessionId("endRun():", sessionId);
  const lease = options.lease;
  checkStepLease("endRun():", lease);
  const errors = options.errors;
  if (
    !Array.isArray(errors) ||
    errors.length === 0 ||
    !errors.every((text) => typeof text === "string" && text !== "")
  ) {
    throw new InvalidOptionError(
      "endRun():",
      "errors",
      `must be a non-empty array of non-empty strings saying why the run ends, received ${describeValue(errors)}.`,
    );
  }
  const state = new RunLogState();
  const snapshot = await loadSession(store, sessionId, state);
  const run = state.run;
  if (run === undefined) {
    throw new SessionError(
      "session_not_found",
      sessionId,
      `endRun(): session ${JSON.stringify(sessionId)} has no run in ${storeLabel(store)}.`,
    );
  }
  if (options.runId !== undefined && run.runId !== options.runId) {
    throw new SessionError(
      "not_interrupted",
      sessionId,
      `endRun(): run ${JSON.stringify(options.runId)} is not the latest run of session ${JSON.stringify(sessionId)} (that is ${JSON.stringify(run.runId)}); it had ended.`,
    );
  }
  const placement: RunPlacement = { parentToolUseId: null, emit: ignore, depth: 0 };
  if (!run.finished) {
    // Calls of an open batch get an error result, so that the conversation stays one the
    // model API accepts (every tool_use answered) when the session takes its next prompt.
    const entries: RunLogEntry[] = [];
    const batch = run.batch;
    if (batch !== undefined && !batch.complete) {
      // One result per id, also when the reply repeated an id (H13): a second would make the
      // log unreadable (H24).
      const answered = new Set(batch.results.keys());
      for (const call of batch.toolUses) {
        if (answered.has(call.id)) continue;
        answered.add(call.id);
        entries.push({
          v: RUN_LOG_VERSION,
          type: "tool_result",
          runId: run.runId,
          toolUseId: call.id,
          toolName: call.name,
          status: "cancelled",
          block: {
            type: "tool_result",
            tool_use_id: call.id,
            content: [
              {
                type: "text",
                text: `Tool call "${call.name}" (${call.id}) has no result: the run was ended before it settled (it may have started). ${errors.join(" ")}`,
              },
            ],
            is_error: true,
          },
        });
      }
    }
    const entry: RunFinishedEntry = {
      v: RUN_LOG_VERSION,
      type: "run_finished",
      runId: run.runId,
      subtype: "error_during_execution",
      result: "",
      errors: [...errors],
      numTurns: run.numTurns,
      usage: { ...run.usage },
    };
    entries.push(entry);
    if (lease === undefined) {
      await store.append(sessionId, snapshot.version, entries as unknown as SessionEntry[]);
    } else {
      if (!lease.held()) throw leaseLapsed(sessionId, lease.fence);
      await store.append(sessionId, snapshot.version, entries as unknown as SessionEntry[], {
        fence: lease.fence,
      });
    }
    for (const appended of entries) state.apply(appended);
  }
  return rebuiltResult(run, state, sessionId, placement);
}
