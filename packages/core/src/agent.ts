import type { ContentBlock, ModelMessage, ModelProviderV1 } from "@lattice/providers";
import type { ApprovalDecision } from "@lattice/scheduler";
import type { CompactOptions, CompactResult } from "./compact-session.js";
import type { Mailbox } from "./mailbox.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";
import type { SessionStore } from "./session-store.js";
import type { OutputSchema } from "./steering-options.js";
import type { StepLease } from "./step-lease.js";

/** Options of one query. Checked strictly. */
export interface QueryOptions<TContext = unknown> {
  /** Aborts the run: started handlers settle, queued calls never start, the query rejects with an `AbortError` (T22). */
  readonly signal?: AbortSignal;
  /**
   * A conversation to continue, kept by the caller (R4): sent first, then the prompt. Pass
   * the `messages` of an earlier run's result. Checked before any model call (a user message
   * first, every `tool_use` answered by a `tool_result` in the next message, no result without
   * its call, no unanswered calls at the end); a bad history throws `InvalidOptionError`
   * naming the message index and the rule. Not copied into any store. Not with `sessionId`.
   */
  readonly messages?: readonly ModelMessage[];
  /**
   * A stored conversation to continue (R6): the agent's `sessionStore` is read, the prompt
   * appended, and every step's outcome appended before the next step starts, so a crash loses
   * at most the reply being streamed and the calls that had not settled (R18). A new id starts
   * a new session. A session whose last run is unfinished refuses a new prompt with
   * `session_conflict` (R8): continue it with `resume()`. Not with `messages`. A non-empty
   * string of well-formed UTF-16 (no lone surrogate, H25); a damaged stored log is refused
   * with `SessionError` `session_log_invalid` (H24).
   */
  readonly sessionId?: string;
  /**
   * A value for your tools, read as `ctx.context` (R9): the user, a database handle, a tenant.
   * Agent tools pass it to their child runs. Never sent to the model, never stored.
   */
  readonly context?: TContext;
  /**
   * The run's own typed answer (L1), instead of the agent's `outputSchema`: the result carries
   * `output`, typed from it. Asked for in the agent's `outputMode`. A run started with one is
   * resumed (or stepped) with the same one: pass it to `resume()` too.
   */
  readonly outputSchema?: OutputSchema;
}

/** Options of `agent.resume()`. Checked strictly. */
export interface ResumeOptions<TContext = unknown> {
  /**
   * Decisions on the pending approvals of an interrupted run, by approval id (R15): one for
   * each `pendingApprovals` entry of the interrupted result. `{ approved: true }` runs the
   * call, `{ approved: true, input }` runs it with an edited input (validated again),
   * `{ approved: false, reason }` answers it with an `is_error` result carrying the reason.
   * An edited input must be a JSON object within the bounds of a model's tool input
   * (`MAX_TOOL_INPUT_DEPTH` levels, `MAX_TOOL_INPUT_LENGTH` characters of JSON): otherwise the
   * resume rejects with `InvalidOptionError` before anything is stored (H26).
   */
  readonly decisions?: { readonly [approvalId: string]: ApprovalDecision };
  /** Aborts the resumed run, as `QueryOptions.signal` does; the run stays resumable. */
  readonly signal?: AbortSignal;
  /** The value tools read as `ctx.context` in the resumed run (R9); it was never stored. */
  readonly context?: TContext;
  /** The typed answer of a run started with `query(prompt, { outputSchema })`: the same schema (L12). */
  readonly outputSchema?: OutputSchema;
}

