import { statSync } from "node:fs";
import type {
  ContentBlock,
  ModelMessage,
  ModelProviderV1,
  ModelRequest,
  ModelToolSpec,
} from "@lattice/providers";
import type { ApprovalDecision } from "@lattice/scheduler";
import { catchRejection, createAbortError } from "@lattice/scheduler/internal";
import {
  type AnyToolDefinition,
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  InvalidOptionError,
  LatticeError,
  type ToolSource,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import {
  type AgentOptions,
  assertUniqueToolNames,
  resolveProvider,
  type ValidatedAgentOptions,
  validateAgentOptions,
} from "./agent-options.js";
import type { AgentRuntime } from "./agent-runtime.js";
import { checkApprovalDecisions } from "./check-approval-decisions.js";
import { checkHistory } from "./check-history.js";
import { contentBlocksProblem } from "./content-blocks-problem.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { assertMailbox, type Mailbox } from "./mailbox.js";
import { memorySessionStore } from "./memory-session-store.js";
import { MessageChannel } from "./message-channel.js";
import { driveRun, runAgent } from "./run-agent.js";
import type { RunPlacement } from "./run-placement.js";
import type { RunStart } from "./run-start.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";
import type { SessionStore } from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";
import { checkStepLease, type StepLease } from "./step-lease.js";
import { buildSystemPrompt, hasConcurrentTools } from "./system-prompt.js";

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
}

const QUERY_OPTION_KEYS: ReadonlySet<string> = new Set([
  "signal",
  "messages",
  "sessionId",
  "context",
]);

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
}

const RESUME_OPTION_KEYS: ReadonlySet<string> = new Set(["signal", "context", "decisions"]);

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
}

