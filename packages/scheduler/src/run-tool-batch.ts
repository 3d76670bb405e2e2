import {
  type AnyToolDefinition,
  errorToolResult,
  LatticeError,
  parseToolInput,
  type ToolContext,
  ToolInputError,
  type ToolKind,
  type ToolResult,
} from "@lattice/tools";
import { describeValue, executeTool } from "@lattice/tools/internal";
import { createAbortError } from "./abort-error.js";
import { ToolBatchPolicyError, ToolBatchRefusedError, ToolCallHookError } from "./errors.js";
import { findEndTurn, type ToolBatchEndTurn } from "./find-end-turn.js";
import { deepFreeze, frozenCopy } from "./frozen-input.js";
import { planToolBatch, type ToolBatchPlan, type ToolBatchRun } from "./plan-tool-batch.js";
import { isThenable, raceAbort } from "./race-abort.js";
import {
  DEFAULT_TOOL_CONCURRENCY,
  type ResolvedToolConcurrency,
} from "./resolve-tool-concurrency.js";
import type { ToolBatchEvent } from "./tool-batch-event.js";
import {
  checkToolBatchDecision,
  policyErrorText,
  refusalText,
  type ToolBatchCall,
  type ToolBatchDecision,
  type ToolBatchPolicy,
} from "./tool-batch-policy.js";

/**
 * How one call of a batch ended:
 * - `"completed"`: its handler ran and returned a result that is not an error;
 * - `"failed"`: its handler threw, returned `isError: true` or a malformed value (T6, T21);
 * - `"invalid_input"`: its input failed the tool's schema, the handler never ran (T3);
 * - `"unknown_tool"`: the model named a tool the agent does not have;
 * - `"denied"`: `beforeCall` denied it, or the hook itself failed;
 * - `"refused"`: the batch policy refused the batch (T25);
 * - `"policy_error"`: the batch policy failed (T26);
 * - `"cancelled"`: the query was aborted before the call could start (T22), or
 *   `mayStartCall` answered `false` before it started (H28);
 * - `"abandoned"`: the query was aborted, and the started handler ignored its signal and had
 *   not settled when `abortGraceMs` ran out (H5). It may still be running; its late result
 *   is dropped.
 */
export type ToolCallStatus =
  | "completed"
  | "failed"
  | "invalid_input"
  | "unknown_tool"
  | "denied"
  | "refused"
  | "policy_error"
  | "cancelled"
  | "abandoned"
  | "timed_out";

/**
 * A person's decision on a call that needed approval (R15): run it (`approved: true`,
 * optionally with an edited `input`, validated again), or answer it with an `is_error` result
 * carrying `reason` (`approved: false`).
 */
export type ApprovalDecision =
  | { readonly approved: true; readonly input?: unknown }
  | { readonly approved: false; readonly reason?: string };

/** A call that needs a person's decision before it can run (R14). */
export interface ToolBatchPendingApproval {
  /** The tool_use block's id. */
  readonly id: string;
  /** The tool called. */
  readonly name: string;
  /** The tool's kind. */
  readonly kind: ToolKind;
  /** The input as the model sent it (it is validated again when the batch runs). */
  readonly input: unknown;
}

/** A tool call as the model sent it: one tool_use block. */
export interface ToolBatchInputCall {
  /** The tool_use block's id. */
  readonly id: string;
  /** The tool the model called. */
  readonly name: string;
  /** The raw input (parsed JSON), exactly as the model sent it. */
  readonly input: unknown;
  /**
   * Why the model's input could not be used (JSON that did not parse, too deep, too large),
   * when the provider found it so. The call is answered `is_error` with this text and status
   * `"invalid_input"` before anything runs (H6).
   */
  readonly inputError?: string | undefined;
}

/**
 * What `beforeCall` may answer: `undefined` to let the call run, `{ deny }` to answer it with
 * an `is_error` result carrying that text, or `{ input }` to run it with another input (which
 * is validated again with the tool's schema).
 */
export type BeforeToolCallResult =
  | undefined
  | {
      /** The text of the call's `is_error` result; `""` gives a default sentence. */
      readonly deny: string;
    }
  | {
      /** The input to run the call with instead; validated again with the tool's schema. */
      readonly input: unknown;
    };

/** What `beforeCall` receives besides the call. */
export interface BeforeToolCallContext {
  /**
   * The query's signal (a signal that never aborts when the batch has none). A hook that
   * waits on something should stop when it aborts: the batch does not wait for it (T22).
   */
  readonly signal: AbortSignal;
}

