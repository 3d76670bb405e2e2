import { errorMessage, toJson } from "./error-message.js";
import { abortedError } from "./finish-run.js";
import { appendGuardrail } from "./input-guardrails.js";
import { invalidOutput } from "./plan-call.js";
import { textOf } from "./reply-content.js";
import type { RunEnv, StepOutcome } from "./run-env.js";
import { runGuardrail } from "./run-guardrails.js";
import { ENTRY_V2, type OutputFeedbackEntry } from "./run-log-entry.js";
import { appendEntry, settleStep } from "./run-log-sink.js";
import { checkAnswerText, checkAnswerValue, OUTPUT_TOOL_NAME } from "./run-output.js";
import type { RunSteering } from "./run-steering.js";

type Finish = Exclude<StepOutcome, undefined | { type: "interrupt" }>;

/**
 * The stage of a steered run's successful finish (L3, L8): the typed answer is taken and
 * validated — from the `final_answer` call, or the final text of a native call — and the
 * output guardrails check the answer. An answer that fails, or a guardrail's `retry`, is sent
 * back to the model as an `output_feedback` entry while retries remain (`undefined`: the run
 * goes on with a model call); then the run ends `error_output_invalid`. A tripwire ends it
 * `guardrail_tripped`. Internal.
 *
 * @param retry - Whether the answer may be sent back (not when a stop condition ended the run).
 * @returns The finish, with the answer; or `undefined` when feedback was appended.
 */
export async function finishStage(
  env: RunEnv,
  steer: RunSteering,
  step: Finish,
  retry: boolean,
): Promise<Finish | undefined> {
  const output = steer.output;
  const run = env.run;
  let finish: Finish = step;
  const retriesLeft = (): boolean =>
    retry && run.outputFailures < (output?.retries ?? env.runtime.outputSettings.retries);
  if (output !== undefined) {
    let checked: Awaited<ReturnType<typeof checkAnswerValue>>;
    let feedbackReason: OutputFeedbackEntry["reason"] = "invalid";
    if (step.endedBy === OUTPUT_TOOL_NAME) {
      // The final_answer handler ran on an input the scheduler had validated.
      checked = { ok: true, value: step.structuredResult };
      finish = { ...step, structuredResult: undefined };
    } else if (step.endedBy !== undefined) {
      // A tool of the agent's ended the run: its structuredResult is the answer.
      checked = await checkAnswerValue(output, step.structuredResult);
    } else if (run.lastReply?.outputMode === "forced_tool") {
      feedbackReason = "use_tool";
      checked = {
        ok: false,
        error: `Give your final answer by calling the ${OUTPUT_TOOL_NAME} tool with it as the input, not as text.`,
      };
    } else {
      checked = await checkAnswerText(output, step.result);
    }
    if (!checked.ok) {
      if (step.endedBy === undefined && retriesLeft()) {
        return feedback(env, feedbackReason, checked.error);
      }
      return invalidOutput(output, checked.error);
    }
    finish = { ...finish, output: checked.value };
    if (step.endedBy === OUTPUT_TOOL_NAME) {
      finish = { ...finish, result: JSON.stringify(toJson(checked.value)) };
    }
  }
  const guardrails = steer.guardrails?.output ?? [];
  if (guardrails.length === 0) return finish;
  const turn = run.numTurns;
  const logged = new Set(
    (run.guardrails ?? [])
      .filter((entry) => entry.kind === "output" && entry.turn === turn)
      .map((entry) => entry.name),
  );
  const pending = guardrails.filter((guardrail) => !logged.has(guardrail.name));
  if (env.mayStart !== undefined && !env.mayStart()) throw abortedError(env);
  const messages = env.state.messages;
  const outcomes = await Promise.all(
    pending.map((guardrail) =>
      runGuardrail(
        guardrail,
        {
          text: finish.result,
          output: finish.output,
          messages,
          context: env.placement.context,
          signal: env.signal,
        },
        true,
      ),
    ),
  );
  if (env.signal.aborted) throw abortedError(env);
  for (const outcome of outcomes) appendGuardrail(env, "output", turn, outcome);
  const tripped = outcomes.find((outcome) => outcome.tripwire);
  if (tripped !== undefined) {
    return (await settleStep(env)) as Finish | undefined;
  }
  const retried = outcomes.find((outcome) => outcome.retry !== undefined);
  if (retried !== undefined) {
    if (retriesLeft()) return feedback(env, "guardrail", retried.retry!);
    return {
      type: "finish",
      subtype: "guardrail_tripped",
      result: "",
      errors: [
        retry
          ? `The output guardrail "${retried.name}" still asked for another answer after the retries (outputRetries): ${retried.retry}`
          : `The output guardrail "${retried.name}" asked for another answer, but stopWhen had ended the run, so none was asked for: ${retried.retry}`,
      ],
      guardrail: { name: retried.name, kind: "output", reason: retried.retry! },
    };
  }
  return finish;
}

/** Appends feedback on the latest answer; the run goes on with a model call. */
async function feedback(
  env: RunEnv,
  reason: OutputFeedbackEntry["reason"],
  text: string,
): Promise<Finish | undefined> {
  appendEntry(env, { v: ENTRY_V2, type: "output_feedback", runId: env.runId, reason, text });
  return settleStep(env) as Promise<Finish | undefined>;
}

/**
 * The stage after a step whose tool calls settled (L6): when a stop condition holds, the run
 * finishes `success` with the latest reply's text. Internal.
 *
 * @returns The finish, or `undefined` to go on.
 */
export async function stopStage(env: RunEnv, steer: RunSteering): Promise<Finish | undefined> {
  const conditions = steer.stopWhen;
  const reply = env.run.lastReply;
  if (conditions === undefined || reply === undefined || env.run.feedback !== undefined) {
    return undefined;
  }
  const content = reply.message.content;
  const state = {
    numTurns: env.run.numTurns,
    toolCalls: content.flatMap((block) => (block.type === "tool_use" ? [block.name] : [])),
    text: textOf(content),
    usage: { ...env.run.usage },
    messages: env.state.messages,
  };
  for (const condition of conditions) {
    let holds: boolean;
    try {
      holds = (await condition(state)) === true;
    } catch (error) {
      return {
        type: "finish",
        subtype: "error_during_execution",
        result: "",
        errors: [
          `A stopWhen condition failed after turn ${state.numTurns}: ${errorMessage(error)}`,
        ],
      };
    }
    if (holds) return { type: "finish", subtype: "success", result: state.text, errors: [] };
  }
  return undefined;
}
