import {
  anthropic,
  type ModelProviderV1,
  type ModelThinking,
  type ModelToolChoice,
  type PromptCachingMode,
  type ReasoningEffort,
} from "@lattice/providers";
import {
  DEFAULT_ABORT_GRACE_MS,
  type ResolvedToolConcurrency,
  resolveToolConcurrency,
  type ToolBatchPolicy,
  type ToolConcurrencyOptions,
  validateToolBatchPolicy,
} from "@lattice/scheduler";
import {
  type AnyToolDefinition,
  type BuiltinToolName,
  InvalidOptionError,
  isToolSource,
  type NeedsApproval,
  TOOL_NAME_PATTERN,
  type ToolSource,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { AGENT_HOOK_KEYS, type AgentHooks } from "./agent-hooks.js";
import type { SessionStore } from "./session-store.js";
import type { TraceEvent } from "./trace-event.js";

/**
 * The options of `createAgent()`, `createBareAgent()` and `defineAgent()`. Checked strictly
 * (T31): an unknown key throws when the agent is assembled, with the message
 * `AgentOptions: unknown option "<key>". Check for a typo, or upgrade the SDK if this option was added in a newer version.`
 */
export interface AgentOptions {
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
]);

/** Default `maxTurns`. */
export const DEFAULT_MAX_TURNS = 100;
/** Default `maxTokens`. */
export const DEFAULT_MAX_TOKENS = 4096;

const PREFIX = "AgentOptions:";

/** Agent settings after validation, with defaults applied. */
export interface ValidatedAgentOptions {
  readonly options: AgentOptions;
  readonly tools: readonly AnyToolDefinition[];
  /** The tool sources among `tools` (MCP servers and the like), resolved at run time. */
  readonly sources: readonly ToolSource[];
  readonly concurrency: ResolvedToolConcurrency;
  readonly policy: ToolBatchPolicy | undefined;
  readonly hooks: AgentHooks;
  readonly maxTurns: number;
  readonly maxTokens: number;
  readonly abortGraceMs: number;
}

/**
 * Checks an options object strictly and resolves its defaults. Used by every agent factory.
 *
 * @param options - The options as the user gave them.
 * @throws {@link UnknownOptionError} for an unknown key (T31, T32).
 * @throws {@link InvalidOptionError} for a known key with a value the SDK cannot use.
 */
