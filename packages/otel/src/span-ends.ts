/** A span with work left for the SDK: to start, and once it finished, to end. Internal. */
export interface Ending {
  /** Starts the span if it has not started; sets what is left and ends it if it finished. */
  end(): void;
}

/** Runs `flush` once the current turn of the event loop is done. */
const later: (flush: () => void) => void =
  typeof setImmediate === "function"
    ? (flush) => setImmediate(flush)
    : (flush) => setTimeout(flush, 0);

/**
 * Starts and ends spans in groups: a model or tool call's span is started, with its own start
 * time, once the event loop's current turn is done, and ended (its own end time) once the turn
 * in which it finished is done, together with every other call of that turn (a turn's model
 * call and its batch of tool calls, typically). `flush()` does it at once: a run's end does,
 * so that every span of a run has ended when `run()` returns. Internal.
 *
 * The SDK's work on spans then runs in one tight loop, not a little of it at every trace event
 * between the agent's own work, where it is paid for cold each time; and a
 * `SimpleSpanProcessor`, which exports each span on its own (a promise, a context and, with
 * the in-memory exporter, a timer per span), exports the turn's spans in one pass, their
 * timers firing together. The spans are the same: their times are the events'.
 */
export class SpanEnds {
  private waiting: Ending[] = [];
  private scheduled = false;
  private readonly scheduledFlush = (): void => {
    this.scheduled = false;
    this.flush();
  };

  /** Starts, or ends, `ending` by the end of the event loop's current turn. */
  add(ending: Ending): void {
    this.waiting.push(ending);
    if (!this.scheduled) {
      this.scheduled = true;
      later(this.scheduledFlush);
    }
  }

  /**
   * Does the work waiting, now, in the order it came. A span processor or exporter that
   * throws costs its own span only (a scheduled flush has no caller to hand the error to).
   */
  flush(): void {
    const waiting = this.waiting;
    if (waiting.length === 0) return;
    this.waiting = [];
    for (let index = 0; index < waiting.length; index++) {
      try {
        waiting[index]!.end();
      } catch {
        // The span processor's or exporter's fault; the other spans still end.
      }
    }
  }
}
