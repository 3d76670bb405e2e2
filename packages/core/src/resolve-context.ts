import type { AnthropicContextManagement, ModelProviderV1 } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { AGENT_OPTIONS_PREFIX } from "./agent-options.js";
import type { ContextManagement, ContextStrategy, OnCompact } from "./context-options.js";
import { contextWindowOf } from "./context-size.js";

/** `contextManagement`, checked and resolved (C1–C7). Internal. */
export interface RunContext {
  /** The threshold: a request above it is made smaller first. */
  readonly maxInputTokens: number;
  readonly countTokens: "estimate" | "provider";
  readonly strategies: readonly ContextStrategy[];
  readonly onCompact: OnCompact | undefined;
}

const KEYS: ReadonlySet<string> = new Set([
  "maxInputTokens",
  "triggerAt",
  "contextWindow",
  "countTokens",
  "strategies",
  "provider",
  "onCompact",
]);

/** The threshold's fraction of the window when neither `maxInputTokens` nor `triggerAt` is set. */
const DEFAULT_TRIGGER_AT = 0.8;

/**
 * Checks `contextManagement` strictly (C2, C7) and resolves it, with the model's window.
 * Internal.
 *
 * @returns `context`: undefined when no strategy and no threshold need watching (none set, or
 *   only server-side editing); `window`: the model's context window when known;
 *   `serverEditing`: what to send as `context_management`.
 * @throws `InvalidOptionError` naming the option and what it takes.
 */
export function resolveContext(
  given: ContextManagement | undefined,
  model: string,
  provider: ModelProviderV1,
): {
  readonly context: RunContext | undefined;
  readonly window: number | undefined;
  readonly serverEditing: AnthropicContextManagement | undefined;
} {
  const p = AGENT_OPTIONS_PREFIX;
  if (given === undefined)
    return { context: undefined, window: contextWindowOf(model), serverEditing: undefined };
  if (given === null || typeof given !== "object" || Array.isArray(given)) {
    throw new InvalidOptionError(
      p,
      "contextManagement",
      `must be an object ({ maxInputTokens | triggerAt, strategies, countTokens, provider }), received ${describeValue(given)}.`,
    );
  }
  assertKnownOptions(given, KEYS, `${p} contextManagement:`);
  const window = given.contextWindow ?? contextWindowOf(model);
  if (given.contextWindow !== undefined && !isPositiveInteger(given.contextWindow)) {
    throw invalid("contextWindow", "a positive integer (tokens)", given.contextWindow);
  }
  if (given.maxInputTokens !== undefined && !isPositiveInteger(given.maxInputTokens)) {
    throw invalid("maxInputTokens", "a positive integer (tokens)", given.maxInputTokens);
  }
  const triggerAt = given.triggerAt;
  if (
    triggerAt !== undefined &&
    (typeof triggerAt !== "number" || !(triggerAt > 0) || !(triggerAt <= 1))
  ) {
    throw invalid("triggerAt", "a fraction of the context window (0 < triggerAt ≤ 1)", triggerAt);
  }
  if (given.maxInputTokens !== undefined && triggerAt !== undefined) {
    throw new InvalidOptionError(
      p,
      "contextManagement",
      "sets both maxInputTokens and triggerAt: give one threshold (tokens, or a fraction of the window).",
    );
  }
  const countTokens = given.countTokens ?? "estimate";
  if (countTokens !== "estimate" && countTokens !== "provider") {
    throw invalid("countTokens", '"estimate" or "provider"', given.countTokens);
  }
  if (given.onCompact !== undefined && typeof given.onCompact !== "function") {
    throw invalid(
      "onCompact",
      "a function (event) => false | { instructions } | void",
      given.onCompact,
    );
  }
  const strategies = checkStrategies(given.strategies);
  const serverEditing = given.provider;
  if (serverEditing !== undefined) {
    if (
      serverEditing === null ||
      typeof serverEditing !== "object" ||
      !Array.isArray((serverEditing as { edits?: unknown }).edits)
    ) {
      throw invalid(
        "provider",
        'Anthropic\'s context_management ({ edits: [{ type: "clear_tool_uses_20250919", ... }] })',
        serverEditing,
      );
    }
    if (provider.contextEditing !== true) {
      throw new InvalidOptionError(
        p,
        "contextManagement",
        `asks for server-side context editing (provider), which the provider "${provider.name}" does not support (provider.contextEditing is not true): it is an Anthropic Messages API feature. Use strategies instead, or the anthropic provider.`,
      );
    }
  }
  const watching =
    strategies.length > 0 ||
    countTokens === "provider" ||
    given.maxInputTokens !== undefined ||
    triggerAt !== undefined;
  if (!watching) return { context: undefined, window, serverEditing };
  let maxInputTokens = given.maxInputTokens;
  if (maxInputTokens === undefined) {
    if (window === undefined) {
      throw new InvalidOptionError(
        p,
        "contextManagement",
        `needs a threshold: the context window of ${JSON.stringify(model)} is not in the built-in table, so set maxInputTokens (tokens), or contextWindow with triggerAt.`,
      );
    }
    maxInputTokens = Math.floor(window * (triggerAt ?? DEFAULT_TRIGGER_AT));
  }
  return {
    context: { maxInputTokens, countTokens, strategies, onCompact: given.onCompact },
    window,
    serverEditing,
  };
}

