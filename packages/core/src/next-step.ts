import type { ToolResultBlock, ToolUseBlock } from "@lattice/providers";
import { type ToolResult, toolResultText } from "@lattice/tools";
import type { LoggedRun } from "./logged-run.js";
import { duplicateToolUseId, textOf } from "./reply-content.js";
import type { LoggedDecision } from "./run-log-entry.js";
import type { SDKResultSubtype } from "./sdk-message.js";
import type { TrippedGuardrail } from "./steering-options.js";

/** What the loop does next, derived from the log alone (R2). */
export type RunStep =
  | { readonly type: "model" }
  | {
      readonly type: "batch";
      /** The calls still without a logged result, in tool_use order. */
      readonly calls: readonly ToolUseBlock[];
      /** `true` when no result of the batch is logged yet (the batch policy sees it whole). */
      readonly whole: boolean;
      /** Decisions on calls that needed approval, by tool_use id, after an interrupt (R15). */
      readonly decisions: ReadonlyMap<string, LoggedDecision> | undefined;
    }
  | {
      readonly type: "finish";
      readonly subtype: SDKResultSubtype;
      readonly result: string;
      readonly errors: readonly string[];
      readonly structuredResult?: unknown;
      /** The tool whose `endTurn` result ended the run, when one did. */
      readonly endedBy?: string;
      /** The typed answer, validated (L1). */
      readonly output?: unknown;
      /** The guardrail that ended the run (L7). */
      readonly guardrail?: TrippedGuardrail;
    };

/**
 * The next step of an unfinished run, from the log: run the latest reply's calls that have no
 * result yet, finish when the model or a tool ended the run, else call the model (or stop at
 * `maxTurns`).
 */
export function nextStep(run: LoggedRun, maxTurns: number): RunStep {
  const tripped = run.tripped;
  if (tripped !== undefined) {
    const guardrail = {
      name: tripped.name,
      kind: tripped.kind,
      ...(tripped.reason !== undefined ? { reason: tripped.reason } : {}),
      ...(tripped.info !== undefined ? { info: tripped.info } : {}),
    };
    return {
      type: "finish",
      subtype: "guardrail_tripped",
      result: "",
      errors: [
        `The ${tripped.kind} guardrail "${tripped.name}" tripped${tripped.reason !== undefined ? `: ${tripped.reason}` : "."}`,
      ],
      guardrail,
    };
  }
  const batch = run.batch;
  const reply = run.lastReply;
  if (batch !== undefined) {
    if (!batch.complete) {
      const duplicate = duplicateToolUseId(batch.toolUses);
      if (duplicate !== undefined) {
        // The API would reject the results of such a reply; nothing may run first (H13).
        return finish("error_during_execution", [
          `The model's reply used the tool_use id "${duplicate}" for more than one tool call, so none of its ${batch.toolUses.length} calls ran: their results could not be told apart. This is a fault of the model or the server; retry the query.`,
        ]);
      }
      const calls =
        batch.results.size === 0
          ? batch.toolUses
          : batch.toolUses.filter((call) => !batch.results.has(call.id));
      return {
        type: "batch",
        calls,
        // After decisions, the policy had accepted the batch before its interrupt.
        whole: calls.length === batch.toolUses.length && run.decisions === undefined,
        decisions: run.decisions,
      };
    }
    // The first call in tool_use order that asked to end the run (T8, T10, T11), unless an
    // output guardrail sent feedback on that answer: then the model answers again (L8).
    if (run.feedback === undefined)
      for (const call of batch.toolUses) {
        const result = batch.results.get(call.id);
        if (result?.endTurn === true) {
          return {
            type: "finish",
            subtype: "success",
            result: blockText(result.block),
            errors: [],
            structuredResult: result.structuredResult,
            endedBy: result.toolName,
          };
        }
      }
  } else if (
    reply !== undefined &&
    reply.stopReason !== "pause_turn" &&
    run.feedback === undefined
  ) {
    return {
      type: "finish",
      subtype: "success",
      result: textOf(reply.message.content),
      errors: [],
    };
  }
  if (run.numTurns >= maxTurns) {
    return finish("error_max_turns", [
      `The run reached maxTurns (${maxTurns}) before the model gave a final answer. Raise maxTurns, or give the model a tool that ends the run (endTurn: true).`,
    ]);
  }
  return { type: "model" };
}

/**
 * The number of a run's next step when it is a model call or a batch: the model call of turn
 * `t` is step `2t - 2`, the batch of its reply step `2t - 1`. Steps are what one worker job
 * takes at a time (`agent.step()`); the number names the job.
 */
export function stepNumberOf(step: RunStep, run: LoggedRun): number {
  return step.type === "model" ? 2 * run.numTurns : 2 * run.numTurns - 1;
}

function finish(subtype: SDKResultSubtype, errors: readonly string[]): RunStep {
  return { type: "finish", subtype, result: "", errors };
}

/** The text of a tool_result block, as the scheduler reads an `endTurn` result's text. Internal. */
export function blockText(block: ToolResultBlock): string {
  const content = block.content;
  return typeof content === "string"
    ? content
    : toolResultText({ content: content as ToolResult["content"] });
}
