import type { ModelMessage, ModelProviderV1, ModelToolChoice } from "@lattice/providers";
import type { StandardSchemaV1 } from "@lattice/tools";
import type { Prompt } from "./agent.js";
import type { RunUsage } from "./sdk-message.js";
import type { JsonValue } from "./session-store.js";

/**
 * A schema for a run's typed final answer (L1): a Zod v4 schema (≥ 4.2, whose
 * `toJSONSchema()` gives the JSON Schema sent to the model), or any Standard Schema that also
 * implements Standard JSON Schema (`~standard.jsonSchema`). Its root must be an object
 * schema: the APIs' native output and tool inputs are objects (wrap a list as
 * `z.object({ items: z.array(...) })`).
 *
 * @typeParam Output - What a valid answer validates to: `result.output`.
 */
export type OutputSchema<Output = unknown> = StandardSchemaV1<unknown, Output>;

/**
 * How a run asks the model for its typed answer (L2):
 * - `"native_json_schema"`: the API's own structured output (OpenAI `response_format`
 *   `json_schema` strict, Anthropic's native JSON-schema output); the final text is the JSON.
 * - `"forced_tool"`: a `final_answer` tool whose input is the answer, offered next to the
 *   agent's tools and forced when the model answers in text instead.
 * - `"auto"` (default): native where the provider says it supports it
 *   (`provider.nativeOutput`), the forced tool elsewhere (DeepSeek's `/anthropic`, gateways).
 */
export type OutputMode = "auto" | "native_json_schema" | "forced_tool";

/** What `prepareStep` receives before each model call (L5). */
export interface PrepareStepArgs<TContext = unknown> {
  /**
   * The step's number, as `agent.step()` and job queues count steps (a model call and a batch
   * are a step each): the model call of turn `t` is step `2t - 2`. This is not what
   * `stepCountIs(n)` counts (model calls, that is turns): compare `turn` with it.
   */
  readonly stepNumber: number;
  /** The 1-based turn of the model call about to be made. */
  readonly turn: number;
  /** The conversation the call would send; do not mutate it, return `messages` instead. */
  readonly messages: readonly ModelMessage[];
  /** Tokens the run used so far, child runs included. */
  readonly usage: RunUsage;
  /** The model the call would use (the agent's, or the fallback's the run moved to). */
  readonly model: string;
  /** The run's `context` (R9), as tools see it. */
  readonly context: TContext | undefined;
  /** The conversation (a one-off run's own id when no `sessionId` was given). */
  readonly sessionId: string;
  /** The run. */
  readonly runId: string;
}

/**
 * Overrides of one model call, returned by `prepareStep` (L5). Each applies to that call only
 * and is recorded on the call's `reply` log entry. Checked strictly: an unknown key, or an
 * `activeTools` name that matches no tool, ends the run with `error_during_execution` naming it.
 */
export interface StepOverrides {
  /** The model id for this call. */
  readonly model?: string;
  /** The provider for this call (with `model`, or the agent's model). */
  readonly provider?: ModelProviderV1;
  /** The names of the agent's tools offered this call (a subset; `[]` offers none). */
  readonly activeTools?: readonly string[];
  /** How the model may use the tools this call. */
  readonly toolChoice?: ModelToolChoice;
  /** The system prompt for this call. */
  readonly system?: string;
  /**
   * The conversation sent this call instead of the run's (pruned, summarised, ...). The log
   * keeps the original; the reply entry records how many messages were sent.
   */
  readonly messages?: readonly ModelMessage[];
}

/** Runs before every model call and may return overrides for that call (L5). */
export type PrepareStep<TContext = unknown> = (
  step: PrepareStepArgs<TContext>,
) => StepOverrides | undefined | Promise<StepOverrides | undefined>;

/** What a stop condition sees after a step with tool calls (L6). */
export interface StopConditionState {
  /** Model calls made so far. */
  readonly numTurns: number;
  /** The names of the tools the latest reply called, in order. */
  readonly toolCalls: readonly string[];
  /** The latest reply's text. */
  readonly text: string;
  /** Tokens used so far, child runs included. */
  readonly usage: RunUsage;
  /** The conversation so far. */
  readonly messages: readonly ModelMessage[];
}

/**
 * A condition checked after each step whose tool calls settled (L6): when it holds, the run
 * ends `success` with the latest reply's text instead of calling the model again.
 */
export type StopCondition = (state: StopConditionState) => boolean | Promise<boolean>;

/** What a guardrail answers: `tripwire: true` ends the run `guardrail_tripped` (L7, L8). */
export interface GuardrailVerdict {
  readonly tripwire: boolean;
  /** Why, for people: on the result's `guardrail.reason` and in the log. */
  readonly reason?: string;
  /** Anything else worth keeping (plain JSON): on `guardrail.info` and in the log. */
  readonly info?: JsonValue;
}

