import { statSync } from "node:fs";
import type { ContentBlock, ModelMessage, ModelProviderV1 } from "@lattice/providers";
import { createAbortError } from "@lattice/scheduler";
import {
  type AnyToolDefinition,
  assertKnownOptions,
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  describeValue,
  InvalidOptionError,
} from "@lattice/tools";
import {
  type AgentOptions,
  assertUniqueToolNames,
  resolveProvider,
  type ValidatedAgentOptions,
  validateAgentOptions,
} from "./agent-options.js";
import { checkHistory } from "./check-history.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { MessageChannel } from "./message-channel.js";
import { type AgentRuntime, type RunPlacement, runAgent } from "./run-agent.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";
import { buildSystemPrompt, hasConcurrentTools } from "./system-prompt.js";

/** Options of one query. Checked strictly. */
export interface QueryOptions {
  /** Aborts the run: started handlers settle, queued calls never start, the query rejects with an `AbortError` (T22). */
  readonly signal?: AbortSignal;
  /**
   * A conversation to continue, kept by the caller (R4): sent first, then the prompt. Pass
   * the `messages` of an earlier run's result. Checked before any model call (a user message
   * first, every `tool_use` answered by a `tool_result` in the next message, no result without
   * its call, no unanswered calls at the end); a bad history throws `InvalidOptionError`
   * naming the message index and the rule. Not copied into any store.
   */
  readonly messages?: readonly ModelMessage[];
}

const QUERY_OPTION_KEYS: ReadonlySet<string> = new Set(["signal", "messages"]);

/** What a user message may hold: a string, or text and image blocks. */
export type Prompt = string | readonly ContentBlock[];

/** A runnable agent: what `createAgent` and `createBareAgent` return. */
export interface Agent {
  /** The agent's name, when it has one. */
  readonly name: string | undefined;
  /** The model the agent talks to. */
  readonly model: string;
  /** The provider the agent talks through. */
  readonly provider: ModelProviderV1;
  /**
   * Runs the agent on a prompt and streams its messages: `system`/`init`, then per turn an
   * `assistant` message and a `user` message of tool results, `stream_event`s when
   * `includePartialMessages` is on, and last the `result`. The run starts when you start
   * iterating. Breaking out of the loop aborts it: the iterator's `return()` (which
   * `break` awaits) resolves once every handler that had started has settled (T22).
   *
   * @throws (from the iterator) an error named `"AbortError"` when `options.signal` aborts.
   */
  query(prompt: Prompt, options?: QueryOptions): AsyncIterable<SDKMessage>;
  /**
   * Runs the agent to the end and resolves with its result message.
   *
   * @throws an error named `"AbortError"` when `options.signal` aborts.
   */
  run(prompt: Prompt, options?: QueryOptions): Promise<SDKResultMessage>;
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
export function createAgent(options: AgentOptions | AgentDefinition): Agent {
  return assemble(options, "standard");
}

/**
 * Creates an agent that runs the same loop with nothing added: your system prompt as given,
 * your tools only, no built-in tools.
 *
 * @param options - {@link AgentOptions} (without `builtinTools`), or a definition.
 * @throws `UnknownOptionError` for an unknown key (T31, T32).
 * @throws `InvalidOptionError` for a bad value, a missing `model`, or `builtinTools`.
 */
export function createBareAgent(options: AgentOptions | AgentDefinition): Agent {
  return assemble(options, "bare");
}

function assemble(options: AgentOptions | AgentDefinition, flavor: Flavor): Agent {
  const prepared = prepareAgent(checkAgentOptions(options, flavor), flavor, undefined);
  const agent: Agent = {
    name: prepared.name,
    model: prepared.model,
    provider: prepared.provider,
    query(prompt, queryOptions) {
      return startQuery(prepared.getRuntime, prompt, queryOptions, 0, null, prepared.name);
    },
    async run(prompt, queryOptions) {
      let result: SDKResultMessage | undefined;
      for await (const message of agent.query(prompt, queryOptions)) {
        if (message.type === "result" && message.parentToolUseId === null) result = message;
      }
      return result as SDKResultMessage;
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

  const makeRuntime = (tools: readonly AnyToolDefinition[]): AgentRuntime => ({
    model,
    provider,
    system:
      flavor === "standard"
        ? buildSystemPrompt(o.systemPrompt, hasConcurrentTools(tools, validated.concurrency))
        : o.systemPrompt,
    tools,
    toolMap: new Map(tools.map((definition) => [definition.name, definition])),
    concurrency: validated.concurrency,
    policy: validated.policy,
    hooks: validated.hooks,
    maxTurns: validated.maxTurns,
    maxTokens: validated.maxTokens,
    abortGraceMs: validated.abortGraceMs,
    temperature: o.temperature,
    stream: o.stream !== false,
    includePartialMessages: o.includePartialMessages === true,
    onTrace: o.onTrace,
  });
  if (builtinNames.length === 0) runtime = makeRuntime(userTools);

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
      runtime = makeRuntime([...userTools, ...builtins]);
      return runtime;
    });
    return pending;
  };
  return { name: o.name, model, provider, getRuntime };
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
 * Starts a query lazily on first iteration and streams its messages. Internal: also used to
 * run agent tools nested in a parent run.
 */
export function startQuery(
  getRuntime: () => AgentRuntime | Promise<AgentRuntime>,
  prompt: Prompt,
  queryOptions: QueryOptions | undefined,
  depth: number,
  parentToolUseId: string | null,
  agentName?: string,
): AsyncIterable<SDKMessage> {
  assertKnownOptions(queryOptions, QUERY_OPTION_KEYS, "QueryOptions:");
  const userSignal = queryOptions?.signal;
  if (userSignal !== undefined && !(userSignal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      "QueryOptions:",
      "signal",
      `must be an AbortSignal, received ${describeValue(userSignal)}.`,
    );
  }
  validatePrompt(prompt);
  const history =
    queryOptions?.messages === undefined ? undefined : checkHistory(queryOptions.messages);
  let started = false;
  return {
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
        parentToolUseId,
        emit: (message) => channel.push(message),
        depth,
        agentName,
        ...(history !== undefined ? { history } : {}),
      };
      const execute = async (): Promise<void> => {
        if (controller.signal.aborted) throw createAbortError(controller.signal.reason);
        const runtime = await getRuntime();
        await runAgent(runtime, prompt, controller.signal, placement);
      };
      let stopping = false;
      let finished = false;
      // Settles (never rejects) once the run has: with its error, if it failed.
      const settled: Promise<{ readonly error: unknown } | undefined> = execute()
        .then(
          () => undefined,
          (error: unknown) => ({ error }),
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
  };
}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

function validatePrompt(prompt: unknown): void {
  if (typeof prompt === "string") {
    if (prompt === "") {
      throw new InvalidOptionError(
        "query():",
        "prompt",
        "is empty. Pass the task for the agent as a non-empty string.",
      );
    }
    return;
  }
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw new InvalidOptionError(
      "query():",
      "prompt",
      `must be a non-empty string or a non-empty array of content blocks, received ${describeValue(prompt)}.`,
    );
  }
}
