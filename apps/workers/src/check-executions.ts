import type { CallTracker } from "./call-tracker.js";

/** A worker that died while the runs went on, and what the run logs held then. */
export interface Death {
  readonly worker: string;
  /** The calls whose result was logged when it died (`runId/toolUseId`). */
  readonly logged: Set<string>;
}

/**
 * Checks the tool calls' executions against the guarantees: a call whose result was logged
 * when a worker died never ran again; a call that ran more than once was cut by a dying worker
 * each time but the last. Each execution that was not the last says why it did not count:
 * `(cut)` when its handler never ended, `(ended, result not logged before it died)` when it
 * ended but its worker died before the result reached the run log.
 */
export function checkExecutions(
  tracker: CallTracker,
  deaths: readonly Death[],
  sessions: ReadonlySet<string>,
): { readonly ok: boolean; readonly lines: string[] } {
  const lines: string[] = [];
  let ok = true;
  const deathOf = new Map(deaths.map((death) => [death.worker, death]));
  // Calls of these runs only (the workers may have finished older runs left in the queue).
  const calls = [...tracker.executions].filter(([, runs]) => sessions.has(runs[0]!.sessionId));
  const again = calls.filter(([, runs]) => runs.length > 1);
  const once = calls.length - again.length;
  lines.push(
    `Tool calls: ${calls.length} in all; ${once} ran once${again.length === 0 ? "." : `, ${again.length} ran again because the worker running them died before their result was logged (at-least-once):`}`,
  );
  for (const [key, runs] of again) {
    const first = runs[0]!;
    const cut = runs.slice(0, -1).every((run) => deathOf.has(run.worker));
    if (!cut) ok = false;
    const why = (run: (typeof runs)[number], index: number): string => {
      if (!run.ended) return " (cut)";
      const death = deathOf.get(run.worker);
      return index < runs.length - 1 && death !== undefined && !death.logged.has(key)
        ? " (ended, result not logged before it died)"
        : "";
    };
    lines.push(
      `  ${first.toolName} of ${first.sessionId}: on ${runs.map((run, index) => `${run.worker}${why(run, index)}`).join(", then ")}${cut ? "" : "  ← NOT after a worker died"}`,
    );
  }
  for (const death of deaths) {
    // A call cut by the dying worker may have been taken over, run and logged before the
    // logs were read: only its other executions count.
    const repeated = [...death.logged].filter((key) => {
      const runs = tracker.executions.get(key) ?? [];
      return runs.filter((run) => run.ended || run.worker !== death.worker).length > 1;
    });
    if (repeated.length > 0) ok = false;
    lines.push(
      repeated.length === 0
        ? `When ${death.worker} died, ${death.logged.size} calls had their result in the run log: none of them ran again.`
        : `When ${death.worker} died, ${death.logged.size} calls had their result in the run log, and ${repeated.length} of them ran again: ${repeated.join(", ")}.`,
    );
  }
  return { ok, lines };
}