/**
 * Checks the strategies: made by clearToolResults() or compact(), or functions. Also checks
 * `agent.compact()`'s. Internal.
 */
export function checkStrategies(given: unknown): readonly ContextStrategy[] {
  if (given === undefined) return [];
  if (!Array.isArray(given)) {
    throw invalid("strategies", "an array of clearToolResults(), compact() or functions", given);
  }
  return given.map((strategy: unknown, index) => {
    const at = `strategies[${index}]`;
    if (typeof strategy === "function") return strategy as ContextStrategy;
    const fields = strategy as { type?: unknown } | null;
    if (fields === null || typeof fields !== "object") {
      throw invalid(at, "clearToolResults(), compact() or a function", strategy);
    }
    if (fields.type === "clear_tool_results") {
      const { keepLast, placeholder, exclude } = strategy as {
        keepLast?: unknown;
        placeholder?: unknown;
        exclude?: unknown;
      };
      if (!Number.isSafeInteger(keepLast) || (keepLast as number) < 0) {
        throw invalid(`${at}.keepLast`, "an integer ≥ 0", keepLast);
      }
      if (typeof placeholder !== "string" && typeof placeholder !== "function") {
        throw invalid(`${at}.placeholder`, "a string or a function", placeholder);
      }
      if (!Array.isArray(exclude) || !exclude.every((name) => typeof name === "string")) {
        throw invalid(`${at}.exclude`, "an array of tool names", exclude);
      }
      return strategy as ContextStrategy;
    }
    if (fields.type === "compact") {
      const { keepLastTurns, instructions, model, provider, maxTokens } = strategy as {
        keepLastTurns?: unknown;
        instructions?: unknown;
        model?: unknown;
        provider?: { stream?: unknown } | null;
        maxTokens?: unknown;
      };
      if (!Number.isSafeInteger(keepLastTurns) || (keepLastTurns as number) < 1) {
        throw invalid(`${at}.keepLastTurns`, "an integer ≥ 1", keepLastTurns);
      }
      if (typeof instructions !== "string" || instructions.trim() === "") {
        throw invalid(`${at}.instructions`, "a non-empty string", instructions);
      }
      if (model !== undefined && (typeof model !== "string" || model === "")) {
        throw invalid(`${at}.model`, "a model id", model);
      }
      if (
        provider !== undefined &&
        (provider === null || typeof provider !== "object" || typeof provider.stream !== "function")
      ) {
        throw invalid(`${at}.provider`, "a ModelProviderV1", provider);
      }
      if (!isPositiveInteger(maxTokens)) {
        throw invalid(`${at}.maxTokens`, "a positive integer", maxTokens);
      }
      return strategy as ContextStrategy;
    }
    throw invalid(at, "clearToolResults(), compact() or a function", strategy);
  });
}

function isPositiveInteger(value: unknown): value is number {
  return Number.isSafeInteger(value) && (value as number) >= 1;
}

function invalid(name: string, what: string, received: unknown): InvalidOptionError {
  return new InvalidOptionError(
    AGENT_OPTIONS_PREFIX,
    `contextManagement.${name}`,
    `must be ${what}, received ${describeValue(received)}.`,
  );
}