export function validateAgentOptions(options: unknown): ValidatedAgentOptions {
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      PREFIX,
      "options",
      `must be an object, received ${describeValue(options)}. Pass { model, tools, ... }.`,
    );
  }
  assertKnownOptions(options, AGENT_OPTION_KEYS, PREFIX);
  const o = options as AgentOptions;
  optionalString(o.name, "name");
  optionalString(o.description, "description");
  optionalString(o.model, "model");
  optionalString(o.apiKey, "apiKey");
  optionalString(o.baseURL, "baseURL");
  optionalString(o.systemPrompt, "systemPrompt");
  optionalString(o.cwd, "cwd");
  if (o.allowHardLinks !== undefined && typeof o.allowHardLinks !== "boolean") {
    throw new InvalidOptionError(
      PREFIX,
      "allowHardLinks",
      `must be true or false, received ${describeValue(o.allowHardLinks)}. Omit it for the default (false).`,
    );
  }
  if (o.provider !== undefined) {
    const provider = o.provider as Partial<ModelProviderV1> | null;
    if (
      provider === null ||
      typeof provider !== "object" ||
      typeof provider.stream !== "function"
    ) {
      throw new InvalidOptionError(
        PREFIX,
        "provider",
        `must be a model provider such as anthropic({...}) or openaiCompatible({...}), received ${describeValue(o.provider)}.`,
      );
    }
    if (provider.specificationVersion !== "v1") {
      throw new InvalidOptionError(
        PREFIX,
        "provider",
        `implements provider specification ${describeValue(provider.specificationVersion)}, but this SDK speaks "v1". Upgrade the SDK or the provider package.`,
      );
    }
    for (const key of ["apiKey", "baseURL"] as const) {
      if (o[key] !== undefined) {
        throw new InvalidOptionError(
          PREFIX,
          key,
          `cannot be combined with "provider": pass it to the provider factory instead, for example openaiCompatible({ ${key} }).`,
        );
      }
    }
  }
  if (o.name !== undefined && (typeof o.name !== "string" || !TOOL_NAME_PATTERN.test(o.name))) {
    throw new InvalidOptionError(
      PREFIX,
      "name",
      `must be 1 to 64 letters, digits, "_" or "-" (it names the agent's tool), received ${describeValue(o.name)}.`,
    );
  }
  const maxTurns = positiveInteger(o.maxTurns, "maxTurns", DEFAULT_MAX_TURNS);
  const maxTokens = positiveInteger(o.maxTokens, "maxTokens", DEFAULT_MAX_TOKENS);
  const abortGraceMs = o.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  if (typeof abortGraceMs !== "number" || !(abortGraceMs >= 0)) {
    throw new InvalidOptionError(
      PREFIX,
      "abortGraceMs",
      `must be a number of milliseconds ≥ 0 (Infinity to wait for ever), received ${describeValue(o.abortGraceMs)}. Omit it for the default (${DEFAULT_ABORT_GRACE_MS}).`,
    );
  }
  if (o.temperature !== undefined && (typeof o.temperature !== "number" || !(o.temperature >= 0))) {
    throw new InvalidOptionError(
      PREFIX,
      "temperature",
      `must be a number ≥ 0, received ${describeValue(o.temperature)}.`,
    );
  }
  for (const key of ["includePartialMessages", "stream"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `must be true or false, received ${describeValue(o[key])}.`,
      );
    }
  }
  if (o.stream === false && o.includePartialMessages === true) {
    throw new InvalidOptionError(
      PREFIX,
      "includePartialMessages",
      "needs streaming, but stream is false. Remove stream: false, or turn includePartialMessages off.",
    );
  }
  if (o.onTrace !== undefined && typeof o.onTrace !== "function") {
    throw new InvalidOptionError(
      PREFIX,
      "onTrace",
      `must be a function (event) => void, received ${describeValue(o.onTrace)}.`,
    );
  }
  if (o.sessionStore !== undefined && !isSessionStore(o.sessionStore)) {
    throw new InvalidOptionError(
      PREFIX,
      "sessionStore",
      `must be a SessionStore (an object with load, append, list and delete methods), such as memorySessionStore() or sqliteSessionStore({ path }); received ${describeValue(o.sessionStore)}.`,
    );
  }
  if (
    o.toolTimeoutMs !== undefined &&
    (typeof o.toolTimeoutMs !== "number" ||
      !Number.isFinite(o.toolTimeoutMs) ||
      o.toolTimeoutMs <= 0)
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "toolTimeoutMs",
      `must be a number of milliseconds > 0, received ${describeValue(o.toolTimeoutMs)}. Leave it out for no limit.`,
    );
  }
  if (o.needsApproval !== undefined) {
    const rules = o.needsApproval as unknown;
    if (rules === null || typeof rules !== "object" || Array.isArray(rules)) {
      throw new InvalidOptionError(
        PREFIX,
        "needsApproval",
        `must be an object by tool name, for example { Bash: true }, received ${describeValue(rules)}.`,
      );
    }
    for (const [name, rule] of Object.entries(rules as Record<string, unknown>)) {
      if (rule !== true && typeof rule !== "function") {
        throw new InvalidOptionError(
          PREFIX,
          "needsApproval",
          `has ${describeValue(rule)} for ${JSON.stringify(name)}; each value is true or a function (input, context) => boolean.`,
        );
      }
    }
  }
  checkModelControls(o);
  const { definitions: tools, sources } = validateTools(o.tools);
  const hooks = validateHooks(o.hooks);
  return {
    options: o,
    tools,
    sources,
    concurrency: resolveToolConcurrency(o.toolConcurrency, PREFIX),
    policy: validateToolBatchPolicy(o.toolBatchPolicy, PREFIX),
    hooks,
    maxTurns,
    maxTokens,
    abortGraceMs,
  };
}

/** Checks the options passed on to every model request: caching, thinking, tool choice, stops. */
function checkModelControls(o: AgentOptions): void {
  if (o.promptCaching !== undefined && o.promptCaching !== "auto" && o.promptCaching !== "off") {
    throw new InvalidOptionError(
      PREFIX,
      "promptCaching",
      `must be "auto" or "off", received ${describeValue(o.promptCaching)}.`,
    );
  }
  const thinking = o.thinking as { budgetTokens?: unknown } | undefined;
  if (
    thinking !== undefined &&
    (thinking === null ||
      typeof thinking !== "object" ||
      Object.keys(thinking).some((key) => key !== "budgetTokens") ||
      !Number.isSafeInteger(thinking.budgetTokens) ||
      (thinking.budgetTokens as number) < 1)
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "thinking",
      `must be { budgetTokens: <integer> } (Anthropic wants at least 1024), received ${describeValue(o.thinking)}.`,
    );
  }
  if (
    o.reasoningEffort !== undefined &&
    !["low", "medium", "high"].includes(o.reasoningEffort as string)
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "reasoningEffort",
      `must be "low", "medium" or "high", received ${describeValue(o.reasoningEffort)}.`,
    );
  }
  const choice = o.toolChoice as { type?: unknown; name?: unknown } | undefined;
  if (choice !== undefined) {
    const valid =
      choice !== null &&
      typeof choice === "object" &&
      (choice.type === "auto" || choice.type === "any" || choice.type === "none"
        ? Object.keys(choice).every((key) => key === "type")
        : choice.type === "tool" &&
          typeof choice.name === "string" &&
          (o.tools ?? []).some(
            (entry) => isToolSource(entry) || (entry as AnyToolDefinition).name === choice.name,
          ));
    if (!valid) {
      throw new InvalidOptionError(
        PREFIX,
        "toolChoice",
        `must be { type: "auto" }, { type: "any" }, { type: "none" } or { type: "tool", name } naming one of the agent's tools, received ${describeValue(o.toolChoice)}.`,
      );
    }
  }
  if (
    o.stopSequences !== undefined &&
    (!Array.isArray(o.stopSequences) ||
      o.stopSequences.some((stop) => typeof stop !== "string" || stop === ""))
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "stopSequences",
      `must be an array of non-empty strings, received ${describeValue(o.stopSequences)}.`,
    );
  }
}