const STEP_OPTION_KEYS: ReadonlySet<string> = new Set([
  "prompt",
  "runId",
  "expectedStep",
  "decisions",
  "signal",
  "context",
  "onMessage",
  "onStepStart",
  "mailbox",
  "takeMail",
  "chain",
  "lease",
]);

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
export type AgentStepResult =
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
      readonly result: SDKResultMessage;
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
export interface AgentQuery extends AsyncIterable<SDKMessage> {
  /**
   * The run's result message. When nobody iterates the query, this drains it; when someone
   * does, this resolves as the result passes by. The same promise on every call.
   *
   * @throws an error named `"AbortError"` when the run was aborted; the run's failure (for
   *   example `session_conflict`) when it failed before its result.
   */
  finalResult(): Promise<SDKResultMessage>;
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
 */
export interface Agent<TContext = unknown> extends AsyncDisposeWhereKnown {
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
  query(prompt: Prompt, options?: QueryOptions<TContext>): AgentQuery;
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
  resume(sessionId: string, options?: ResumeOptions<TContext>): AgentQuery;
  /**
   * Runs the agent to the end and resolves with its result message:
   * `query(prompt, options).finalResult()`.
   *
   * @throws an error named `"AbortError"` when `options.signal` aborts.
   */
  run(prompt: Prompt, options?: QueryOptions<TContext>): Promise<SDKResultMessage>;
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
  step(sessionId: string, options?: StepOptions<TContext>): Promise<AgentStepResult>;
  /**
   * Releases the agent's tool sources (MCP connections and the processes behind them). Safe to
   * call twice; runs started afterwards connect again. Agents without sources have nothing to
   * release. `await using agent = createAgent(...)` calls it at the end of the scope.
   */
  close(): Promise<void>;
}

/** Which factory assembles an agent: `createAgent` or `createBareAgent`. Internal. */
export type Flavor = "standard" | "bare";

/**
 * Creates the standard agent: the loop, plus the SDK's system-prompt guidance (the note on
 * parallel calls, T17, when some tools can run concurrently) and the built-in tools named in
 * `builtinTools`, confined to `cwd`.
 *
 * With no `provider`, talks the Anthropic Messages API at `baseURL` (default Anthropic;
 * `https://api.deepseek.com/anthropic` for DeepSeek) with `apiKey` or the environment's key
 * (T34).
 *
 * @example
 * ```ts
 * const agent = createAgent({ model: "claude-sonnet-4-6", tools: [search] });
 * const result = await agent.run("Find the release notes");
 * ```
 *
 * @param options - {@link AgentOptions}, or a definition from `defineAgent`.
 * @throws `UnknownOptionError` for an unknown key (T31, T32).
 * @throws `InvalidOptionError` for a bad value, a missing `model`, or duplicate tool names.
 */
export function createAgent<TContext = unknown>(
  options: AgentOptions | AgentDefinition,
): Agent<TContext> {
  return assemble<TContext>(options, "standard");
}

/**
 * Creates an agent that runs the same loop with nothing added: your system prompt as given,
 * your tools only, no built-in tools.
 *
 * @param options - {@link AgentOptions} (without `builtinTools`), or a definition.
 * @throws `UnknownOptionError` for an unknown key (T31, T32).
 * @throws `InvalidOptionError` for a bad value, a missing `model`, or `builtinTools`.
 */
export function createBareAgent<TContext = unknown>(
  options: AgentOptions | AgentDefinition,
): Agent<TContext> {
  return assemble<TContext>(options, "bare");
}

function assemble<TContext>(
  options: AgentOptions | AgentDefinition,
  flavor: Flavor,
): Agent<TContext> {
  const checked = checkAgentOptions(options, flavor);
  const prepared = prepareAgent(checked, flavor, undefined);
  const store = checked.validated.options.sessionStore ?? memorySessionStore();
  const agentName = prepared.name;
  const agent: Agent<TContext> = {
    name: prepared.name,
    model: prepared.model,
    provider: prepared.provider,
    sessionStore: store,
    query(prompt, queryOptions) {
      assertKnownOptions(queryOptions, QUERY_OPTION_KEYS, "QueryOptions:");
      checkSignal("QueryOptions:", queryOptions?.signal);
      validatePrompt(prompt);
      const sessionId = queryOptions?.sessionId;
      if (sessionId !== undefined) {
        checkSessionId("QueryOptions:", sessionId);
        if (queryOptions?.messages !== undefined) {
          throw new InvalidOptionError(
            "QueryOptions:",
            "messages",
            `cannot be combined with "sessionId": session ${JSON.stringify(sessionId)} keeps its own history in the agent's sessionStore. Pass sessionId to continue the stored conversation, or messages to continue one you keep.`,
          );
        }
      }
      const history =
        queryOptions?.messages === undefined ? undefined : checkHistory(queryOptions.messages);
      const start: RunStart = {
        kind: "prompt",
        prompt,
        ...(history !== undefined ? { history } : {}),
        ...(sessionId !== undefined ? { session: { store, sessionId } } : {}),
      };
      return startQuery(prepared.getRuntime, start, queryOptions, agentName, store);
    },
    resume(sessionId, resumeOptions) {
      assertKnownOptions(resumeOptions, RESUME_OPTION_KEYS, "ResumeOptions:");
      checkSessionId("resume():", sessionId);
      checkSignal("ResumeOptions:", resumeOptions?.signal);
      const decisions = checkApprovalDecisions("ResumeOptions:", resumeOptions?.decisions);
      return startQuery(
        prepared.getRuntime,
        {
          kind: "resume",
          store,
          sessionId,
          ...(decisions !== undefined ? { decisions } : {}),
        },
        resumeOptions,
        agentName,
        store,
      );
    },
    run(prompt, queryOptions) {
      return agent.query(prompt, queryOptions).finalResult();
    },
    async step(sessionId, stepOptions) {
      assertKnownOptions(stepOptions, STEP_OPTION_KEYS, "StepOptions:");
      checkSessionId("step():", sessionId);
      const options = stepOptions ?? {};
      checkSignal("StepOptions:", options.signal);
      if (options.prompt !== undefined) validatePrompt(options.prompt, "step():");
      if (options.prompt !== undefined && options.decisions !== undefined) {
        throw new InvalidOptionError(
          "StepOptions:",
          "decisions",
          "cannot be combined with prompt: decisions answer the pending approvals of the session's unfinished run, and a prompt starts a new run. Take the step with decisions first.",
        );
      }
      checkStepFields(options);
      const decisions = checkApprovalDecisions("StepOptions:", options.decisions);
      const given = options.signal ?? new AbortController().signal;
      if (given.aborted) throw createAbortError(given.reason);
      // A step under a lease also stops once the lease no longer holds (H28).
      const lease = options.lease;
      const stop = lease === undefined ? undefined : new AbortController();
      const signal = stop === undefined ? given : AbortSignal.any([given, stop.signal]);
      const onMessage = options.onMessage;
      const placement: RunPlacement = {
        parentToolUseId: null,
        emit:
          onMessage === undefined
            ? ignoreMessage
            : (message) => {
                try {
                  catchRejection(onMessage(message), ignoreMessage);
                } catch {
                  // A failing listener never reaches the run (H1).
                }
              },
        depth: options.chain === undefined ? 0 : options.chain.length - 1,
        agentName,
        store,
        ...(options.context !== undefined ? { context: options.context } : {}),
        ...(options.mailbox !== undefined ? { mailbox: options.mailbox } : {}),
        ...(options.takeMail !== undefined ? { beforeModelCall: options.takeMail } : {}),
        ...(options.chain !== undefined ? { chain: options.chain } : {}),
      };
      const outcome = await driveRun(
        await prepared.getRuntime(),
        {
          kind: "step",
          store,
          sessionId,
          prompt: options.prompt,
          runId: options.runId,
          expectedStep: options.expectedStep,
          decisions,
          onStepStart:
            options.onStepStart === undefined
              ? undefined
              : (step) => {
                  try {
                    catchRejection(options.onStepStart!(step), ignoreMessage);
                  } catch {
                    // A failing listener never reaches the run (H1).
                  }
                },
          fencing: lease === undefined ? undefined : { lease, stop: stop! },
        },
        signal,
        placement,
      );
      if (outcome.type === "result") {
        return { status: "ended", sessionId, runId: outcome.runId, result: outcome };
      }
      return outcome.stale
        ? { status: "stale", sessionId, runId: outcome.runId, nextStep: outcome.nextStep }
        : {
            status: "continue",
            sessionId,
            runId: outcome.runId,
            step: outcome.step!,
            nextStep: outcome.nextStep,
          };
    },
    async close() {
      await Promise.all(prepared.sources.map((source) => source.close()));
    },
    [Symbol.asyncDispose]() {
      return agent.close();
    },
  };
  return Object.freeze(agent);
}

/** Agent options checked once: validated values and the built-in tools to load. Internal. */
export interface CheckedAgentOptions {
  readonly validated: ValidatedAgentOptions;
  readonly builtinNames: readonly BuiltinToolName[];
}

/**
 * Checks agent options (or a definition) for a flavor: strict keys, values, built-in names
 * and their `cwd`. Internal: shared by the agent factories and agent tools.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError`, as `createAgent` documents.
 */
export function checkAgentOptions(
  options: AgentOptions | AgentDefinition,
  flavor: Flavor,
): CheckedAgentOptions {
  const validated = validateAgentOptions(isAgentDefinition(options) ? { ...options } : options);
  const builtinNames = validateBuiltinNames(validated.options, flavor);
  if (builtinNames.length > 0) {
    assertUniqueToolNames([
      ...validated.tools,
      ...builtinNames.map((name) => ({ name }) as AnyToolDefinition),
    ]);
  }
  return { validated, builtinNames };
}

/** The provider and model an agent tool's member falls back to: its parent run's. Internal. */
export interface InheritedModel {
  readonly provider: ModelProviderV1;
  readonly model: string | undefined;
}

/** An agent's options resolved into a runtime factory. Internal. */
export interface PreparedAgent {
  readonly name: string | undefined;
  readonly model: string;
  readonly provider: ModelProviderV1;
  /** The runtime; a promise the first time when built-in tools must be loaded. */
  readonly getRuntime: () => AgentRuntime | Promise<AgentRuntime>;
  /** The agent's tool sources, which `close()` releases. */
  readonly sources: readonly ToolSource[];
}

/**
 * Whether options name their own endpoint (`provider`, `apiKey` or `baseURL`) instead of
 * inheriting one. Internal.
 */
export function hasOwnProvider(options: AgentOptions): boolean {
  return (
    options.provider !== undefined || options.apiKey !== undefined || options.baseURL !== undefined
  );
}

/**
 * Builds the runtime factory of checked options. With `inherited`, a missing `model` and a
 * missing endpoint (no `provider`, `apiKey` or `baseURL`) are taken from it. Internal.
 *
 * @throws `InvalidOptionError` when no model is known.
 */
export function prepareAgent(
  checked: CheckedAgentOptions,
  flavor: Flavor,
  inherited: InheritedModel | undefined,
): PreparedAgent {
  const { validated, builtinNames } = checked;
  const o = validated.options;
  const model = o.model !== undefined && o.model !== "" ? o.model : inherited?.model;
  if (model === undefined || model === "") {
    throw new InvalidOptionError(
      "AgentOptions:",
      "model",
      'is required: name the model to talk to, for example model: "claude-sonnet-4-6" or model: "deepseek-v4-flash".',
    );
  }
  const provider =
    inherited !== undefined && !hasOwnProvider(o) ? inherited.provider : resolveProvider(o);
  const userTools = validated.tools;
  let runtime: AgentRuntime | undefined;
  let pending: Promise<AgentRuntime> | undefined;

  const approvalRules = o.needsApproval;
  const sources = validated.sources;
  // With tool sources, names are known only when a run resolves them.
  if (approvalRules !== undefined && sources.length === 0) {
    const known = new Set<string>([
      ...userTools.map((definition) => definition.name),
      ...builtinNames,
    ]);
    for (const name of Object.keys(approvalRules)) {
      if (!known.has(name)) {
        throw new InvalidOptionError(
          "AgentOptions:",
          "needsApproval",
          `names ${JSON.stringify(name)}, which is none of the agent's tools (${[...known].join(", ") || "it has none"}). Check the spelling, or enable the built-in tool in builtinTools.`,
        );
      }
    }
  }
  /** A tool with the agent's `needsApproval` rule for its name, unless it has its own. */
  const withApproval = (definition: AnyToolDefinition): AnyToolDefinition => {
    const rule = approvalRules?.[definition.name];
    if (rule === undefined || definition.needsApproval !== undefined) return definition;
    return Object.freeze({ ...definition, needsApproval: rule });
  };
  const makeRuntime = (given: readonly AnyToolDefinition[]): AgentRuntime => {
    const tools = approvalRules === undefined ? given : given.map(withApproval);
    return makeRuntimeOf(tools);
  };
  const system = (tools: readonly AnyToolDefinition[]): string | undefined =>
    flavor === "standard"
      ? buildSystemPrompt(o.systemPrompt, hasConcurrentTools(tools, validated.concurrency))
      : o.systemPrompt;
  const makeRuntimeOf = (tools: readonly AnyToolDefinition[]): AgentRuntime => ({
    model,
    provider,
    system: system(tools),
    tools,
    toolMap: new Map(tools.map((definition) => [definition.name, definition])),
    concurrency: validated.concurrency,
    policy: validated.policy,
    hooks: validated.hooks,
    maxTurns: validated.maxTurns,
    maxTokens: validated.maxTokens,
    abortGraceMs: validated.abortGraceMs,
    toolTimeoutMs: o.toolTimeoutMs,
    canPause: tools.some((definition) => definition.needsApproval !== undefined),
    request: requestOf(o, model, system(tools), tools, validated.maxTokens),
    temperature: o.temperature,
    stream: o.stream !== false,
    includePartialMessages: o.includePartialMessages === true,
    onTrace: o.onTrace,
  });
  /**
   * The runtime over `fixed` tools, and, with tool sources, a `withSources` that resolves them
   * (before every model call) into a runtime over all tools, rebuilt only when a source's
   * list changed.
   */
  const runtimeOver = (fixed: readonly AnyToolDefinition[]): AgentRuntime => {
    if (sources.length === 0) return makeRuntime(fixed);
    let last:
      | { lists: readonly (readonly AnyToolDefinition[])[]; runtime: AgentRuntime }
      | undefined;
    const withSources = async (signal: AbortSignal): Promise<AgentRuntime> => {
      const lists = await Promise.all(sources.map((source) => resolveSource(source, signal)));
      if (last !== undefined && lists.every((list, index) => list === last!.lists[index])) {
        return last.runtime;
      }
      const all = [...fixed, ...lists.flat()];
      assertUniqueAcrossSources(fixed, sources, lists);
      const resolved: AgentRuntime = { ...makeRuntime(all), withSources };
      last = { lists, runtime: resolved };
      return resolved;
    };
    return { ...makeRuntime(fixed), withSources };
  };
  if (builtinNames.length === 0) runtime = runtimeOver(userTools);

  // Built-in tools load on first use, so agents without them never import node:fs code.
  const getRuntime = (): AgentRuntime | Promise<AgentRuntime> => {
    if (runtime !== undefined) return runtime;
    pending ??= import("@lattice/tools/builtin").then(({ builtinTools }) => {
      const builtins = builtinTools({
        tools: builtinNames,
        cwd: o.cwd ?? process.cwd(),
        ...(o.additionalDirectories !== undefined
          ? { additionalDirectories: o.additionalDirectories }
          : {}),
        ...(o.allowHardLinks !== undefined ? { allowHardLinks: o.allowHardLinks } : {}),
      });
      runtime = runtimeOver([...userTools, ...builtins]);
      return runtime;
    });
    return pending;
  };
  return { name: o.name, model, provider, getRuntime, sources };
}

/** A source's tools, or an error that names the source. */
async function resolveSource(
  source: ToolSource,
  signal: AbortSignal,
): Promise<readonly AnyToolDefinition[]> {
  const tools = await source.tools(signal);
  if (!Array.isArray(tools)) {
    throw new LatticeError(
      "tool_source_failed",
      `The tool source "${source.name}" returned ${describeValue(tools)} from tools(); a source returns an array of tool definitions.`,
    );
  }
  return tools;
}

/** Two tools of one name, across the agent's tools and its sources, cannot be told apart. */
function assertUniqueAcrossSources(
  fixed: readonly AnyToolDefinition[],
  sources: readonly ToolSource[],
  lists: readonly (readonly AnyToolDefinition[])[],
): void {
  const owner = new Map<string, string>();
  for (const definition of fixed) owner.set(definition.name, "the agent's own tools");
  lists.forEach((list, index) => {
    for (const definition of list) {
      const where = `the tool source "${sources[index]!.name}"`;
      const first = owner.get(definition.name);
      if (first !== undefined) {
        throw new LatticeError(
          "tool_name_conflict",
          `Two tools are named "${definition.name}": one from ${first}, one from ${where}. The model could not tell them apart; rename one (an MCP source takes a prefix option).`,
        );
      }
      owner.set(definition.name, where);
    }
  });
}

/** The part of every model request that does not change during a run. */
function requestOf(
  o: AgentOptions,
  model: string,
  system: string | undefined,
  tools: readonly AnyToolDefinition[],
  maxTokens: number,
): Omit<ModelRequest, "messages" | "signal"> {
  // Plain data: the provider never sees handlers or schemas, only what the model reads.
  const specs: ModelToolSpec[] = tools.map((definition) =>
    definition.strict !== undefined
      ? {
          name: definition.name,
          description: definition.description,
          inputSchema: definition.inputSchema,
          strict: definition.strict,
        }
      : {
          name: definition.name,
          description: definition.description,
          inputSchema: definition.inputSchema,
        },
  );
  return {
    model,
    ...(system !== undefined ? { system } : {}),
    ...(specs.length > 0 ? { tools: specs } : {}),
    maxTokens,
    ...(o.stream === false ? { stream: false } : {}),
    ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
    ...(o.toolChoice !== undefined ? { toolChoice: o.toolChoice } : {}),
    ...(o.stopSequences !== undefined ? { stopSequences: [...o.stopSequences] } : {}),
    ...(o.promptCaching !== undefined ? { promptCaching: o.promptCaching } : {}),
    ...(o.thinking !== undefined ? { thinking: { budgetTokens: o.thinking.budgetTokens } } : {}),
    ...(o.reasoningEffort !== undefined ? { reasoningEffort: o.reasoningEffort } : {}),
  };
}

function validateBuiltinNames(options: AgentOptions, flavor: Flavor): readonly BuiltinToolName[] {
  const names = options.builtinTools;
  if (names === undefined) return [];
  if (flavor === "bare") {
    throw new InvalidOptionError(
      "AgentOptions:",
      "builtinTools",
      "is not available in createBareAgent(), which adds nothing to your tools. Use createAgent(), or pass the tools from @lattice/tools/builtin yourself.",
    );
  }
  const allowed: readonly string[] = BUILTIN_TOOL_NAMES;
  if (!Array.isArray(names) || names.some((name) => !allowed.includes(name))) {
    throw new InvalidOptionError(
      "AgentOptions:",
      "builtinTools",
      `must list built-in tool names from ${allowed.join(", ")}; received ${describeValue(names)}.`,
    );
  }
  const cwd = options.cwd ?? process.cwd();
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new InvalidOptionError(
      "AgentOptions:",
      "cwd",
      `must be an existing directory for the built-in tools, received ${describeValue(cwd)}. Create it first or pass another cwd.`,
    );
  }
  return names;
}