/**
 * A per-call hook run after the policy allowed the batch and before planning (the core's
 * `beforeToolCall`). Called once per call that would run (known tool, valid input), one call
 * at a time, in tool_use order. When the signal aborts while it is pending, the batch stops
 * waiting for it and settles at once: the calls get `"cancelled"`.
 */
export type BeforeToolCall = (
  call: ToolBatchCall,
  context: BeforeToolCallContext,
) => BeforeToolCallResult | Promise<BeforeToolCallResult>;

/** Options of {@link runToolBatch}. */
export interface RunToolBatchOptions {
  /** The reply's tool calls, in tool_use order, with their raw inputs. */
  readonly calls: readonly ToolBatchInputCall[];
  /** The agent's tools by name. */
  readonly tools: ReadonlyMap<string, AnyToolDefinition>;
  /** Resolved concurrency settings (see `resolveToolConcurrency`). Default `{ mode: "safe", maxConcurrency: 10 }`. */
  readonly concurrency?: ResolvedToolConcurrency | undefined;
  /** The batch policy (T23–T27). Default none: every batch is allowed. */
  readonly policy?: ToolBatchPolicy | undefined;
  /** The query's signal (T22). Default: a signal that never aborts. */
  readonly signal?: AbortSignal | undefined;
  /** Per-call hook: deny a call or replace its input. Default none. */
  readonly beforeCall?: BeforeToolCall | undefined;
  /**
   * Asked, synchronously, right before each handler would start, in the same step as the
   * signal's abort check and before the call's `tool_call_started` event and context: once it
   * answers `false`, no further call of the batch starts (it is not asked again), and the calls
   * that had not started are settled `"cancelled"`, as after an abort; handlers already running
   * go on. For a caller that may lose the right to act at any moment, such as a worker whose
   * lease on the session lapsed (H28). A throw counts as `false`. Default: every call may
   * start.
   */
  readonly mayStartCall?: (() => boolean) | undefined;
  /**
   * Builds each handler's context (T7) and the context `needsApproval` gets. `signal` is the
   * call's own: the batch's, also aborted at the call's deadline (R20). Default
   * `{ signal, toolUseId, toolName }`. If it throws, that call fails with an `is_error` result.
   */
  readonly createContext?:
    | ((call: ToolBatchCall, definition: AnyToolDefinition, signal: AbortSignal) => ToolContext)
    | undefined;
  /**
   * The time limit, in milliseconds, of handlers whose tool sets no `timeoutMs` of its own
   * (R20). Default: none.
   */
  readonly toolTimeoutMs?: number | undefined;
  /**
   * Decisions on calls that needed approval, by tool_use id (R15): an approved call runs
   * (with its edited input, validated again), a denied one gets an `is_error` result. Calls
   * without a decision are checked with their tool's `needsApproval`.
   */
  readonly approvalDecisions?: ReadonlyMap<string, ApprovalDecision> | undefined;
  /** Receives timing and decision events, synchronously. Whatever it throws is ignored. */
  readonly onEvent?: ((event: ToolBatchEvent) => void) | undefined;
  /**
   * Receives each call's outcome the moment its result is known, in settle order (the batch's
   * `results` keep tool_use order), synchronously; whatever it throws is ignored. A run log
   * appends each result here, so that a result is durable before the batch ends.
   */
  readonly onCallSettled?: ((outcome: ToolCallOutcome) => void) | undefined;
  /** The monotonic clock, in milliseconds. Default `performance.now()`. */
  readonly now?: (() => number) | undefined;
  /**
   * After `signal` aborts, how long to wait for started handlers to settle before giving up on
   * them (H5): the batch then settles with `aborted: true` and every handler still running is
   * reported `"abandoned"`. Handlers that honour their signal settle first, as T22 says.
   * Default {@link DEFAULT_ABORT_GRACE_MS} (5,000 ms); `Infinity` waits for ever (the T22
   * behaviour before H5).
   */
  readonly abortGraceMs?: number | undefined;
}

/** The default `abortGraceMs`: how long an aborted batch waits for started handlers. */
export const DEFAULT_ABORT_GRACE_MS = 5_000;

/** One call's result, as the batch returns it. */
export interface ToolCallOutcome {
  /** The tool_use block's id. */
  readonly id: string;
  /** The tool name the model called. */
  readonly name: string;
  /** The tool's kind; `"tool"` for an unknown tool. */
  readonly kind: ToolKind;
  /** The validated input when it passed the schema (replaced by `beforeCall` if it said so), else the raw input. */
  readonly input: unknown;
  /** What becomes the call's tool_result block. */
  readonly result: ToolResult;
  /** How the call ended. */
  readonly status: ToolCallStatus;
  /** When the batch arrived, on the batch's clock. */
  readonly queuedAt: number;
  /** When its handler started; absent when no handler ran. */
  readonly startedAt?: number;
  /** When its result was known. */
  readonly finishedAt: number;
}

