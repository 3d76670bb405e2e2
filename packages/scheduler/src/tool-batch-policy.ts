import { InvalidOptionError, type ToolKind } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";

/**
 * One tool call of a model reply, as the batch policy and the `beforeCall` hook see it (T23).
 */
export interface ToolBatchCall {
  /** The tool_use block's id. */
  readonly id: string;
  /** The tool the model called, as the model spelled it (it may name no known tool). */
  readonly name: string;
  /**
   * The input. The policy sees the model's raw input, exactly as sent (it runs before any
   * validation); `beforeCall` sees the input validated by the tool's schema.
   */
  readonly input: unknown;
  /** The called tool's kind; `"tool"` when the model named a tool the agent does not have. */
  readonly kind: ToolKind;
}

/** What the batch policy's `validate` receives: every call of one model reply, in tool_use order. */
export interface ToolBatchPolicyInput {
  /** Every tool call of the reply, in tool_use order. Frozen. */
  readonly toolCalls: readonly ToolBatchCall[];
  /**
   * The query's signal. `runToolBatch` always passes it (a signal that never aborts when the
   * batch has none); it is optional in the type so that code calling `validate` itself need
   * not make one. A policy that waits on something (a database, a service) should stop when it
   * aborts: the batch does not wait for a pending `validate` once the query is aborted (T22).
   */
  readonly signal?: AbortSignal;
}

/** The policy lets the batch run (T24). */
export interface ToolBatchAllowance {
  /** The batch may run. */
  readonly allowed: true;
}

/** The policy refuses the batch (T24): nothing runs, every call gets an `is_error` result (T25). */
export interface ToolBatchRefusal {
  /** The batch must not run. */
  readonly allowed: false;
  /** A stable, machine-readable reason, such as `"conflicting_writes"`; shown to the model. */
  readonly code: string;
  /** What is wrong with the batch, written for the model. */
  readonly message: string;
  /** The ids of the calls that conflict; each of them is told so in its result. Default none. */
  readonly conflictingToolCallIds?: readonly string[];
  /** What the model should do instead, for example "Send the two edits in separate replies." */
  readonly suggestedNextStep?: string;
}

/** What the batch policy's `validate` returns (T24). */
export type ToolBatchDecision = ToolBatchAllowance | ToolBatchRefusal;

/**
 * Checks a whole batch of tool calls before any of it runs (T23–T27): the `toolBatchPolicy`
 * agent option. It only sees one model reply; transactions and revision checks stay the
 * handlers' job (T28).
 */
export interface ToolBatchPolicy {
  /**
   * Decides whether the batch may run. May be sync or async. A throw, a rejection, or a value
   * that is not a {@link ToolBatchDecision} gives every call a `tool_batch_policy_error` result
   * and runs nothing (T26). If the query's signal aborts while it is pending, the batch stops
   * waiting for it: every call gets `"cancelled"` and the query rejects with an `AbortError`.
   *
   * @param batch - Every call of the reply (`id`, `name`, raw `input`, `kind`) and the
   *   query's `signal`.
   */
  validate(batch: ToolBatchPolicyInput): ToolBatchDecision | Promise<ToolBatchDecision>;
}

const POLICY_KEYS: ReadonlySet<string> = new Set(["validate"]);

/**
 * Validates the `toolBatchPolicy` option when an agent is created. A plain object (an object
 * literal, or one made with `Object.create(null)`) must have `validate` as its only own key,
 * so that a typo is caught (T31). A class instance (`new OneWritePolicy(db)`) only needs a
 * `validate` method: its own fields are its state, not options, and are not checked.
 *
 * @param policy - The option as given; `undefined` means no policy.
 * @param prefix - Who owns the option, printed first in messages. Default `"AgentOptions:"`.
 * @returns The policy, typed, or `undefined`.
 * @throws `InvalidOptionError` (from `@lattice/tools`) when the policy is not an object or `validate` is not a
 *   function.
 * @throws `UnknownOptionError` (from `@lattice/tools`) for an own key other than `validate` of a
 *   plain object (T31), as
 *   `AgentOptions: toolBatchPolicy: unknown option "<key>". Check for a typo, ...`.
 */