/**
 * Starts a run lazily on first iteration (or `finalResult()`) and streams its messages.
 * Internal: the arguments are checked by the caller.
 */
export function startQuery(
  getRuntime: () => AgentRuntime | Promise<AgentRuntime>,
  start: RunStart,
  queryOptions: { readonly signal?: AbortSignal; readonly context?: unknown } | undefined,
  agentName: string | undefined,
  store: SessionStore,
): AgentQuery {
  const userSignal = queryOptions?.signal;
  const context = queryOptions?.context;
  let started = false;
  let resolveResult!: (result: SDKResultMessage) => void;
  let rejectResult!: (error: unknown) => void;
  const result = new Promise<SDKResultMessage>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  // Nobody may ask for the result: its failure is the iterator's to report.
  result.catch(() => {});
  let draining: Promise<SDKResultMessage> | undefined;

  const query: AgentQuery = {
    [Symbol.asyncIterator](): AsyncIterator<SDKMessage> {
      if (started) {
        throw new InvalidOptionError(
          "QueryOptions:",
          "query",
          "was already iterated. Each query() runs once; call agent.query() again for a new run.",
        );
      }
      started = true;
      const channel = new MessageChannel<SDKMessage>();
      const controller = new AbortController();
      const onAbort = (): void => controller.abort(userSignal?.reason);
      if (userSignal?.aborted) controller.abort(userSignal.reason);
      else userSignal?.addEventListener("abort", onAbort, { once: true });
      const placement: RunPlacement = {
        parentToolUseId: null,
        emit: (message) => channel.push(message),
        depth: 0,
        agentName,
        store,
        ...(context !== undefined ? { context } : {}),
      };
      const execute = async (): Promise<SDKResultMessage> => {
        if (controller.signal.aborted) throw createAbortError(controller.signal.reason);
        const runtime = await getRuntime();
        return runAgent(runtime, start, controller.signal, placement);
      };
      let stopping = false;
      let finished = false;
      // Settles (never rejects) once the run has: with its error, if it failed.
      const settled: Promise<{ readonly error: unknown } | undefined> = execute()
        .then(
          (message) => {
            resolveResult(message);
            return undefined;
          },
          (error: unknown) => {
            rejectResult(error);
            return { error };
          },
        )
        .then((failure) => {
          finished = true;
          userSignal?.removeEventListener("abort", onAbort);
          // After return(), the caller reads nothing more: the AbortError is expected.
          if (stopping && failure !== undefined && isAbortError(failure.error)) channel.close();
          else channel.close(failure);
          return failure;
        });
      let returned = false;
      return {
        // After return(), the iteration is over: messages still buffered are dropped.
        next: () => (returned ? Promise.resolve({ value: undefined, done: true }) : channel.next()),
        // Breaking out of the loop: abort, wait until every started handler has settled
        // (T22), then end the iteration.
        return: async () => {
          // A run that had already ended left its outcome in the channel; nothing to report.
          const wasRunning = !finished && !stopping;
          stopping = true;
          controller.abort(createAbortError("the caller stopped reading the query"));
          const failure = await settled;
          returned = true;
          channel.close();
          // The expected AbortError is swallowed; another failure while stopping is not lost.
          if (wasRunning && failure !== undefined && !isAbortError(failure.error)) {
            throw failure.error;
          }
          return { value: undefined, done: true };
        },
      };
    },
    finalResult() {
      if (started) return result;
      draining ??= (async () => {
        for await (const _message of query) {
          // Drained: the result arrives through `result`.
        }
        return result;
      })();
      return draining;
    },
  };
  return query;
}

