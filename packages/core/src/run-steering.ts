import type { ModelProviderV1 } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import {
  AGENT_OPTIONS_PREFIX,
  type AgentOptions,
  DEFAULT_OUTPUT_RETRIES,
} from "./agent-options.js";
import { checkPricing, priceOf } from "./model-pricing.js";
import { checkGuardrails, type RunGuardrails } from "./run-guardrails.js";
import { type RunOutput, resolveRunOutput } from "./run-output.js";
import type { OutputMode, PrepareStep, StopCondition } from "./steering-options.js";

/** A provider and model a call may go to. Internal. */
export interface ModelChoice {
  readonly provider: ModelProviderV1;
  readonly model: string;
}

/**
 * What steers a run (L1–L11), resolved from an agent's options (and a query's
 * `outputSchema`). A run without any of these options has none: its steps take the plain path
 * (L14). Internal.
 */
export interface RunSteering {
  readonly output: RunOutput | undefined;
  readonly prepareStep: PrepareStep | undefined;
  readonly stopWhen: readonly StopCondition[] | undefined;
  readonly guardrails: RunGuardrails | undefined;
  /** The models after the agent's own, in order (L10); empty without `fallback`. */
  readonly fallback: readonly ModelChoice[];
  readonly maxTotalTokens: number | undefined;
  readonly maxCostUsd: number | undefined;
}

/** How the agent's typed output is asked for; what a query's own `outputSchema` uses. Internal. */
export interface OutputSettings {
  readonly mode: OutputMode;
  readonly retries: number;
}

const OUTPUT_MODES: ReadonlySet<unknown> = new Set(["auto", "native_json_schema", "forced_tool"]);

/**
 * Checks the steering options strictly (L13) and resolves them. Internal.
 *
 * @returns `undefined` when none is set.
 * @throws `InvalidOptionError` naming the option and what it takes.
 */
export function resolveSteering(
  o: AgentOptions,
  model: string,
  provider: ModelProviderV1,
): { steering: RunSteering | undefined; output: OutputSettings } {
  const p = AGENT_OPTIONS_PREFIX;
  const retries = o.outputRetries ?? DEFAULT_OUTPUT_RETRIES;
  if (!Number.isSafeInteger(retries) || retries < 0) {
    throw new InvalidOptionError(
      p,
      "outputRetries",
      `must be an integer ≥ 0 (invalid answers sent back to the model), received ${describeValue(o.outputRetries)}. Omit it for the default (${DEFAULT_OUTPUT_RETRIES}).`,
    );
  }
  const mode = o.outputMode ?? "auto";
  if (!OUTPUT_MODES.has(mode)) {
    throw new InvalidOptionError(
      p,
      "outputMode",
      `must be "auto", "native_json_schema" or "forced_tool", received ${describeValue(o.outputMode)}.`,
    );
  }
  const settings: OutputSettings = { mode, retries };
  const output =
    o.outputSchema === undefined ? undefined : resolveRunOutput(o.outputSchema, mode, retries, p);
  if (o.prepareStep !== undefined && typeof o.prepareStep !== "function") {
    throw new InvalidOptionError(
      p,
      "prepareStep",
      `must be a function (step) => overrides | undefined, received ${describeValue(o.prepareStep)}.`,
    );
  }
  const stopWhen = checkStopWhen(o.stopWhen);
  const guardrails = checkGuardrails(o.guardrails, p);
  const fallback = checkFallback(o.fallback, model, provider);
  if (
    o.maxTotalTokens !== undefined &&
    (!Number.isSafeInteger(o.maxTotalTokens) || o.maxTotalTokens < 1)
  ) {
    throw new InvalidOptionError(
      p,
      "maxTotalTokens",
      `must be a positive integer (tokens over the whole run), received ${describeValue(o.maxTotalTokens)}.`,
    );
  }
  if (
    o.maxCostUsd !== undefined &&
    (typeof o.maxCostUsd !== "number" || !Number.isFinite(o.maxCostUsd) || o.maxCostUsd <= 0)
  ) {
    throw new InvalidOptionError(
      p,
      "maxCostUsd",
      `must be a number of US dollars > 0, received ${describeValue(o.maxCostUsd)}.`,
    );
  }
  if (o.pricing !== undefined) {
    try {
      checkPricing(o.pricing, p);
    } catch (error) {
      const detail = error instanceof Error ? error.message.replace(`${p} pricing`, "") : "";
      throw new InvalidOptionError(p, "pricing", `is not a price table: ${detail.trim()}`);
    }
  }
  if (o.maxCostUsd !== undefined) {
    for (const choice of [{ model }, ...fallback]) {
      if (priceOf(choice.model, o.pricing) === undefined) {
        throw new InvalidOptionError(
          p,
          "maxCostUsd",
          `needs the price of every model the agent may use, and ${JSON.stringify(choice.model)} has none in pricing or the built-in table. Add it: pricing: { ${JSON.stringify(choice.model)}: { inputPerMTok, outputPerMTok } }.`,
        );
      }
    }
  }
  const none =
    output === undefined &&
    o.prepareStep === undefined &&
    stopWhen === undefined &&
    guardrails === undefined &&
    fallback.length === 0 &&
    o.maxTotalTokens === undefined &&
    o.maxCostUsd === undefined;
  return {
    output: settings,
    steering: none
      ? undefined
      : {
          output,
          prepareStep: o.prepareStep,
          stopWhen,
          guardrails,
          fallback,
          maxTotalTokens: o.maxTotalTokens,
          maxCostUsd: o.maxCostUsd,
        },
  };
}

