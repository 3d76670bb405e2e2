import {
  DEFAULT_ABORT_GRACE_MS,
  type ResolvedToolConcurrency,
  resolveToolConcurrency,
  type ToolBatchPolicy,
  validateToolBatchPolicy,
} from "@lattice/scheduler";
import {
  type AnyToolDefinition,
  InvalidOptionError,
  TOOL_NAME_PATTERN,
  type ToolSource,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { AGENT_HOOK_KEYS, type AgentHooks } from "./agent-hooks.js";
import {
  AGENT_OPTION_KEYS,
  AGENT_OPTIONS_PREFIX,
  type AgentOptions,
  DEFAULT_MAX_TOKENS,
  DEFAULT_MAX_TURNS,
} from "./agent-options.js";
import { checkModelControls } from "./check-model-controls.js";
import { checkProviderOption } from "./resolve-provider.js";
import type { SessionStore } from "./session-store.js";
import { validateAgentTools } from "./validate-agent-tools.js";

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
      AGENT_OPTIONS_PREFIX,
      "options",
      `must be an object, received ${describeValue(options)}. Pass { model, tools, ... }.`,
    );
  }
  assertKnownOptions(options, AGENT_OPTION_KEYS, AGENT_OPTIONS_PREFIX);
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
      AGENT_OPTIONS_PREFIX,
      "allowHardLinks",
      `must be true or false, received ${describeValue(o.allowHardLinks)}. Omit it for the default (false).`,
    );
  }
  checkProviderOption(o);
  if (o.name !== undefined && (typeof o.name !== "string" || !TOOL_NAME_PATTERN.test(o.name))) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "name",
      `must be 1 to 64 letters, digits, "_" or "-" (it names the agent's tool), received ${describeValue(o.name)}.`,
    );
  }
  const maxTurns = positiveInteger(o.maxTurns, "maxTurns", DEFAULT_MAX_TURNS);
  const maxTokens = positiveInteger(o.maxTokens, "maxTokens", DEFAULT_MAX_TOKENS);
  const abortGraceMs = o.abortGraceMs ?? DEFAULT_ABORT_GRACE_MS;
  if (typeof abortGraceMs !== "number" || !(abortGraceMs >= 0)) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "abortGraceMs",
      `must be a number of milliseconds ≥ 0 (Infinity to wait for ever), received ${describeValue(o.abortGraceMs)}. Omit it for the default (${DEFAULT_ABORT_GRACE_MS}).`,
    );
  }
  if (o.temperature !== undefined && (typeof o.temperature !== "number" || !(o.temperature >= 0))) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "temperature",
      `must be a number ≥ 0, received ${describeValue(o.temperature)}.`,
    );
  }
  for (const key of ["includePartialMessages", "stream"] as const) {
    if (o[key] !== undefined && typeof o[key] !== "boolean") {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        key,
        `must be true or false, received ${describeValue(o[key])}.`,
      );
    }
  }
  if (o.stream === false && o.includePartialMessages === true) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "includePartialMessages",
      "needs streaming, but stream is false. Remove stream: false, or turn includePartialMessages off.",
    );
  }
  if (o.onTrace !== undefined && typeof o.onTrace !== "function") {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "onTrace",
      `must be a function (event) => void, received ${describeValue(o.onTrace)}.`,
    );
  }
  if (o.sessionStore !== undefined && !isSessionStore(o.sessionStore)) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
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
      AGENT_OPTIONS_PREFIX,
      "toolTimeoutMs",
      `must be a number of milliseconds > 0, received ${describeValue(o.toolTimeoutMs)}. Leave it out for no limit.`,
    );
  }
  if (o.needsApproval !== undefined) {
    const rules = o.needsApproval as unknown;
    if (rules === null || typeof rules !== "object" || Array.isArray(rules)) {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        "needsApproval",
        `must be an object by tool name, for example { Bash: true }, received ${describeValue(rules)}.`,
      );
    }
    for (const [name, rule] of Object.entries(rules as Record<string, unknown>)) {
      if (rule !== true && typeof rule !== "function") {
        throw new InvalidOptionError(
          AGENT_OPTIONS_PREFIX,
          "needsApproval",
          `has ${describeValue(rule)} for ${JSON.stringify(name)}; each value is true or a function (input, context) => boolean.`,
        );
      }
    }
  }
  checkModelControls(o);
  const { definitions: tools, sources } = validateAgentTools(o.tools);
  const hooks = validateHooks(o.hooks);
  return {
    options: o,
    tools,
    sources,
    concurrency: resolveToolConcurrency(o.toolConcurrency, AGENT_OPTIONS_PREFIX),
    policy: validateToolBatchPolicy(o.toolBatchPolicy, AGENT_OPTIONS_PREFIX),
    hooks,
    maxTurns,
    maxTokens,
    abortGraceMs,
  };
}

function isSessionStore(value: unknown): value is SessionStore {
  if (value === null || typeof value !== "object") return false;
  const store = value as Record<string, unknown>;
  return ["load", "append", "list", "delete"].every((key) => typeof store[key] === "function");
}

function validateHooks(hooks: unknown): AgentHooks {
  if (hooks === undefined) return {};
  if (hooks === null || typeof hooks !== "object" || Array.isArray(hooks)) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "hooks",
      `must be an object { beforeToolCall?, onToolResult? }, received ${describeValue(hooks)}.`,
    );
  }
  assertKnownOptions(hooks, AGENT_HOOK_KEYS, `${AGENT_OPTIONS_PREFIX} hooks:`);
  for (const [key, value] of Object.entries(hooks)) {
    if (value !== undefined && typeof value !== "function") {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
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
      AGENT_OPTIONS_PREFIX,
      key,
      `must be a string, received ${describeValue(value)}.`,
    );
  }
}

function positiveInteger(value: unknown, key: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 1) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      key,
      `must be a positive integer, received ${describeValue(value)}. Omit it for the default (${fallback}).`,
    );
  }
  return value;
}
