import type {
  ModelMessage,
  ModelProviderV1,
  ModelRequest,
  ModelResponse,
  ModelToolChoice,
  ModelToolSpec,
} from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { AgentRuntime } from "./agent-runtime.js";
import { errorMessage, toJson } from "./error-message.js";
import { priceOf } from "./model-pricing.js";
import { runCost } from "./run-cost.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import type { LoggedOverrides } from "./run-log-entry.js";
import { callOutputMode, OUTPUT_TOOL_NAME, type RunOutput } from "./run-output.js";
import type { ModelChoice, RunSteering } from "./run-steering.js";
import type { StepOverrides } from "./steering-options.js";

/** One model call as planned: where it may go (in fallback order) and what it sends. Internal. */
export interface CallPlan {
  /** The choices in order; the call starts at `index`. */
  readonly chain: readonly ModelChoice[];
  /** Where the run stands in the chain (L10: a run stays on the entry it moved to). */
  readonly index: number;
  /** The conversation sent (the run's, or `prepareStep`'s). */
  readonly messages: readonly ModelMessage[];
  /** What `prepareStep` changed, for the reply entry. */
  readonly overrides: LoggedOverrides | undefined;
  /** The request for a choice, without messages and signal. */
  readonly request: (choice: ModelChoice) => Omit<ModelRequest, "messages" | "signal">;
  /** Why a call to a choice could pass a budget (L11), or `undefined`: checked before each fallback. */
  readonly budget: (choice: ModelChoice) => string | undefined;
  /** The output mode of a choice's call, with typed output. */
  readonly outputMode: (choice: ModelChoice) => "native_json_schema" | "forced_tool" | undefined;
}

const OVERRIDE_KEYS: ReadonlySet<string> = new Set([
  "model",
  "provider",
  "activeTools",
  "toolChoice",
  "system",
  "messages",
]);

type Finish = Exclude<StepOutcome, undefined | { type: "interrupt" }>;

/**
 * The stage before a steered model call: an exhausted output retry count ends the run
 * `error_output_invalid` (L3), a budget the call could pass ends it `error_budget` (L11),
 * then `prepareStep` (L5) gives this call's overrides, and the plan says what each
 * provider of the fallback chain is sent (L2, L10). Internal.
 */
export async function planCall(
  env: RunEnv,
  steer: RunSteering,
  turn: number,
): Promise<CallPlan | Finish> {
  const { runtime, run } = env;
  const output = steer.output;
  if (output !== undefined && run.outputFailures > output.retries) {
    return invalidOutput(output, run.lastOutputError);
  }
  let overrides: StepOverrides | undefined;
  if (steer.prepareStep !== undefined) {
    try {
      overrides = checkOverrides(
        await steer.prepareStep({
          stepNumber: 2 * (turn - 1),
          turn,
          messages: env.state.messages,
          usage: { ...run.usage },
          model: (steer.fallback[run.fallbackIndex - 1] ?? runtime).model,
          context: env.placement.context,
          sessionId: env.sessionId,
          runId: env.runId,
        }),
        runtime,
      );
    } catch (error) {
      if (env.signal.aborted) throw error;
      return {
        type: "finish",
        subtype: "error_during_execution",
        result: "",
        errors: [
          `prepareStep failed before the model call of turn ${turn}: ${errorMessage(error)}`,
        ],
        numTurns: run.numTurns,
      };
    }
  }
  const first: ModelChoice = {
    provider: overrides?.provider ?? runtime.provider,
    model: overrides?.model ?? runtime.model,
  };
  const chain = [first, ...steer.fallback];
  // An override of the model or provider is this call's own choice: the chain starts there.
  const index =
    overrides?.model !== undefined || overrides?.provider !== undefined ? 0 : run.fallbackIndex;
  const choice = chain[Math.min(index, chain.length - 1)]!;
  const budget = budgetProblem(env, steer, choice);
  if (budget !== undefined) {
    return { type: "finish", subtype: "error_budget", result: "", errors: [budget] };
  }
  const base = requestBase(runtime, overrides);
  const forceTool = output !== undefined && run.feedback?.reason === "use_tool";
  return {
    chain,
    index: Math.min(index, chain.length - 1),
    messages: overrides?.messages ?? env.state.messages,
    overrides: overrides === undefined ? undefined : logged(overrides),
    budget: (option) => budgetProblem(env, steer, option),
    outputMode: (option) =>
      output === undefined ? undefined : callOutputMode(output, option.provider),
    request: (option) => {
      const request = option.model === base.model ? base : { ...base, model: option.model };
      if (output === undefined) return request;
      if (callOutputMode(output, option.provider) === "native_json_schema") {
        return { ...request, output: output.format };
      }
      return withOutputTool(request, output, forceTool);
    },
  };
}

