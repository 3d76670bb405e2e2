import type { WorkerReport } from "./worker.js";

/** One execution of a tool call's handler. */
export interface Execution {
  readonly worker: string;
  readonly toolName: string;
  readonly sessionId: string;
  /** Whether the handler reached its end (a killed worker's call never does). */
  ended: boolean;
}

/**
 * What the workers started by `start` report: every execution of every tool call (by
 * `runId/toolUseId`), and which worker started each step of each run. Pure bookkeeping, fed
 * from the workers' IPC messages.
 */
export class CallTracker {
  /** Executions of each call, in order, by `runId/toolUseId`. */
  readonly executions = new Map<string, Execution[]>();
  /** The workers that started each step of each session, by session, then step. */
  readonly steps = new Map<string, string[][]>();
  /** Calls that reached their end. */
  ended = 0;

  /** Takes a worker's report in. */
  record(report: WorkerReport): void {
    if (report.kind === "step") {
      const steps = this.steps.get(report.sessionId) ?? [];
      this.steps.set(report.sessionId, steps);
      steps[report.step] = [...(steps[report.step] ?? []), report.worker];
      return;
    }
    if (report.kind !== "call") return;
    const key = callKey(report.runId, report.toolUseId);
    const runs = this.executions.get(key) ?? [];
    this.executions.set(key, runs);
    if (report.phase === "start") {
      runs.push({
        worker: report.worker,
        toolName: report.toolName,
        sessionId: report.sessionId,
        ended: false,
      });
      return;
    }
    for (let index = runs.length - 1; index >= 0; index--) {
      const execution = runs[index]!;
      if (execution.worker === report.worker && !execution.ended) {
        execution.ended = true;
        break;
      }
    }
    this.ended++;
  }

  /** The calls a worker has started and not ended. */
  inFlight(worker: string): { readonly key: string; readonly execution: Execution }[] {
    const found = [];
    for (const [key, runs] of this.executions) {
      for (const execution of runs) {
        if (execution.worker === worker && !execution.ended) found.push({ key, execution });
      }
    }
    return found;
  }

  /** The sessions seen so far. */
  sessions(): string[] {
    return [...this.steps.keys()];
  }
}

/** The key of a tool call: its run and its tool_use id. */
export function callKey(runId: string, toolUseId: string): string {
  return `${runId}/${toolUseId}`;
}