/** What {@link runToolBatch} resolves with. */
export interface ToolBatchResult {
  /**
   * Exactly one outcome per call, in tool_use order (T20); empty when `pendingApprovals` is
   * set (nothing ran).
   */
  readonly results: readonly ToolCallOutcome[];
  /**
   * The calls that need a person's decision (R13, R14), when some do: then no call of the
   * batch ran. Run the batch again with `approvalDecisions` for every one of them.
   */
  readonly pendingApprovals?: readonly ToolBatchPendingApproval[];
  /**
   * `true` when the signal was aborted before the batch settled: the loop should reject with
   * `createAbortError(signal.reason)`. Every started handler has settled by then (T22).
   */
  readonly aborted: boolean;
  /** The policy's decision; `undefined` without a policy or when the policy failed. */
  readonly decision: ToolBatchDecision | undefined;
  /** Why the policy failed (T26), when it did. */
  readonly policyError?: ToolBatchPolicyError;
  /** The plan that ran; its `runs` are empty when nothing was scheduled. */
  readonly plan: ToolBatchPlan;
  /** The first call, in tool_use order, that asked to end the run (T8, T10, T11). */
  readonly endTurn?: ToolBatchEndTurn;
}

/**
 * Runs one model reply's tool calls (T12–T27): checks the whole batch with the policy, lets
 * `beforeCall` deny or rewrite calls, validates inputs, plans runs, executes them with a pool
 * of at most `maxConcurrency` handlers, and returns one result per call in tool_use order.
 *
 * Never rejects because of a tool, the policy, a hook or a listener: each of those becomes an
 * `is_error` result. On abort, or once `mayStartCall` answers `false`, calls not yet started
 * are never started; on abort the promise settles after every started handler has settled,
 * with `aborted: true`, or after `abortGraceMs` when some handler ignores its signal: those
 * are reported `"abandoned"` (H5). A policy or
 * `beforeCall` still pending when the signal aborts is not waited for (both receive the
 * signal, so they can stop): the batch settles at once and its calls get `"cancelled"`.
 *
 * @param options - {@link RunToolBatchOptions}.
 * @returns The {@link ToolBatchResult}.
 */
export function runToolBatch(options: RunToolBatchOptions): Promise<ToolBatchResult> {
  return new BatchExecution(options).run();
}

/** The mutable state of one call while its batch runs. Read by the planner as a plan call. */
interface CallState {
  readonly index: number;
  readonly id: string;
  readonly name: string;
  readonly kind: ToolKind;
  readonly definition: AnyToolDefinition | undefined;
  /** The input as the model sent it; deep-frozen once a batch policy has seen it. */
  readonly rawInput: unknown;
  /** Why the model's input is unusable, as the provider found it (H6). */
  readonly inputError: string | undefined;
  /** Raw input until validated, then the validated input. */
  input: unknown;
  /** Set when the call will not run; makes it unsafe for the planner. */
  error: unknown;
  /** The result of a call that will not run, and its status. */
  prepared: ToolResult | undefined;
  preparedStatus: ToolCallStatus;
  startedAt: number | undefined;
  outcome: ToolCallOutcome | undefined;
}

const defaultNow = (): number => performance.now();

class BatchExecution {
  private readonly options: RunToolBatchOptions;
  private readonly now: () => number;
  private readonly onEvent: ((event: ToolBatchEvent) => void) | undefined;
  private readonly signal: AbortSignal | undefined;
  private readonly concurrency: ResolvedToolConcurrency;
  private readonly abortGraceMs: number;
  private readonly mayStartCall: (() => boolean) | undefined;
  /** Set once `mayStartCall` answered `false`: no call starts from then on. */
  private startsStopped = false;
  private readonly states: CallState[];
  private queuedAt = 0;
  private inFlight = 0;
  private contextSignal: AbortSignal | undefined;
  private decision: ToolBatchDecision | undefined;
  private policyError: ToolBatchPolicyError | undefined;
  private pendingApprovals: ToolBatchPendingApproval[] | undefined;

