import { catchRejection, createAbortError } from "@lattice/scheduler/internal";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions } from "@lattice/tools/internal";
import type { AgentStepResult, StepOptions } from "./agent.js";
import { checkApprovalDecisions } from "./check-approval-decisions.js";
import type { PreparedAgent } from "./prepare-agent.js";
import {
  checkSignal,
  checkStepFields,
  STEP_OPTION_KEYS,
  validatePrompt,
} from "./query-arguments.js";
import { driveRun } from "./run-agent.js";
import type { RunPlacement } from "./run-placement.js";
import type { SessionStore } from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";
import { queryOutput } from "./start-query.js";

/**
 * `agent.step(sessionId, options)`: checks the arguments (strictly), then takes one step of the
 * session's run under the caller's signal (and lease, H28), and says how the run stands after
 * it. Internal.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError` for a bad argument; what the step
 *   throws (an `AbortError`, `SessionFencedError`, `SessionConflictError`, `SessionError`).
 */
export async function takeAgentStep(
  prepared: PreparedAgent,
  store: SessionStore,
  sessionId: string,
  stepOptions: StepOptions<unknown> | undefined,
): Promise<AgentStepResult> {
  const agentName = prepared.name;
  assertKnownOptions(stepOptions, STEP_OPTION_KEYS, "StepOptions:");
  checkSessionId("step():", sessionId);
  const options = stepOptions ?? {};
  checkSignal("StepOptions:", options.signal);
  if (options.prompt !== undefined) validatePrompt(options.prompt, "step():");
  if (options.prompt !== undefined && options.decisions !== undefined) {
    throw new InvalidOptionError(
      "StepOptions:",
      "decisions",
      "cannot be combined with prompt: decisions answer the pending approvals of the session's unfinished run, and a prompt starts a new run. Take the step with decisions first.",
    );
  }
  checkStepFields(options);
  const decisions = checkApprovalDecisions("StepOptions:", options.decisions);
  const given = options.signal ?? new AbortController().signal;
  if (given.aborted) throw createAbortError(given.reason);
  // A step under a lease also stops once the lease no longer holds (H28).
  const lease = options.lease;
  const stop = lease === undefined ? undefined : new AbortController();
  const signal = stop === undefined ? given : AbortSignal.any([given, stop.signal]);
  const onMessage = options.onMessage;
  const placement: RunPlacement = {
    parentToolUseId: null,
    emit:
      onMessage === undefined
        ? ignoreMessage
        : (message) => {
            try {
              catchRejection(onMessage(message), ignoreMessage);
            } catch {
              // A failing listener never reaches the run (H1).
            }
          },
    depth: options.chain === undefined ? 0 : options.chain.length - 1,
    agentName,
    store,
    ...(options.context !== undefined ? { context: options.context } : {}),
    ...(options.mailbox !== undefined ? { mailbox: options.mailbox } : {}),
    ...(options.takeMail !== undefined ? { beforeModelCall: options.takeMail } : {}),
    ...(options.chain !== undefined ? { chain: options.chain } : {}),
  };
  const outcome = await driveRun(
    await prepared.getRuntime(),
    {
      kind: "step",
      store,
      sessionId,
      prompt: options.prompt,
      runId: options.runId,
      expectedStep: options.expectedStep,
      decisions,
      onStepStart:
        options.onStepStart === undefined
          ? undefined
          : (step) => {
              try {
                catchRejection(options.onStepStart!(step), ignoreMessage);
              } catch {
                // A failing listener never reaches the run (H1).
              }
            },
      fencing: lease === undefined ? undefined : { lease, stop: stop! },
      output: queryOutput(prepared, options.outputSchema, "StepOptions:"),
    },
    signal,
    placement,
  );
  if (outcome.type === "result") {
    return { status: "ended", sessionId, runId: outcome.runId, result: outcome };
  }
  return outcome.stale
    ? { status: "stale", sessionId, runId: outcome.runId, nextStep: outcome.nextStep }
    : {
        status: "continue",
        sessionId,
        runId: outcome.runId,
        step: outcome.step!,
        nextStep: outcome.nextStep,
      };
}

function ignoreMessage(): void {}
