import type {
  ModelProviderV1,
  ModelThinking,
  ModelToolChoice,
  PromptCachingMode,
  ReasoningEffort,
} from "@lattice/providers";
import type { ToolBatchPolicy, ToolConcurrencyOptions } from "@lattice/scheduler";
import type { AnyToolDefinition, BuiltinToolName, NeedsApproval, ToolSource } from "@lattice/tools";
import type { AgentHooks } from "./agent-hooks.js";
import type { ContextManagement } from "./context-options.js";
import type { ModelPricing } from "./model-pricing.js";
import type { SessionStore } from "./session-store.js";
import type {
  FallbackModel,
  Guardrails,
  OutputMode,
  OutputSchema,
  PrepareStep,
  StopCondition,
} from "./steering-options.js";
import type { TraceEvent } from "./trace-event.js";

/**
 * The options of `createAgent()`, `createBareAgent()` and `defineAgent()`. Checked strictly
 * (T31): an unknown key throws when the agent is assembled, with the message
 * `AgentOptions: unknown option "<key>". Check for a typo, or upgrade the SDK if this option was added in a newer version.`
 */
export interface AgentOptions<TOutput = unknown> {
  /** The agent's name: required by `defineAgent` (it names agent tools and team members). */
  readonly name?: string;
  /** What the agent does: the description of the tool `agentTool()` makes from it. */
  readonly description?: string;
  /** The model id, for example `"claude-sonnet-4-6"` or `"deepseek-v4-flash"`. Required by `createAgent`. */
  readonly model?: string;
  /**
   * The API key for the default Anthropic-compatible provider. Default: `ANTHROPIC_API_KEY`, or
   * `DEEPSEEK_API_KEY` when `baseURL` points at DeepSeek (T34). Not allowed with `provider`.
   */
  readonly apiKey?: string;
  /**
   * The base URL of the default Anthropic-compatible provider; requests go to
   * `baseURL + "/v1/messages"`. Default `https://api.anthropic.com`. Not allowed with `provider`.
   */
  readonly baseURL?: string;
  /** A provider to use instead of the default: `openaiCompatible({...})`, `anthropic({...})`, your own. */
  readonly provider?: ModelProviderV1;
  /** Your system prompt. `createAgent` appends the SDK's guidance after it; `createBareAgent` sends it alone. */
  readonly systemPrompt?: string;
  /**
   * The tools the model may call, and tool sources whose tools it may call (`mcpServer(...)`
   * from `@lattice/mcp`). Names must be unique, across sources too (checked when a run
   * resolves the sources).
   */
  readonly tools?: readonly (AnyToolDefinition | ToolSource)[];
  /** How the calls of one batch run: `{ mode: "safe" | "all" | "sequential", maxConcurrency }` (T14). */
  readonly toolConcurrency?: ToolConcurrencyOptions;
  /** Checks a whole batch before anything runs (T23–T28). */
  readonly toolBatchPolicy?: ToolBatchPolicy;
  /** `beforeToolCall` and `onToolResult` callbacks. */
  readonly hooks?: AgentHooks;
  /** Model calls before the run ends with `error_max_turns`. Default 100. */
  readonly maxTurns?: number;
  /** `max_tokens` of each model call. Default 4096. */
  readonly maxTokens?: number;
  /**
   * After the query is aborted, how long (milliseconds) to wait for started tool handlers to
   * settle before giving up on them (H5). A handler that honours `context.signal` settles
   * first (T22); one that ignores it and is still running after the grace is reported in the
   * trace as `"abandoned"` (a `tool_call_finished` event), may still be running, and its late
   * result is dropped: the query settles anyway. Default 5,000 ms; `Infinity` waits for ever;
   * `0` settles at once.
   */
  readonly abortGraceMs?: number;
  /** Sampling temperature. Default: the API's. */
  readonly temperature?: number;
  /**
   * Stream each model response over SSE (`true`, the default) or ask for one JSON body
   * (`false`). Streaming is what `includePartialMessages` needs.
   */
  readonly stream?: boolean;
  /** Yield `stream_event` messages with every partial delta. Default `false`. Needs `stream`. */
  readonly includePartialMessages?: boolean;
  /**
   * Receives every trace event of every run, synchronously, in order. It may be `async`, but
   * the run does not wait for it. Whatever it throws, and any promise it returns that rejects,
   * is caught and ignored (never an unhandled rejection, H1); the result message counts those
   * failures in `traceErrors`.
   */
  readonly onTrace?: (event: TraceEvent) => void;
  /** Built-in tools to enable (`createAgent` only); none by default. */
  readonly builtinTools?: readonly BuiltinToolName[];
  /** The working directory built-in tools are confined to. Default `process.cwd()`. */
  readonly cwd?: string;
  /** More directories built-in tools may touch. */
  readonly additionalDirectories?: readonly string[];
  /**
   * Let the built-in Read, Grep and Edit open files with more than one hard link. Default
   * `false`: such a file may be the same as one outside `cwd`, so Read and Edit refuse it
   * and Grep skips it, each saying so. Write and Edit replace files, so they never write
   * through a hard link either way. Turn it on for trees that hard-link their files on
   * purpose (pnpm's `node_modules`).
   */
  readonly allowHardLinks?: boolean;
  /**
   * Where `query(prompt, { sessionId })` keeps conversations and `resume()` finds them (R6,
   * R11): `memorySessionStore()` (the default, one per agent: sessions last as long as the
   * agent), `sqliteSessionStore({ path })` from `@lattice/store-sqlite`, or your own
   * `SessionStore`. Share one store between agents to share their sessions.
   */
  readonly sessionStore?: SessionStore;
  /**
   * The time limit of every tool call whose tool sets no `timeoutMs` of its own, in
   * milliseconds (R20): at the deadline the handler's `ctx.signal` aborts with a
   * `TimeoutError` and the call gets an `is_error` "timed out" result; the run goes on. An
   * agent tool's child run is aborted (R21). Default: none.
   */
  readonly toolTimeoutMs?: number;
  /**
   * `needsApproval` by tool name, for tools you do not define yourself: the built-ins
   * (`{ Bash: true, Write: (input) => ... }`) and tools from other sources (R13). A tool's own
   * `needsApproval` wins. Names that match no tool are refused.
   */
  readonly needsApproval?: { readonly [toolName: string]: NeedsApproval };
  /**
   * Anthropic prompt caching: `"auto"` places `cache_control` breakpoints on the tool list,
   * the system prompt and the latest message, so each turn of a tool loop reads its prefix
   * from the cache; `"off"` sends none. Default: the provider's (`anthropic()` uses `"auto"`
   * for api.anthropic.com and `"off"` for other base URLs). OpenAI-compatible APIs cache on
   * their own and ignore it. The result's `usage` shows the effect
   * (`cacheReadInputTokens`, `cacheCreationInputTokens`).
   */
  readonly promptCaching?: PromptCachingMode;
  /**
   * Extended thinking on Anthropic-compatible APIs: `{ budgetTokens }` (the API wants at least
   * 1024). `max_tokens` is raised above the budget when needed, and `temperature` is not sent
   * with thinking. Thinking blocks and their signatures are kept in the conversation.
   */
  readonly thinking?: ModelThinking;
  /** `reasoning_effort` for OpenAI-compatible reasoning models: `"low"`, `"medium"` or `"high"`. */
  readonly reasoningEffort?: ReasoningEffort;
  /**
   * How the model may use the tools on every turn: `{ type: "auto" }` (the API's default),
   * `{ type: "any" }` (must call some tool), `{ type: "tool", name }` (must call that one) or
   * `{ type: "none" }`. A choice that forces a call every turn ends only through a tool with
   * `endTurn` or `maxTurns`.
   */
  readonly toolChoice?: ModelToolChoice;
  /** Strings that end a reply when the model generates them (`stop_sequences` / `stop`). */
  readonly stopSequences?: readonly string[];
  /**
   * A schema for the run's typed final answer (L1): a Zod v4 schema or a Standard Schema with
   * a JSON Schema, its root an object. The result carries `output`, validated; an answer that
   * fails validation goes back to the model with the error, up to `outputRetries` times, then
   * the run ends `error_output_invalid` (L3). `query(prompt, { outputSchema })` sets one per run.
   */
  readonly outputSchema?: OutputSchema<TOutput>;
  /** How many invalid answers are sent back to the model before `error_output_invalid`. Default 2. */
  readonly outputRetries?: number;
  /** How the typed answer is asked for: `"auto"` (default), `"native_json_schema"` or `"forced_tool"` (L2). */
  readonly outputMode?: OutputMode;
  /**
   * Runs before every model call and may override, for that call only, its `model`,
   * `provider`, `activeTools`, `toolChoice`, `system` or `messages` (L5). The overrides are
   * recorded on the call's `reply` log entry.
   */
  readonly prepareStep?: PrepareStep;
  /**
   * Ends the run `success` with the latest reply's text once a condition holds after a step
   * with tool calls (L6): `stepCountIs(n)`, `hasToolCall(name)`, or your own function.
   * `maxTurns` stays the hard ceiling.
   */
  readonly stopWhen?: StopCondition | readonly StopCondition[];
  /**
   * Input guardrails run on the prompt concurrently with the first model call; output
   * guardrails on the final answer (L7–L9). A tripwire ends the run `guardrail_tripped`.
   */
  readonly guardrails?: Guardrails;
  /**
   * Providers or models to move to when a model call fails with a retryable error (overloaded,
   * rate limited, 5xx, timeout, connection) after its own retries (L10), in order. The run
   * stays on the entry it moved to; `usage.byModel` keeps usage per model.
   */
  readonly fallback?: readonly FallbackModel[];
  /**
   * The most tokens (input, cache and output, child runs included) the run may use (L11): the
   * run ends `error_budget` before a model call whose worst case would pass it.
   */
  readonly maxTotalTokens?: number;
  /**
   * The most US dollars the run may spend (L11), priced with `pricing` and the built-in table:
   * the run ends `error_budget` before a model call whose worst case would pass it. Every model
   * the agent may use needs a known price.
   */
  readonly maxCostUsd?: number;
  /**
   * Prices per model, in US dollars per million tokens, over the built-in table (dated
   * `BUILTIN_PRICING_DATE`): `{ "my-model": { inputPerMTok, outputPerMTok } }`. With known
   * prices, results carry `usage.costUsd`.
   */
  readonly pricing?: ModelPricing;
  /**
   * Keeps long conversations under the model's context window (C1–C7): a threshold
   * (`maxInputTokens`, or `triggerAt` × the window) and the `strategies` that run before a
   * call that would pass it (`clearToolResults()`, `compact()`, your own function), each
   * logged as a `compaction` entry; or Anthropic's server-side editing (`provider`). See
   * {@link ContextManagement}.
   */
  readonly contextManagement?: ContextManagement;
}