/** Options of `agent.step()`. Checked strictly. */
export interface StepOptions<TContext = unknown> {
  /**
   * Starts a new run on the session with this prompt and takes its first step (a model call).
   * Refused with `session_conflict` while the session's latest run is unfinished (R8), unless
   * that run has `runId`: then this is the same first step asked again, and the run goes on.
   */
  readonly prompt?: Prompt;
  /**
   * The run the step belongs to. With `prompt`: the new run's id (default: a fresh UUID), so a
   * caller that must name the run before it starts (a job queue) can. Without: the session's
   * latest run must be this one (`SessionError` `not_interrupted` otherwise).
   */
  readonly runId?: string;
  /**
   * Takes the step only when the log is at this step (`AgentStepResult.nextStep` of the step
   * before); otherwise nothing runs and the result is `{ status: "stale" }` with the step the
   * log is at. What makes a step taken twice (a job delivered again) harmless. A step asked
   * again of a run that has ended gives its result again; of a run paused for approvals (and
   * no `decisions`), its `interrupted` result with the pending approvals.
   */
  readonly expectedStep?: number;
  /** Decisions on the pending approvals of an interrupted run, as `ResumeOptions.decisions` (R15). */
  readonly decisions?: { readonly [approvalId: string]: ApprovalDecision };
  /** Aborts the step, as `QueryOptions.signal` does; the run stays resumable. */
  readonly signal?: AbortSignal;
  /** The value tools read as `ctx.context` (R9); never stored. */
  readonly context?: TContext;
  /**
   * Receives the step's messages as they are emitted: the run's `system` message (first step
   * only), `assistant`, `user`, `stream_event`s and, when the run ends within the step, its
   * `result`. A listener that throws is ignored (H1).
   */
  readonly onMessage?: (message: SDKMessage) => void;
  /**
   * Called once as the step starts (after the log was checked and any `decisions` stored, so
   * they were accepted), with the step's number. Not called for a stale step or a run that
   * ends before its step. A listener that throws is ignored (H1).
   */
  readonly onStepStart?: (step: number) => void;
  /**
   * Where handoffs of the step's agent tools go when the tool has no mailbox of its own, as a
   * team's mailbox is for its members' runs. A job queue passes one that runs the member
   * elsewhere and routes its reply back to this session.
   */
  readonly mailbox?: Mailbox;
  /**
   * Called before each model call that follows a reply; the texts it returns (replies to
   * handoffs, say, written with `mailboxMessageText`) are appended to the run log as a `mail`
   * entry and sent with that call, as a team does for its members.
   */
  readonly takeMail?: () => readonly string[] | Promise<readonly string[]>;
  /**
   * The agents that led to this run, from the first one to this one, when it works on a
   * handoff (`MailboxMessage.chain`): handoffs and calls deeper than the depth limit are
   * refused, which stops cycles. Default: this agent alone.
   */
  readonly chain?: readonly string[];
  /**
   * The lease the step runs under, when steps of the session are spread over workers (H28):
   * the step's appends carry its `fence`, the step raises the session's fence to it before it
   * runs anything, and it stops before any model request (or retry of one), tool call or
   * append, also in the runs of its agent tools, once `held()` answers `false`, rejecting with
   * `SessionFencedError` (code `"session_fenced"`); so does
   * an append the store refuses because a newer lease holder raised the fence. A caller that
   * gets that error must drop the step: the lease's new holder goes on. Default: none.
   */
  readonly lease?: StepLease;
  /** The run's own typed answer (L1), as `QueryOptions.outputSchema`; pass it on every step. */
  readonly outputSchema?: OutputSchema;
}

/**
 * What `agent.step()` did:
 * - `"continue"`: it took step `step` (a model call or a batch), stored its outcome, and the
 *   run goes on with step `nextStep`.
 * - `"ended"`: the run ended, or paused for approvals (`result.subtype === "interrupted"`),
 *   within the step; `result` is its result message. A run that had already ended gives its
 *   result again, rebuilt from the log.
 * - `"stale"`: the log was not at `expectedStep` (the step was taken before); nothing ran.
 *   `nextStep` is the step the log is at.
 */
export type AgentStepResult<TOutput = unknown> =
  | {
      readonly status: "continue";
      readonly sessionId: string;
      readonly runId: string;
      /** The step taken: the model call of turn `t` is step `2t - 2`, its batch step `2t - 1`. */
      readonly step: number;
      /** The step that comes next. */
      readonly nextStep: number;
    }
  | {
      readonly status: "ended";
      readonly sessionId: string;
      readonly runId: string;
      readonly result: SDKResultMessage<TOutput>;
    }
  | {
      readonly status: "stale";
      readonly sessionId: string;
      readonly runId: string;
      /** The step the log is at. */
      readonly nextStep: number;
    };

