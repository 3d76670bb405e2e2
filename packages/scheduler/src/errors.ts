import { LatticeError } from "@lattice/tools";
import type { ToolBatchRefusal } from "./tool-batch-policy.js";

/**
 * The batch policy's `validate` threw, rejected, or returned something that is not a decision
 * (T26). No call of the batch ran; each got an `is_error` result with this code. It is never
 * thrown at users: it is kept on those results (`result.error`) and on the `batch_policy`
 * event for traces. Code: `"tool_batch_policy_error"`.
 */
export class ToolBatchPolicyError extends LatticeError {
  /**
   * @param message - What the policy did wrong and how to fix it.
   * @param options - Standard `ErrorOptions`; `cause` holds what `validate` threw.
   */
  constructor(message: string, options?: ErrorOptions) {
    super("tool_batch_policy_error", message, options);
    this.name = "ToolBatchPolicyError";
  }
}

/**
 * The batch policy refused a batch (T25). No call of the batch ran; each got an `is_error`
 * result carrying the policy's code, message and suggested next step. Kept on those results
 * (`result.error`) for traces, never thrown. Code: `"tool_batch_refused"`.
 */
export class ToolBatchRefusedError extends LatticeError {
  /** The policy's decision, as validated. */
  readonly decision: ToolBatchRefusal;

  /**
   * @param decision - The refusal the policy returned.
   */
  constructor(decision: ToolBatchRefusal) {
    super(
      "tool_batch_refused",
      `The tool batch policy refused the batch with code "${decision.code}": ${decision.message}`,
    );
    this.decision = decision;
    this.name = "ToolBatchRefusedError";
  }
}

/**
 * The `beforeCall` hook threw, rejected, or returned a value it may not return, so its call
 * did not run. Kept on that call's `is_error` result (`result.error`), never thrown.
 * Code: `"tool_call_hook_error"`.
 */
export class ToolCallHookError extends LatticeError {
  /** The id of the tool_use block whose hook failed. */
  readonly toolUseId: string;

  /**
   * @param toolUseId - The call whose hook failed.
   * @param message - What the hook did wrong.
   * @param options - Standard `ErrorOptions`; `cause` holds what the hook threw.
   */
  constructor(toolUseId: string, message: string, options?: ErrorOptions) {
    super("tool_call_hook_error", message, options);
    this.toolUseId = toolUseId;
    this.name = "ToolCallHookError";
  }
}