/** Every key {@link AgentOptions} accepts. */
export const AGENT_OPTION_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "model",
  "apiKey",
  "baseURL",
  "provider",
  "systemPrompt",
  "tools",
  "toolConcurrency",
  "toolBatchPolicy",
  "hooks",
  "maxTurns",
  "maxTokens",
  "abortGraceMs",
  "temperature",
  "stream",
  "includePartialMessages",
  "onTrace",
  "builtinTools",
  "cwd",
  "additionalDirectories",
  "allowHardLinks",
  "sessionStore",
  "toolTimeoutMs",
  "needsApproval",
  "promptCaching",
  "thinking",
  "reasoningEffort",
  "toolChoice",
  "stopSequences",
  "outputSchema",
  "outputRetries",
  "outputMode",
  "prepareStep",
  "stopWhen",
  "guardrails",
  "fallback",
  "maxTotalTokens",
  "contextManagement",
  "maxCostUsd",
  "pricing",
]);

/** Default `outputRetries`. */
export const DEFAULT_OUTPUT_RETRIES = 2;

/** Default `maxTurns`. */
export const DEFAULT_MAX_TURNS = 100;
/** Default `maxTokens`. */
export const DEFAULT_MAX_TOKENS = 4096;

/** The prefix of the errors about {@link AgentOptions} (`"AgentOptions:"`). */
export const AGENT_OPTIONS_PREFIX = "AgentOptions:";