/** A finish outcome for an answer that stayed invalid after the retries (L3). Internal. */
export function invalidOutput(output: RunOutput, error: string | undefined): Finish {
  return {
    type: "finish",
    subtype: "error_output_invalid",
    result: "",
    errors: [
      `The model's answer did not match the outputSchema after ${output.retries} ${output.retries === 1 ? "retry" : "retries"} (outputRetries). Last problem: ${error ?? "none recorded"}`,
    ],
  };
}

/** The forced-tool request: the `final_answer` tool offered, and forced after a text answer. */
function withOutputTool(
  request: Omit<ModelRequest, "messages" | "signal">,
  output: RunOutput,
  force: boolean,
): Omit<ModelRequest, "messages" | "signal"> {
  const spec: ModelToolSpec = {
    name: OUTPUT_TOOL_NAME,
    description: output.tool.description,
    inputSchema: output.jsonSchema,
  };
  const tools = [...(request.tools ?? []), spec];
  // Anthropic refuses a forced tool together with thinking: the feedback asks for it then.
  const toolChoice: ModelToolChoice | undefined =
    force && request.thinking === undefined
      ? { type: "tool", name: OUTPUT_TOOL_NAME }
      : request.toolChoice?.type === "none"
        ? undefined
        : request.toolChoice;
  const { toolChoice: _replaced, ...rest } = request;
  return { ...rest, tools, ...(toolChoice !== undefined ? { toolChoice } : {}) };
}

/** The request of a call with `prepareStep`'s overrides applied. */
function requestBase(
  runtime: AgentRuntime,
  overrides: StepOverrides | undefined,
): Omit<ModelRequest, "messages" | "signal"> {
  const request = runtime.request;
  if (overrides === undefined) return request;
  let result = { ...request };
  if (overrides.model !== undefined) result = { ...result, model: overrides.model };
  if (overrides.system !== undefined) result = { ...result, system: overrides.system };
  if (overrides.toolChoice !== undefined) result = { ...result, toolChoice: overrides.toolChoice };
  if (overrides.activeTools !== undefined) {
    const active = new Set(overrides.activeTools);
    const tools = (request.tools ?? []).filter((spec) => active.has(spec.name));
    const { tools: _all, ...rest } = result;
    result = tools.length > 0 ? { ...rest, tools } : rest;
  }
  return result;
}

/**
 * Checks what `prepareStep` returned (L5, L13): `undefined`, or an object of known keys whose
 * `activeTools` name the agent's tools.
 *
 * @throws `InvalidOptionError` naming the problem (the run then ends with it).
 */
function checkOverrides(value: unknown, runtime: AgentRuntime): StepOverrides | undefined {
  if (value === undefined) return undefined;
  const prefix = "prepareStep():";
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidOptionError(
      prefix,
      "return value",
      `must be an object of overrides or undefined, received ${describeValue(value)}.`,
    );
  }
  for (const key of Object.keys(value)) {
    if (!OVERRIDE_KEYS.has(key)) {
      throw new InvalidOptionError(
        prefix,
        key,
        `is not an override. The keys are ${[...OVERRIDE_KEYS].join(", ")}.`,
      );
    }
  }
  const overrides = value as StepOverrides;
  if (
    overrides.model !== undefined &&
    (typeof overrides.model !== "string" || overrides.model === "")
  ) {
    throw new InvalidOptionError(
      prefix,
      "model",
      `must be a model id, received ${describeValue(overrides.model)}.`,
    );
  }
  if (
    overrides.provider !== undefined &&
    (overrides.provider === null ||
      typeof overrides.provider !== "object" ||
      typeof overrides.provider.stream !== "function")
  ) {
    throw new InvalidOptionError(
      prefix,
      "provider",
      `must be a provider, received ${describeValue(overrides.provider)}.`,
    );
  }
  if (overrides.system !== undefined && typeof overrides.system !== "string") {
    throw new InvalidOptionError(
      prefix,
      "system",
      `must be a string, received ${describeValue(overrides.system)}.`,
    );
  }
  if (overrides.activeTools !== undefined) {
    if (!Array.isArray(overrides.activeTools)) {
      throw new InvalidOptionError(
        prefix,
        "activeTools",
        `must be an array of tool names, received ${describeValue(overrides.activeTools)}.`,
      );
    }
    for (const name of overrides.activeTools) {
      if (!runtime.tools.some((definition) => definition.name === name)) {
        throw new InvalidOptionError(
          prefix,
          "activeTools",
          `names ${describeValue(name)}, which is none of the agent's tools (${runtime.tools.map((definition) => definition.name).join(", ") || "it has none"}).`,
        );
      }
    }
  }
  if (overrides.toolChoice !== undefined) {
    const choice = overrides.toolChoice as { type?: unknown; name?: unknown };
    const fine =
      choice !== null &&
      typeof choice === "object" &&
      (choice.type === "auto" ||
        choice.type === "any" ||
        choice.type === "none" ||
        (choice.type === "tool" && typeof choice.name === "string"));
    if (!fine) {
      throw new InvalidOptionError(
        prefix,
        "toolChoice",
        `must be { type: "auto" | "any" | "none" } or { type: "tool", name }, received ${describeValue(overrides.toolChoice)}.`,
      );
    }
  }
  if (
    overrides.messages !== undefined &&
    (!Array.isArray(overrides.messages) || overrides.messages.length === 0)
  ) {
    throw new InvalidOptionError(
      prefix,
      "messages",
      `must be a non-empty array of messages, received ${describeValue(overrides.messages)}.`,
    );
  }
  return overrides;
}