/** Checks `StepOptions.runId`, `expectedStep`, `mailbox`, `lease`, `chain` and the listeners. */
function checkStepFields(options: StepOptions<unknown>): void {
  if (options.runId !== undefined && (typeof options.runId !== "string" || options.runId === "")) {
    throw new InvalidOptionError(
      "StepOptions:",
      "runId",
      `must be a non-empty string, received ${describeValue(options.runId)}.`,
    );
  }
  const expected = options.expectedStep;
  if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new InvalidOptionError(
      "StepOptions:",
      "expectedStep",
      `must be a step number (an integer >= 0, the nextStep of the step before), received ${describeValue(expected)}.`,
    );
  }
  if (options.mailbox !== undefined) assertMailbox(options.mailbox, "StepOptions:");
  checkStepLease("StepOptions:", options.lease);
  const chain = options.chain;
  if (
    chain !== undefined &&
    (!Array.isArray(chain) ||
      chain.length === 0 ||
      !chain.every((name) => typeof name === "string" && name !== ""))
  ) {
    throw new InvalidOptionError(
      "StepOptions:",
      "chain",
      `must be a non-empty array of agent names (the mail's chain), received ${describeValue(chain)}.`,
    );
  }
  for (const key of ["onMessage", "onStepStart", "takeMail"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new InvalidOptionError(
        "StepOptions:",
        key,
        `must be a function, received ${describeValue(options[key])}.`,
      );
    }
  }
}

function ignoreMessage(): void {}

function checkSignal(prefix: string, signal: unknown): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      prefix,
      "signal",
      `must be an AbortSignal, received ${describeValue(signal)}.`,
    );
  }
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/**
 * Checks a prompt: a non-empty string, or a non-empty array of the blocks a prompt may hold
 * (text, images and opaque blocks, with the fields the providers read: the same check as a
 * stored prompt's, H24), so that a session never stores a prompt its log would refuse.
 */
function validatePrompt(prompt: unknown, prefix = "query():"): void {
  if (typeof prompt === "string") {
    if (prompt === "") {
      throw new InvalidOptionError(
        prefix,
        "prompt",
        "is empty. Pass the task for the agent as a non-empty string.",
      );
    }
    return;
  }
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "prompt",
      `must be a non-empty string or a non-empty array of content blocks, received ${describeValue(prompt)}.`,
    );
  }
  const problem = contentBlocksProblem(prompt, "prompt");
  if (problem !== undefined) {
    throw new InvalidOptionError(
      prefix,
      "prompt",
      `holds ${problem}. A prompt holds text blocks ({ type: "text", text }) and image blocks ({ type: "image", source }), and opaque blocks for one API ({ type: "opaque", provider, block }).`,
    );
  }
}