function isSessionStore(value: unknown): value is SessionStore {
  if (value === null || typeof value !== "object") return false;
  const store = value as Record<string, unknown>;
  return ["load", "append", "list", "delete"].every((key) => typeof store[key] === "function");
}

/**
 * Throws when two tools share a name: the model could not tell them apart.
 *
 * @param tools - The tools in the order they will be offered.
 */
export function assertUniqueToolNames(tools: readonly AnyToolDefinition[]): void {
  const seen = new Set<string>();
  for (const definition of tools) {
    if (seen.has(definition.name)) {
      throw new InvalidOptionError(
        PREFIX,
        "tools",
        `holds two tools named "${definition.name}". Tool names must be unique; rename one of them.`,
      );
    }
    seen.add(definition.name);
  }
}

/**
 * The provider an agent talks to: `options.provider`, or `anthropic({ apiKey, baseURL })`.
 *
 * @param options - Validated options.
 */
export function resolveProvider(options: AgentOptions): ModelProviderV1 {
  if (options.provider !== undefined) return options.provider;
  return anthropic({
    ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
    ...(options.baseURL !== undefined ? { baseURL: options.baseURL } : {}),
  });
}

function validateTools(tools: unknown): {
  readonly definitions: readonly AnyToolDefinition[];
  readonly sources: readonly ToolSource[];
} {
  if (tools === undefined) return { definitions: [], sources: [] };
  if (!Array.isArray(tools)) {
    throw new InvalidOptionError(
      PREFIX,
      "tools",
      `must be an array of tools made with tool() and tool sources such as mcpServer(...), received ${describeValue(tools)}.`,
    );
  }
  const definitions: AnyToolDefinition[] = [];
  const sources: ToolSource[] = [];
  tools.forEach((entry: unknown, index) => {
    if (isToolSource(entry)) {
      if (sources.includes(entry)) {
        throw new InvalidOptionError(
          PREFIX,
          `tools[${index}]`,
          `is the tool source "${entry.name}" a second time. List each source once.`,
        );
      }
      sources.push(entry);
      return;
    }
    const d = entry as Partial<AnyToolDefinition> | null;
    if (
      d === null ||
      typeof d !== "object" ||
      typeof d.name !== "string" ||
      typeof d.handler !== "function" ||
      typeof d.inputSchema !== "object"
    ) {
      throw new InvalidOptionError(
        PREFIX,
        `tools[${index}]`,
        `is not a tool definition or a tool source (received ${describeValue(entry)}). Make tools with tool(name, description, schema, handler).`,
      );
    }
    definitions.push(entry as AnyToolDefinition);
  });
  assertUniqueToolNames(definitions);
  return { definitions, sources };
}

function validateHooks(hooks: unknown): AgentHooks {
  if (hooks === undefined) return {};
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) {
    throw new InvalidOptionError(
      PREFIX,
      "hooks",
      `must be an object { beforeToolCall?, onToolResult? }, received ${describeValue(hooks)}.`,
    );
  }
  assertKnownOptions(hooks, AGENT_HOOK_KEYS, `${PREFIX} hooks:`);
  for (const [key, value] of Object.entries(hooks)) {
    if (value !== undefined && typeof value !== "function") {
      throw new InvalidOptionError(
        PREFIX,
        `hooks.${key}`,
        `must be a function, received ${describeValue(value)}.`,
      );
    }
  }
  return hooks as AgentHooks;
}

function optionalString(value: unknown, key: string): void {
  if (value !== undefined && typeof value !== "string") {
    throw new InvalidOptionError(
      PREFIX,
      key,
      `must be a string, received ${describeValue(value)}.`,
    );
  }
}

function positiveInteger(value: unknown, key: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(
      PREFIX,
      key,
      `must be a positive integer, received ${describeValue(value)}. Omit it for the default (${fallback}).`,
    );
  }
  return value;
}