/** An output guardrail's request to try again: `retry` is sent to the model as feedback (L8). */
export interface GuardrailRetry {
  readonly retry: string;
}

/** What an input guardrail checks: the run's prompt, before or while the first call runs (L7). */
export interface InputGuardrailArgs<TContext = unknown> {
  /** The run's prompt. */
  readonly prompt: Prompt;
  /** The conversation the first call sends (history and prompt). */
  readonly messages: readonly ModelMessage[];
  /** The run's `context` (R9), as tools see it. */
  readonly context: TContext | undefined;
  /**
   * Aborts when the run does, or another guardrail tripped. The run does not wait for a
   * guardrail that ignores it.
   */
  readonly signal: AbortSignal;
}

/** What an output guardrail checks: the final answer, before the run ends (L8). */
export interface OutputGuardrailArgs<TContext = unknown> {
  /** The final text (with `outputSchema`, the answer's JSON text). */
  readonly text: string;
  /** The validated typed answer, with `outputSchema`; `undefined` otherwise. */
  readonly output: unknown;
  /** The conversation so far, the answer's reply included. */
  readonly messages: readonly ModelMessage[];
  /** The run's `context` (R9), as tools see it. */
  readonly context: TContext | undefined;
  /** Aborts when the run does; the run does not wait for a guardrail that ignores it. */
  readonly signal: AbortSignal;
}

/**
 * An input guardrail: a function of the prompt (its name, or `input[i]`, names it in the
 * result and the log), or `{ name, check }`, as `agentGuardrail()` makes. A guardrail that
 * throws counts as tripped, with its error as the reason (L9).
 */
export type InputGuardrail<TContext = unknown> =
  | ((args: InputGuardrailArgs<TContext>) => GuardrailVerdict | Promise<GuardrailVerdict>)
  | {
      readonly name: string;
      readonly check: (
        args: InputGuardrailArgs<TContext>,
      ) => GuardrailVerdict | Promise<GuardrailVerdict>;
    };

/** An output guardrail: like {@link InputGuardrail}, and it may answer `{ retry }` (L8). */
export type OutputGuardrail<TContext = unknown> =
  | ((
      args: OutputGuardrailArgs<TContext>,
    ) => GuardrailVerdict | GuardrailRetry | Promise<GuardrailVerdict | GuardrailRetry>)
  | {
      readonly name: string;
      readonly check: (
        args: OutputGuardrailArgs<TContext>,
      ) => GuardrailVerdict | GuardrailRetry | Promise<GuardrailVerdict | GuardrailRetry>;
    };

/** The agent's guardrails (L7, L8). Tool guardrails are the `beforeToolCall`/`onToolResult` hooks. */
export interface Guardrails<TContext = unknown> {
  /** Run on the prompt, concurrently with the first model call. */
  readonly input?: readonly InputGuardrail<TContext>[];
  /** Run on the final answer before the run ends. */
  readonly output?: readonly OutputGuardrail<TContext>[];
}

/**
 * One entry of `fallback` (L10): a provider (with the agent's model), or `{ provider, model }`
 * (either may be left out: the agent's is used).
 */
export type FallbackModel =
  | ModelProviderV1
  | { readonly provider?: ModelProviderV1; readonly model?: string };

/** The guardrail that ended a run `guardrail_tripped`, on the result (L7). */
export interface TrippedGuardrail {
  /** The guardrail's name (a function's own name, or `{ name }`). */
  readonly name: string;
  /** `"input"` or `"output"`. */
  readonly kind: "input" | "output";
  /** Why, as the guardrail said (or its error, when it threw). */
  readonly reason?: string;
  /** What else the guardrail returned as `info`, as JSON. */
  readonly info?: JsonValue;
}

/**
 * A stop condition that holds once the run made `count` model calls (L6): turns, not
 * `agent.step()` steps (`PrepareStepArgs.stepNumber` counts those).
 *
 * @example
 * ```ts
 * createAgent({ model, tools, stopWhen: stepCountIs(5) });
 * ```
 */
export function stepCountIs(count: number): StopCondition {
  if (!Number.isSafeInteger(count) || count < 1) {
    throw new TypeError(`stepCountIs(${String(count)}): the count must be a positive integer.`);
  }
  return (state) => state.numTurns >= count;
}

/**
 * A stop condition that holds once the latest reply called the tool `name` (L6).
 *
 * @example
 * ```ts
 * createAgent({ model, tools: [search, submit], stopWhen: hasToolCall("submit") });
 * ```
 */
export function hasToolCall(name: string): StopCondition {
  if (typeof name !== "string" || name === "") {
    throw new TypeError("hasToolCall(name): name must be a non-empty tool name.");
  }
  return (state) => state.toolCalls.includes(name);
}