/** What a message may hold: a string, or text and image blocks. */
export type Prompt = string | readonly ContentBlock[];

/**
 * A run in progress, as `agent.query()` and `agent.resume()` return it: iterate it for the
 * run's messages, or await `finalResult()` for the result alone. The run starts on the first
 * `next()` (or `finalResult()`); it can be iterated once.
 */
export interface AgentQuery<TOutput = unknown> extends AsyncIterable<SDKMessage<TOutput>> {
  /**
   * The run's result message. When nobody iterates the query, this drains it; when someone
   * does, this resolves as the result passes by. The same promise on every call.
   *
   * @throws an error named `"AbortError"` when the run was aborted; the run's failure (for
   *   example `session_conflict`) when it failed before its result.
   */
  finalResult(): Promise<SDKResultMessage<TOutput>>;
}

/**
 * `[Symbol.asyncDispose]()` where the TypeScript setup knows the symbol (`lib: esnext.disposable`
 * or `@types/node`), so `await using agent = createAgent(...)` type-checks there; nothing where
 * it does not, so projects without those types still compile.
 */
export type AsyncDisposeWhereKnown = SymbolConstructor extends {
  readonly asyncDispose: infer S extends symbol;
}
  ? { readonly [K in S]: () => Promise<void> }
  : Record<never, never>;

/**
 * A runnable agent: what `createAgent` and `createBareAgent` return.
 *
 * @typeParam TContext - The type of `QueryOptions.context`, read by tools as `ctx.context`.
 * @typeParam TOutput - The type of `result.output`: what the agent's `outputSchema` validates to.
 */