  constructor(options: RunToolBatchOptions) {
    this.options = options;
    this.now = options.now ?? defaultNow;
    this.onEvent = options.onEvent;
    this.signal = options.signal;
    this.mayStartCall = options.mayStartCall;
    this.concurrency = options.concurrency ?? DEFAULT_TOOL_CONCURRENCY;
    const grace = options.abortGraceMs;
    this.abortGraceMs = typeof grace === "number" && grace >= 0 ? grace : DEFAULT_ABORT_GRACE_MS;
    this.states = new Array<CallState>(options.calls.length);
  }

  async run(): Promise<ToolBatchResult> {
    const { calls, tools, policy } = this.options;
    const states = this.states;
    const queuedAt = this.now();
    this.queuedAt = queuedAt;
    for (let index = 0; index < calls.length; index++) {
      const call = calls[index]!;
      const definition = tools.get(call.name);
      const state: CallState = {
        index,
        id: call.id,
        name: call.name,
        kind: definition?.kind ?? "tool",
        definition,
        rawInput: call.input,
        inputError: call.inputError,
        input: call.input,
        error: undefined,
        prepared: undefined,
        preparedStatus: "completed",
        startedAt: undefined,
        outcome: undefined,
      };
      states[index] = state;
      if (this.onEvent !== undefined) {
        this.emit({
          type: "tool_call_queued",
          time: queuedAt,
          index,
          id: state.id,
          name: state.name,
          kind: state.kind,
        });
      }
    }
    if (this.signal?.aborted) return this.settle(undefined);
    if (policy !== undefined && !(await this.checkPolicy(policy))) return this.settle(undefined);
    await this.prepare();
    if (this.signal?.aborted) return this.settle(undefined);
    if (this.pendingApprovals !== undefined) {
      return {
        results: [],
        aborted: false,
        decision: this.decision,
        plan: {
          mode: this.concurrency.mode,
          maxConcurrency: this.concurrency.maxConcurrency,
          runs: [],
        },
        pendingApprovals: this.pendingApprovals,
      };
    }
    const plan = planToolBatch(states, this.concurrency);
    if (this.onEvent !== undefined) this.emit({ type: "batch_planned", time: this.now(), plan });
    await this.withinGrace(this.executeRuns(plan.runs));
    return this.settle(plan);
  }

  private async executeRuns(runs: readonly ToolBatchRun[]): Promise<void> {
    for (let runIndex = 0; runIndex < runs.length; runIndex++) {
      if (this.signal?.aborted || this.startsStopped) return;
      await this.executeRun(runs[runIndex]!, runIndex);
    }
  }