/** The steering of a run given its own `outputSchema` (`query(prompt, { outputSchema })`). Internal. */
export function withRunOutput(steering: RunSteering | undefined, output: RunOutput): RunSteering {
  return steering === undefined
    ? {
        output,
        prepareStep: undefined,
        stopWhen: undefined,
        guardrails: undefined,
        fallback: [],
        maxTotalTokens: undefined,
        maxCostUsd: undefined,
      }
    : { ...steering, output };
}

function checkStopWhen(value: unknown): readonly StopCondition[] | undefined {
  if (value === undefined) return undefined;
  const list = Array.isArray(value) ? value : [value];
  if (list.length === 0 || !list.every((condition) => typeof condition === "function")) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "stopWhen",
      `must be a condition or a non-empty array of conditions (stepCountIs(n), hasToolCall(name), or (state) => boolean), received ${describeValue(value)}.`,
    );
  }
  return list as StopCondition[];
}

function isProvider(value: unknown): value is ModelProviderV1 {
  return (
    value !== null &&
    typeof value === "object" &&
    (value as ModelProviderV1).specificationVersion === "v1" &&
    typeof (value as ModelProviderV1).stream === "function"
  );
}

function checkFallback(
  value: unknown,
  model: string,
  provider: ModelProviderV1,
): readonly ModelChoice[] {
  if (value === undefined) return [];
  const problem = `must be a non-empty array of providers or { provider?, model } entries, for example fallback: [{ model: "claude-haiku-4-5" }, openaiCompatible({ ... })]`;
  if (!Array.isArray(value) || value.length === 0) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "fallback",
      `${problem}; received ${describeValue(value)}.`,
    );
  }
  return value.map((entry: unknown, index) => {
    if (isProvider(entry)) return { provider: entry, model };
    if (entry !== null && typeof entry === "object" && !Array.isArray(entry)) {
      const { provider: given, model: named, ...rest } = entry as Record<string, unknown>;
      const unknown = Object.keys(rest)[0];
      const fine =
        unknown === undefined &&
        (given === undefined || isProvider(given)) &&
        (named === undefined || (typeof named === "string" && named !== "")) &&
        (given !== undefined || named !== undefined);
      if (fine) {
        return {
          provider: (given as ModelProviderV1 | undefined) ?? provider,
          model: (named as string | undefined) ?? model,
        };
      }
      if (unknown !== undefined) {
        throw new InvalidOptionError(
          AGENT_OPTIONS_PREFIX,
          `fallback[${index}]`,
          `has an unknown key ${JSON.stringify(unknown)}; an entry is a provider or { provider?, model? }.`,
        );
      }
    }
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      `fallback[${index}]`,
      `is not a provider or { provider?, model? } with at least one of them: received ${describeValue(entry)}.`,
    );
  });
}