export function validateToolBatchPolicy(
  policy: unknown,
  prefix = "AgentOptions:",
): ToolBatchPolicy | undefined {
  if (policy === undefined) return undefined;
  if (policy === null || typeof policy !== "object" || Array.isArray(policy)) {
    throw new InvalidOptionError(
      prefix,
      "toolBatchPolicy",
      `must be an object { validate({ toolCalls }) }, received ${describeValue(policy)}. Omit it to run batches without a policy.`,
    );
  }
  if (isPlainObject(policy)) {
    assertKnownOptions(policy, POLICY_KEYS, `${prefix} toolBatchPolicy:`);
  }
  const { validate } = policy as { validate?: unknown };
  if (typeof validate !== "function") {
    throw new InvalidOptionError(
      prefix,
      "toolBatchPolicy.validate",
      `must be a function ({ toolCalls }) => { allowed: true } | { allowed: false, code, message, ... }, received ${describeValue(validate)}.`,
    );
  }
  return policy as ToolBatchPolicy;
}

/** An object literal or a null-prototype object, as opposed to a class instance. */
function isPlainObject(value: object): boolean {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/**
 * Checks what `validate` returned: a frozen, normalised decision, or (as a string) why the
 * value is not a decision.
 */
export function checkToolBatchDecision(value: unknown): ToolBatchDecision | string {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return `returned ${describeValue(value)}`;
  }
  const record = value as Record<string, unknown>;
  if (record.allowed === true) return ALLOWED;
  if (record.allowed !== false) {
    return `returned an object whose "allowed" is ${describeValue(record.allowed)}, not true or false`;
  }
  const { code, message, conflictingToolCallIds, suggestedNextStep } = record;
  if (typeof code !== "string" || code === "") {
    return `refused with "code" = ${describeValue(code)}; a refusal needs a non-empty string code`;
  }
  if (typeof message !== "string") {
    return `refused with "message" = ${describeValue(message)}; a refusal needs a string message`;
  }
  if (
    conflictingToolCallIds !== undefined &&
    !(
      Array.isArray(conflictingToolCallIds) &&
      conflictingToolCallIds.every((id) => typeof id === "string")
    )
  ) {
    return `refused with "conflictingToolCallIds" = ${describeValue(conflictingToolCallIds)}; it must be an array of tool call ids`;
  }
  if (suggestedNextStep !== undefined && typeof suggestedNextStep !== "string") {
    return `refused with "suggestedNextStep" = ${describeValue(suggestedNextStep)}; it must be a string`;
  }
  return Object.freeze({
    allowed: false,
    code,
    message,
    conflictingToolCallIds: Object.freeze([...((conflictingToolCallIds as string[]) ?? [])]),
    ...(suggestedNextStep !== undefined ? { suggestedNextStep } : {}),
  });
}

const ALLOWED: ToolBatchAllowance = Object.freeze({ allowed: true });

/** The text every call of a refused batch gets (T25); conflicting calls are told so. */
export function refusalText(decision: ToolBatchRefusal, toolUseId: string): string {
  const conflicting = decision.conflictingToolCallIds ?? [];
  let text = `The tool batch policy refused this batch (code "${decision.code}"): ${decision.message}`;
  if (conflicting.includes(toolUseId)) {
    const others = conflicting.filter((id) => id !== toolUseId);
    text +=
      others.length === 0
        ? "\nThis call is the one the policy objects to."
        : `\nThis call conflicts with: ${others.join(", ")}.`;
  }
  if (decision.suggestedNextStep !== undefined && decision.suggestedNextStep !== "") {
    text += `\nSuggested next step: ${decision.suggestedNextStep}`;
  }
  return `${text}\nNo tool call of this batch ran.`;
}

/** The text every call gets when the policy failed (T26). */
export function policyErrorText(problem: string): string {
  return `tool_batch_policy_error: the tool batch policy failed (${problem}), so no tool call of this batch ran. This is a fault in the application, not in the calls; you may send them again or tell the user.`;
}