  /**
   * Waits for the runs, or, once the signal has aborted, for `abortGraceMs` at most: then the
   * handlers still running are reported `"abandoned"` and the batch settles without them (H5).
   */
  private withinGrace(work: Promise<void>): Promise<void> {
    const signal = this.signal;
    const grace = this.abortGraceMs;
    if (signal === undefined || grace === Number.POSITIVE_INFINITY) return work;
    return new Promise<void>((resolve, reject) => {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const onAbort = (): void => {
        timer = setTimeout(
          () => {
            this.abandonRunning();
            resolve();
          },
          Math.min(grace, MAX_TIMER_MS),
        );
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
      const done = (): void => {
        signal.removeEventListener("abort", onAbort);
        if (timer !== undefined) clearTimeout(timer);
      };
      work.then(
        () => {
          done();
          resolve();
        },
        (error: unknown) => {
          done();
          reject(error);
        },
      );
    });
  }

  /** Gives up on every handler still running after the abort grace ran out (H5). */
  private abandonRunning(): void {
    for (const state of this.states) {
      if (state.startedAt === undefined || state.outcome !== undefined) continue;
      const text = `Tool "${state.name}" (${state.id}) was abandoned: the query was aborted and its handler had not settled ${this.abortGraceMs} ms later. It may still be running; make the handler stop when its context.signal aborts.`;
      this.inFlight--;
      this.complete(
        state,
        "abandoned",
        errorToolResult(text, createAbortError(this.signal?.reason)),
      );
    }
  }

  /** Asks the policy (T23–T27); on refusal or failure, answers every call and returns false. */
  private async checkPolicy(policy: ToolBatchPolicy): Promise<boolean> {
    const toolCalls = Object.freeze(
      this.states.map((state) =>
        // The model's own input, deep-frozen: a policy that keeps it cannot change what is
        // validated and run later, nor the history sent back to the model (H2).
        Object.freeze({
          id: state.id,
          name: state.name,
          input: deepFreeze(state.input),
          kind: state.kind,
        }),
      ),
    );
    let problem: string | undefined;
    let cause: unknown;
    try {
      const decision = await raceAbort(
        policy.validate({ toolCalls, signal: this.handlerSignal() }),
        this.signal,
      );
      const checked = checkToolBatchDecision(decision);
      if (typeof checked === "string") problem = `validate ${checked}`;
      else this.decision = checked;
    } catch (error) {
      // Aborted while the policy was pending (or it stopped because of the abort): the calls
      // are cancelled, not failed.
      if (this.signal?.aborted) return false;
      cause = error;
      problem = `validate threw: ${errorMessage(error)}`;
    }
    if (problem !== undefined) {
      const error = new ToolBatchPolicyError(
        `toolBatchPolicy.validate failed: ${problem}. It must return (or resolve to) { allowed: true } or { allowed: false, code, message, conflictingToolCallIds?, suggestedNextStep? }; every call of the batch got a tool_batch_policy_error result and none ran.`,
        cause !== undefined ? { cause } : undefined,
      );
      this.policyError = error;
      if (this.onEvent !== undefined) this.emit({ type: "batch_policy", time: this.now(), error });
      const result = errorToolResult(policyErrorText(problem), error);
      for (const state of this.states) this.complete(state, "policy_error", result);
      return false;
    }
    const decision = this.decision!;
    if (this.onEvent !== undefined) this.emit({ type: "batch_policy", time: this.now(), decision });
    if (decision.allowed) return true;
    const error = new ToolBatchRefusedError(decision);
    for (const state of this.states) {
      this.complete(state, "refused", errorToolResult(refusalText(decision, state.id), error));
    }
    return false;
  }

  /** Validates inputs (T3) and runs `beforeCall`; answers the calls that will not run. */
  private async prepare(): Promise<void> {
    for (const state of this.states) {
      const definition = state.definition;
      if (definition === undefined) {
        const text = unknownToolText(state.name, this.options.tools);
        this.refuse(state, "unknown_tool", text, new LatticeError("unknown_tool", text));
        continue;
      }
      if (state.inputError !== undefined) {
        const text = state.inputError;
        this.refuse(state, "invalid_input", text, new ToolInputError(state.name, [], text));
        continue;
      }
      const parsed = await parseToolInput(definition, state.input);
      if (!parsed.success) {
        this.refuse(state, "invalid_input", parsed.error.message, parsed.error);
        continue;
      }
      state.input = parsed.input;
    }
    // Approvals before beforeCall (R17): a call that waits for a person is not asked about.
    if (!(await this.checkApprovals()) || this.pendingApprovals !== undefined) return;
    const beforeCall = this.options.beforeCall;
    if (beforeCall === undefined) return;
    for (const state of this.states) {
      if (state.prepared !== undefined) continue;
      if (this.signal?.aborted) return;
      if (!(await this.askBeforeCall(beforeCall, state, state.definition!))) return;
    }
  }

  /**
   * Applies the decisions given and asks each other call's `needsApproval` (R13–R15). Sets
   * `pendingApprovals` when some call needs a decision. `false` when the signal aborted.
   */
  private async checkApprovals(): Promise<boolean> {
    const decisions = this.options.approvalDecisions;
    let pending: ToolBatchPendingApproval[] | undefined;
    for (const state of this.states) {
      if (state.prepared !== undefined) continue;
      const definition = state.definition!;
      const decision = decisions?.get(state.id);
      if (decision !== undefined) {
        if (!decision.approved) {
          const reason = decision.reason;
          const text =
            reason !== undefined && reason !== ""
              ? `Tool call "${state.name}" (${state.id}) was denied by the person asked to approve it: ${reason}`
              : `Tool call "${state.name}" (${state.id}) was denied by the person asked to approve it.`;
          this.refuse(state, "denied", text, new LatticeError("tool_call_denied", text));
          continue;
        }
        if ("input" in decision && decision.input !== undefined) {
          const parsed = await parseToolInput(definition, decision.input);
          if (parsed.success) state.input = parsed.input;
          else {
            const text = `Tool call "${state.name}" (${state.id}) was approved with an edited input that is not valid, so it did not run: ${parsed.error.message}`;
            state.input = decision.input;
            this.refuse(state, "invalid_input", text, parsed.error);
          }
        }
        continue;
      }
      const rule = definition.needsApproval;
      if (rule === undefined) continue;
      let needed = rule === true;
      if (rule !== true) {
        try {
          const copy = frozenCopy(state.input);
          const context = this.contextFor(state, definition, this.handlerSignal());
          needed =
            (await raceAbort(
              Promise.resolve(rule(copy === undefined ? state.input : copy.value, context)),
              this.signal,
            )) === true;
        } catch (error) {
          if (this.signal?.aborted) return false;
          const text = `Tool call "${state.name}" (${state.id}) did not run: its needsApproval check threw: ${errorMessage(error)}`;
          this.refuse(state, "failed", text, error);
          continue;
        }
      }
      if (needed) {
        pending ??= [];
        pending.push(
          Object.freeze({
            id: state.id,
            name: state.name,
            kind: state.kind,
            input: state.rawInput,
          }),
        );
      }
    }
    if (pending !== undefined) this.pendingApprovals = pending;
    return true;
  }

  /** A call's context, from `createContext` or the default. */
  private contextFor(
    state: CallState,
    definition: AnyToolDefinition,
    signal: AbortSignal,
  ): ToolContext {
    return this.options.createContext
      ? this.options.createContext(
          { id: state.id, name: state.name, input: state.input, kind: state.kind },
          definition,
          signal,
        )
      : { signal, toolUseId: state.id, toolName: state.name };
  }

  /** Asks `beforeCall` about one call; `false` when the signal aborted while it was pending. */
  private async askBeforeCall(
    beforeCall: BeforeToolCall,
    state: CallState,
    definition: AnyToolDefinition,
  ): Promise<boolean> {
    let answer: unknown;
    // The hook sees a frozen copy: changing it in place (now or later) cannot reach the
    // handler, which gets the validated input or the hook's validated { input } (H2). When a
    // schema transform made the validated input uncopyable, the hook sees a copy of the
    // model's raw input instead.
    const copy = frozenCopy(state.input) ?? frozenCopy(state.rawInput);
    if (copy === undefined) {
      const text = `Tool call "${state.name}" (${state.id}) did not run: its input cannot be copied for the beforeToolCall hook (it holds functions or other values structuredClone refuses).`;
      this.refuse(state, "denied", text, new ToolCallHookError(state.id, text));
      return true;
    }
    try {
      answer = await raceAbort(
        beforeCall(
          Object.freeze({ id: state.id, name: state.name, input: copy.value, kind: state.kind }),
          { signal: this.handlerSignal() },
        ),
        this.signal,
      );
    } catch (error) {
      if (this.signal?.aborted) return false;
      const text = `Tool call "${state.name}" (${state.id}) did not run: the beforeToolCall hook failed: ${errorMessage(error)}`;
      this.refuse(state, "denied", text, new ToolCallHookError(state.id, text, { cause: error }));
      return true;
    }
    if (answer === undefined) return true;
    if (answer !== null && typeof answer === "object") {
      if ("deny" in answer && typeof answer.deny === "string") {
        const text =
          answer.deny !== ""
            ? answer.deny
            : `Tool call "${state.name}" (${state.id}) was denied by the beforeToolCall hook.`;
        this.refuse(state, "denied", text, new LatticeError("tool_call_denied", text));
        return true;
      }
      if ("input" in answer && !("deny" in answer)) {
        // Validate a copy: the hook may keep the object it returned and change it later (H2).
        const replacement = plainCopy(answer.input);
        if (replacement === undefined) {
          const text = `Tool call "${state.name}" (${state.id}) did not run: the beforeToolCall hook returned an input that cannot be copied (it holds functions or other values structuredClone refuses). Return plain JSON data as { input }.`;
          this.refuse(state, "denied", text, new ToolCallHookError(state.id, text));
          return true;
        }
        const parsed = await parseToolInput(definition, replacement.value);
        if (parsed.success) {
          state.input = parsed.input;
        } else {
          state.input = answer.input;
          this.refuse(state, "invalid_input", parsed.error.message, parsed.error);
        }
        return true;
      }
    }
    const text = `Tool call "${state.name}" (${state.id}) did not run: the beforeToolCall hook returned ${describeValue(answer)}; it must return undefined, { deny: string } or { input }.`;
    this.refuse(state, "denied", text, new ToolCallHookError(state.id, text));
    return true;
  }

  /** Marks a call as one that will not run; its result is given when its turn comes. */
  private refuse(state: CallState, status: ToolCallStatus, text: string, error: unknown): void {
    state.error = error;
    state.prepared = errorToolResult(text, error);
    state.preparedStatus = status;
  }

  /** Runs one run of the plan: a pool of at most `maxConcurrency` (or 1) handlers. */
  private async executeRun(run: ToolBatchRun, runIndex: number): Promise<void> {
    const indices = run.indices;
    const length = indices.length;
    const states = this.states;
    const limit = run.concurrent ? Math.min(this.concurrency.maxConcurrency, length) : 1;
    if (limit <= 1) {
      for (let position = 0; position < length; position++) {
        if (this.signal?.aborted || this.stopsStarting()) return;
        const pending = this.start(states[indices[position]!]!, runIndex);
        if (pending !== undefined) await pending;
      }
      return;
    }
    let cursor = 0;
    const worker = async (): Promise<void> => {
      while (cursor < length) {
        if (this.signal?.aborted || this.stopsStarting()) return;
        const pending = this.start(states[indices[cursor++]!]!, runIndex);
        if (pending !== undefined) await pending;
      }
    };
    const workers = new Array<Promise<void>>(limit);
    for (let slot = 0; slot < limit; slot++) workers[slot] = worker();
    await Promise.all(workers);
  }

  /** Whether no further call may start: `mayStartCall` answered `false`, now or before (H28). */
  private stopsStarting(): boolean {
    if (this.startsStopped) return true;
    if (this.mayStartCall === undefined) return false;
    let may: boolean;
    try {
      may = this.mayStartCall();
    } catch {
      // The batch never rejects because of a caller's function: a throw counts as a no.
      may = false;
    }
    if (may) return false;
    this.startsStopped = true;
    return true;
  }

  /**
   * Starts a call's handler, in the same synchronous step as the abort check before it.
   * Returns `undefined` when the call needed no handler (it was answered at once).
   */
  private start(state: CallState, runIndex: number): Promise<void> | undefined {
    if (state.prepared !== undefined) {
      this.complete(state, state.preparedStatus, state.prepared);
      return undefined;
    }
    const definition = state.definition!;
    state.startedAt = this.now();
    this.inFlight++;
    if (this.onEvent !== undefined) {
      this.emit({
        type: "tool_call_started",
        time: state.startedAt,
        index: state.index,
        id: state.id,
        name: state.name,
        kind: state.kind,
        runIndex,
        inFlight: this.inFlight,
      });
    }
    const limit = definition.timeoutMs ?? this.options.toolTimeoutMs;
    if (limit !== undefined) return this.startWithDeadline(state, definition, limit);
    let pending: Promise<ToolResult>;
    try {
      pending = executeTool(
        definition,
        state.input,
        this.contextFor(state, definition, this.handlerSignal()),
      );
    } catch (error) {
      pending = Promise.resolve(contextFailure(state.name, error));
    }
    return pending.then(
      (result) => this.handlerSettled(state, result),
      (error: unknown) =>
        this.handlerSettled(
          state,
          errorToolResult(`Tool "${state.name}" failed: ${errorMessage(error)}`, error),
        ),
    );
  }

  /**
   * Starts a handler with a time limit (R20): at the deadline its signal aborts with a
   * `TimeoutError`, the call is answered "timed out" and its slot is released, whether or not
   * the handler stops; a late outcome is discarded and reported.
   */
  private startWithDeadline(
    state: CallState,
    definition: AnyToolDefinition,
    limit: number,
  ): Promise<void> {
    const deadline = new AbortController();
    const signal = AbortSignal.any([this.handlerSignal(), deadline.signal]);
    let pending: Promise<ToolResult>;
    try {
      pending = executeTool(definition, state.input, this.contextFor(state, definition, signal));
    } catch (error) {
      pending = Promise.resolve(contextFailure(state.name, error));
    }
    return new Promise<void>((release) => {
      const timer = setTimeout(
        () => {
          if (state.outcome !== undefined) return;
          const text = `Tool "${state.name}" timed out after ${limit} ms.`;
          const reason = new DOMException(text, "TimeoutError");
          deadline.abort(reason);
          this.inFlight--;
          this.complete(state, "timed_out", errorToolResult(text, reason));
          release();
        },
        Math.min(limit, MAX_TIMER_MS),
      );
      const settled = (result: ToolResult): void => {
        clearTimeout(timer);
        this.handlerSettled(state, result);
        release();
      };
      pending.then(settled, (error: unknown) =>
        settled(errorToolResult(`Tool "${state.name}" failed: ${errorMessage(error)}`, error)),
      );
    });
  }

  private handlerSettled(state: CallState, result: ToolResult): void {
    // Timed out (R20) or abandoned after the abort grace (H5): its late result is dropped.
    if (state.outcome !== undefined) {
      if (this.onEvent !== undefined) {
        const time = this.now();
        this.emit({
          type: "tool_call_settled_late",
          time,
          index: state.index,
          id: state.id,
          name: state.name,
          kind: state.kind,
          givenStatus: state.outcome.status,
          lateIsError: result.isError,
          durationMs: time - (state.startedAt ?? time),
        });
      }
      return;
    }
    this.inFlight--;
    this.complete(state, result.isError ? "failed" : "completed", result);
  }

  private handlerSignal(): AbortSignal {
    if (this.signal !== undefined) return this.signal;
    if (this.contextSignal === undefined) this.contextSignal = new AbortController().signal;
    return this.contextSignal;
  }

  /** Records a call's outcome and reports it. */
  private complete(state: CallState, status: ToolCallStatus, result: ToolResult): void {
    const finishedAt = this.now();
    const startedAt = state.startedAt;
    state.outcome =
      startedAt === undefined
        ? {
            id: state.id,
            name: state.name,
            kind: state.kind,
            input: state.input,
            result,
            status,
            queuedAt: this.queuedAt,
            finishedAt,
          }
        : {
            id: state.id,
            name: state.name,
            kind: state.kind,
            input: state.input,
            result,
            status,
            queuedAt: this.queuedAt,
            startedAt,
            finishedAt,
          };
    const onCallSettled = this.options.onCallSettled;
    if (onCallSettled !== undefined) {
      try {
        const returned: unknown = onCallSettled(state.outcome);
        if (isThenable(returned)) Promise.resolve(returned).then(undefined, ignoreFailure);
      } catch {
        // A listener's fault must never break a batch.
      }
    }
    if (this.onEvent !== undefined) {
      this.emit({
        type: "tool_call_finished",
        time: finishedAt,
        index: state.index,
        id: state.id,
        name: state.name,
        kind: state.kind,
        status,
        isError: result.isError,
        durationMs: startedAt === undefined ? 0 : finishedAt - startedAt,
      });
    }
  }

  /** Answers every call still without a result, then assembles the batch's result. */
  private settle(plan: ToolBatchPlan | undefined): ToolBatchResult {
    let cancelled: ToolResult | undefined;
    const states = this.states;
    const results = new Array<ToolCallOutcome>(states.length);
    for (let index = 0; index < states.length; index++) {
      const state = states[index]!;
      if (state.outcome === undefined) {
        if (state.prepared !== undefined) {
          this.complete(state, state.preparedStatus, state.prepared);
        } else {
          cancelled ??=
            this.startsStopped && this.signal?.aborted !== true
              ? errorToolResult(
                  "This tool call was cancelled before it started: the batch's caller may no longer start calls.",
                  createAbortError("mayStartCall answered false"),
                )
              : errorToolResult(
                  "This tool call was cancelled before it started: the query was aborted.",
                  createAbortError(this.signal?.reason),
                );
          this.complete(state, "cancelled", cancelled);
        }
      }
      results[index] = state.outcome!;
    }
    const endTurn = findEndTurn(results);
    return {
      results,
      aborted: this.signal?.aborted === true,
      decision: this.decision,
      ...(this.policyError !== undefined ? { policyError: this.policyError } : {}),
      plan: plan ?? {
        mode: this.concurrency.mode,
        maxConcurrency: this.concurrency.maxConcurrency,
        runs: [],
      },
      ...(endTurn !== undefined ? { endTurn } : {}),
    };
  }

  private emit(event: ToolBatchEvent): void {
    try {
      const returned: unknown = this.onEvent!(event);
      // An async listener that rejects must not become an unhandled rejection (H1).
      if (isThenable(returned)) Promise.resolve(returned).then(undefined, ignoreFailure);
    } catch {
      // A listener's fault must never break a batch.
    }
  }
}

/** The result of a call whose context could not be made. */
function contextFailure(name: string, error: unknown): ToolResult {
  return errorToolResult(
    `Tool "${name}" could not start: creating its context failed: ${errorMessage(error)}`,
    error,
  );
}

/** The longest delay setTimeout honours (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** A structured clone of `value`, or `undefined` when it cannot be cloned. */
function plainCopy(value: unknown): { readonly value: unknown } | undefined {
  if (value === null || typeof value !== "object") return { value };
  try {
    return { value: structuredClone(value) };
  } catch {
    return undefined;
  }
}

function ignoreFailure(): void {
  // A listener's failure is ignored, like a synchronous throw.
}

function unknownToolText(name: string, tools: ReadonlyMap<string, AnyToolDefinition>): string {
  const names = [...tools.keys()];
  return names.length === 0
    ? `Unknown tool "${name}". No tools are available.`
    : `Unknown tool "${name}". Available tools: ${names.join(", ")}.`;
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message === "" ? error.name : error.message;
  return typeof error === "string" ? error : describeValue(error);
}