/** The overrides as the reply entry records them. */
function logged(overrides: StepOverrides): LoggedOverrides {
  return {
    ...(overrides.model !== undefined ? { model: overrides.model } : {}),
    ...(overrides.provider !== undefined ? { provider: overrides.provider.name } : {}),
    ...(overrides.activeTools !== undefined ? { activeTools: [...overrides.activeTools] } : {}),
    ...(overrides.toolChoice !== undefined ? { toolChoice: toJson(overrides.toolChoice) } : {}),
    ...(overrides.system !== undefined ? { system: overrides.system } : {}),
    ...(overrides.messages !== undefined ? { messages: overrides.messages.length } : {}),
  };
}

/**
 * Whether the next call could pass a budget (L11): what the run used, plus the call's worst
 * case — its input, at least what the last call read and wrote (the conversation only grows),
 * and `maxTokens` of output. A budget is so never passed by more than the part of one call's
 * input that came after the estimate (tool results, mail).
 */
function budgetProblem(env: RunEnv, steer: RunSteering, choice: ModelChoice): string | undefined {
  const { run, runtime } = env;
  const maxTotal = steer.maxTotalTokens;
  const maxCost = steer.maxCostUsd;
  if (maxTotal === undefined && maxCost === undefined) return undefined;
  const usage = run.usage;
  const spent =
    usage.inputTokens +
    usage.outputTokens +
    usage.cacheReadInputTokens +
    usage.cacheCreationInputTokens;
  const last = run.lastReply?.usage;
  const nextInput =
    last === undefined
      ? 0
      : last.inputTokens +
        last.outputTokens +
        last.cacheReadInputTokens +
        last.cacheCreationInputTokens;
  const maxTokens = runtime.request.maxTokens;
  if (maxTotal !== undefined && spent + nextInput + maxTokens > maxTotal) {
    return `The run would pass its token budget (maxTotalTokens ${maxTotal}): it used ${spent} tokens, and the next model call could use up to ${nextInput + maxTokens} more (about ${nextInput} of input and maxTokens ${maxTokens} of output), so it was not made. Raise maxTotalTokens, or lower maxTokens.`;
  }
  if (maxCost !== undefined) {
    const price = priceOf(choice.model, runtime.pricing);
    const cost = runCost(run, runtime.model, runtime.pricing);
    if (price === undefined || cost === undefined) {
      return `The run's cost cannot be checked against maxCostUsd ${maxCost}: the model ${JSON.stringify(price === undefined ? choice.model : "of a child run")} has no known price. Add it to pricing.`;
    }
    const worst = (nextInput * price.inputPerMTok + maxTokens * price.outputPerMTok) / 1_000_000;
    if (cost + worst > maxCost) {
      return `The run would pass its cost budget (maxCostUsd ${maxCost}): it spent $${cost.toFixed(6)}, and the next model call on ${choice.model} could cost up to $${worst.toFixed(6)} more, so it was not made. Raise maxCostUsd, or lower maxTokens.`;
    }
  }
  return undefined;
}

/**
 * Whether a reply is a refusal that names capacity (L10): the model declined because it is
 * overloaded, not because of what was asked. Internal.
 */
export function isCapacityRefusal(response: ModelResponse): boolean {
  if (response.stopReason !== "refusal") return false;
  for (const block of response.message.content) {
    if (block.type === "text" && /\b(capacity|overloaded|overload)\b/i.test(block.text)) {
      return true;
    }
  }
  return false;
}

/** Whether a failure moves a call to the next fallback entry (L10). Internal. */
export function isFallbackError(error: unknown): boolean {
  if (error === null || typeof error !== "object") return false;
  const { retryable, code } = error as { retryable?: unknown; code?: unknown };
  return (
    retryable === true ||
    code === "provider_overloaded" ||
    code === "provider_rate_limited" ||
    code === "provider_server_error" ||
    code === "provider_timeout" ||
    code === "provider_connection"
  );
}

/** A provider's name, for traces. */
export function providerName(provider: ModelProviderV1): string {
  return provider.name;
}
