import type { BeforeToolCall } from "@lattice/scheduler";
import { catchRejection } from "@lattice/scheduler/internal";
import type { AgentHooks } from "./agent-hooks.js";
import { errorMessage } from "./error-message.js";
import type { TraceEvent } from "./trace-event.js";

/** The scheduler's per-call hook: the user's `beforeToolCall`, traced. Internal. */
export function tracedBeforeCall(
  hooks: AgentHooks,
  trace: ((event: TraceEvent) => void) | undefined,
  sessionId: string,
  runId: string,
): BeforeToolCall | undefined {
  const user = hooks.beforeToolCall;
  if (user === undefined) return undefined;
  // The scheduler passes the query's signal in `context` and stops waiting on abort (T22).
  return async (call, context) => {
    const started = performance.now();
    let failure: string | undefined;
    try {
      return (await user(call, { signal: context.signal })) ?? undefined;
    } catch (error) {
      failure = errorMessage(error);
      throw error;
    } finally {
      trace?.({
        type: "hook",
        time: performance.now(),
        sessionId,
        runId,
        hook: "beforeToolCall",
        toolUseId: call.id,
        durationMs: performance.now() - started,
        ...(failure !== undefined ? { error: failure } : {}),
      });
    }
  };
}

/** A run's trace sink, and how many times the run's own `onTrace` failed (H1). Internal. */
export interface RunTrace {
  /** Sends an event to the run's `onTrace` (made safe) and to its parent's sink. */
  readonly emit: ((event: TraceEvent) => void) | undefined;
  /** How many times `onTrace` threw or returned a promise that rejected, so far. */
  readonly failures: () => number;
}

/**
 * The run's trace sink: its own `onTrace` (made safe) and its parent's, or `undefined`.
 *
 * A listener that throws, or returns a promise that rejects (an `async` listener whose
 * database is down), never reaches the run or the host process: the failure is counted and
 * otherwise ignored (H1).
 */
export function combineTraces(
  onTrace: ((event: TraceEvent) => unknown) | undefined,
  parent: ((event: TraceEvent) => void) | undefined,
): RunTrace {
  let failures = 0;
  const count = (): void => {
    failures += 1;
  };
  if (onTrace === undefined) return { emit: parent, failures: () => failures };
  return {
    emit: (event) => {
      try {
        catchRejection(onTrace(event), count);
      } catch {
        count();
      }
      parent?.(event);
    },
    failures: () => failures,
  };
}
