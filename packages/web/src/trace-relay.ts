import type { TraceEvent } from "@lattice/core";

/**
 * Routes an agent's trace events to the UI message stream of the run they belong to, so a
 * page sees batch plans, queue waits, call timings and policy refusals (the `data-lattice-*`
 * parts). Pass `onTrace` to the agent (`createAgent({ onTrace: relay.onTrace })`) and the
 * relay to {@link toUIMessageStream} (`{ trace: relay }`). One relay serves any number of
 * concurrent runs. Events of a run that no stream follows yet are kept for the stream that
 * will (the run can be ahead of the page): up to 1,000 events of each of the latest 64 such
 * runs.
 */
export interface TraceRelay {
  /** The agent's `onTrace` option: hands each event to the stream following its run. */
  readonly onTrace: (event: TraceEvent) => void;
  /**
   * Follows one run's events until the returned function is called, starting with those
   * kept since the run began. Used by the streams; a second listener for the same run
   * replaces the first.
   *
   * @param runId - The run to follow.
   * @param listener - Called synchronously with each of its events.
   * @returns Stops following.
   */
  follow(runId: string, listener: (event: TraceEvent) => void): () => void;
}

/**
 * Makes a {@link TraceRelay}.
 *
 * @example
 * ```ts
 * const relay = traceRelay();
 * const agent = createAgent({ model, tools, onTrace: relay.onTrace });
 * const stream = toUIMessageStream(agent.query(prompt, { includePartialMessages: true }), { trace: relay });
 * ```
 */
export function traceRelay(): TraceRelay {
  const listeners = new Map<string, (event: TraceEvent) => void>();
  // A stream learns its run's id from the run's first message, and the run may be ahead of
  // the stream that reads it (a resumed run starts its batch at once): events of runs no
  // stream follows yet wait here, a bounded number of them, oldest run dropped first.
  const waiting = new Map<string, TraceEvent[]>();
  return {
    onTrace(event) {
      const listener = listeners.get(event.runId);
      if (listener !== undefined) {
        listener(event);
        return;
      }
      let kept = waiting.get(event.runId);
      if (kept === undefined) {
        if (waiting.size >= MAX_WAITING_RUNS) waiting.delete(waiting.keys().next().value as string);
        kept = [];
        waiting.set(event.runId, kept);
      }
      if (kept.length < MAX_WAITING_EVENTS) kept.push(event);
    },
    follow(runId, listener) {
      listeners.set(runId, listener);
      const kept = waiting.get(runId);
      waiting.delete(runId);
      if (kept !== undefined) for (const event of kept) listener(event);
      return () => {
        if (listeners.get(runId) === listener) listeners.delete(runId);
      };
    },
  };
}

/** How many runs' events a relay keeps for streams that have not followed them yet. */
const MAX_WAITING_RUNS = 64;
/** How many events of one run it keeps meanwhile. */
const MAX_WAITING_EVENTS = 1_000;
