import { type AgentStepResult, type SessionStore, stepMessages } from "@lattice/core";
import { type RunRecords, runHasEnded } from "./run-records.js";
import type { StreamRecord } from "./step-job.js";

/** A step whose messages are to be published, once its outcome is stored. Internal. */
export interface StoredStep {
  readonly runId: string;
  readonly sessionId: string;
  /** What `agent.step()` returned. */
  readonly outcome: AgentStepResult;
  /** The step it took; `undefined` when it took none (the run had ended, or the job was stale). */
  readonly taken: number | undefined;
  /** The messages the step gave as it went, besides the run's first (published at once). */
  readonly live: readonly StreamRecord[];
}

/**
 * The commands that publish a step's messages on its run's stream (D3). Steps a worker stored
 * but died before publishing (the job was taken again and found the log past its step) are
 * published from the log first (`stepMessages` of core), so `events()` misses no step; a
 * result already published is not again. Internal.
 *
 * @throws what `store.load` throws, when there is a gap to fill.
 */
export async function publishStepCommands(
  records: RunRecords,
  store: SessionStore,
  step: StoredStep,
): Promise<string[][]> {
  const { runId, sessionId, outcome, taken } = step;
  const { published, state } = await records.published(runId);
  const through =
    outcome.status === "continue"
      ? outcome.step
      : outcome.status === "stale"
        ? outcome.nextStep - 1
        : outcome.result.subtype === "interrupted"
          ? (taken ?? 0) - 1
          : (taken ?? 2 * outcome.result.numTurns - 1);
  const gapEnd = taken !== undefined ? taken - 1 : through;
  const streamed: StreamRecord[] = [];
  if (gapEnd > published) {
    const { entries } = await store.load(sessionId);
    for (let number = published + 1; number <= gapEnd; number++) {
      for (const message of stepMessages(entries, { sessionId, runId, step: number })) {
        streamed.push({ kind: "message", message });
      }
    }
  }
  for (const record of step.live) {
    // A result given again for a run whose result was published (a job taken twice).
    const isResult = record.kind === "message" && record.message.type === "result";
    if (isResult && taken === undefined && runHasEnded(state)) continue;
    streamed.push(record);
  }
  const commands = records.xadds(runId, streamed);
  if (through > published) commands.push(records.publishedCommand(runId, through));
  return commands;
}