export interface Agent<TContext = unknown, TOutput = unknown> extends AsyncDisposeWhereKnown {
  /** The agent's name, when it has one. */
  readonly name: string | undefined;
  /** The model the agent talks to. */
  readonly model: string;
  /** The provider the agent talks through. */
  readonly provider: ModelProviderV1;
  /** Where the agent's sessions are kept: its `sessionStore` option, or its own memory store. */
  readonly sessionStore: SessionStore;
  /**
   * Runs the agent on a prompt and streams its messages: `system`/`init`, then per turn an
   * `assistant` message and a `user` message of tool results, `stream_event`s when
   * `includePartialMessages` is on, and last the `result`. The run starts when you start
   * iterating. Breaking out of the loop aborts it: the iterator's `return()` (which
   * `break` awaits) resolves once every handler that had started has settled (T22).
   *
   * @throws `InvalidOptionError` at once for a bad prompt or option; (from the iterator) an
   *   error named `"AbortError"` when `options.signal` aborts, `SessionConflictError`
   *   (`session_conflict`) when the session has an unfinished run or another run won it (R8).
   */
  query<Schema extends OutputSchema>(
    prompt: Prompt,
    options: QueryOptions<TContext> & { readonly outputSchema: Schema },
  ): AgentQuery<OutputOf<Schema>>;
  query(prompt: Prompt, options?: QueryOptions<TContext>): AgentQuery<TOutput>;
  /**
   * Continues the unfinished run of a stored session (R18): one cut by an abort or a killed
   * process. Calls whose results are logged never run again; the others run again
   * (at-least-once); a log that ends after a prompt, a batch or a mail calls the model next.
   * `numTurns`, `usage` and `runId` continue; `messages` end as an uninterrupted run's would
   * (R19). Returns the same kind of query as `query()`.
   *
   * @throws `InvalidOptionError` at once for a session id that is not well-formed UTF-16
   *   (H25) or a bad option; (from the iterator) `SessionError` `session_not_found` for an
   *   unknown session, `not_interrupted` when its last run ended and `session_log_invalid` for
   *   a damaged log (H24); `InvalidOptionError` for an edited input past the bounds (H26);
   *   `SessionConflictError` when another process resumed it first (exactly one wins).
   */
  resume<Schema extends OutputSchema>(
    sessionId: string,
    options: ResumeOptions<TContext> & { readonly outputSchema: Schema },
  ): AgentQuery<OutputOf<Schema>>;
  resume(sessionId: string, options?: ResumeOptions<TContext>): AgentQuery<TOutput>;
  /**
   * Runs the agent to the end and resolves with its result message:
   * `query(prompt, options).finalResult()`.
   *
   * @throws an error named `"AbortError"` when `options.signal` aborts.
   */
  run<Schema extends OutputSchema>(
    prompt: Prompt,
    options: QueryOptions<TContext> & { readonly outputSchema: Schema },
  ): Promise<SDKResultMessage<OutputOf<Schema>>>;
  run(prompt: Prompt, options?: QueryOptions<TContext>): Promise<SDKResultMessage<TOutput>>;
  /**
   * Takes one step of a stored session's run — its first model call on a `prompt`, or the next
   * model call or batch of tool calls — stores the step's outcome, and returns. The run as a
   * step function over its log (R2), for callers that spread a run over jobs, workers or
   * processes (`@lattice/bullmq` does): each call reads the log, so any process with the same
   * agent and store can take the next step. Steps of one session must not run at once: of two
   * racing steps only one can append its outcome (R8), the other fails with `session_conflict`
   * having appended nothing — but its model call or tool handlers may have run. Hold a lease
   * per session, and pass it as `lease` so that a holder whose lease lapsed can neither log
   * nor start anything more (H28).
   *
   * @example
   * ```ts
   * let step = await agent.step("s1", { prompt: "Plan the release" });
   * while (step.status === "continue") {
   *   step = await agent.step("s1", { expectedStep: step.nextStep });
   * }
   * ```
   * @throws `InvalidOptionError` at once for a bad option; an error named `"AbortError"` when
   *   `signal` aborts; `SessionConflictError` as `query()` and `resume()` do; `SessionError`
   *   (`session_not_found`, `not_interrupted`, `approval_missing`, `approval_unknown`, ...) as
   *   `resume()` does; `SessionFencedError` when the step's `lease` no longer holds or a newer
   *   holder raised the session's fence (drop the step).
   */
  step(sessionId: string, options?: StepOptions<TContext>): Promise<AgentStepResult<TOutput>>;
  /**
   * Makes a stored session's conversation smaller now, between runs (C9: a chat's `/compact`):
   * the agent's `contextManagement.strategies` (or `options.strategies`, default
   * `[compact()]`) each run once, in order. Each change is a `compaction` entry with trigger
   * `"manual"`; the log keeps every original entry, and the session gets a checkpoint (C8).
   * The summary's model call is not part of a run: its usage is in the returned result.
   *
   * @example
   * ```ts
   * const done = await agent.compact("chat-1");
   * console.log(`${done.messagesBefore} → ${done.messagesAfter} messages, ${done.tokensBefore} → ${done.tokensAfter} tokens`);
   * ```
   * @throws `SessionError` `session_not_found` for a session without a run, `not_interrupted`
   *   while its run is unfinished; `InvalidOptionError` for a bad option; a `LatticeError`
   *   `compaction_failed` when a strategy failed (the summary's model call, a function's
   *   conversation), nothing appended; an error named `"AbortError"` when `signal` aborts.
   */
  compact(sessionId: string, options?: CompactOptions): Promise<CompactResult>;
  /**
   * Releases the agent's tool sources (MCP connections and the processes behind them). Safe to
   * call twice; runs started afterwards connect again. Agents without sources have nothing to
   * release. `await using agent = createAgent(...)` calls it at the end of the scope.
   */
  close(): Promise<void>;
}

/** The type a schema validates to. */
export type OutputOf<Schema extends OutputSchema> = NonNullable<
  Schema["~standard"]["types"]
>["output"];
