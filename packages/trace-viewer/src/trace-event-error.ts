import { LatticeError } from "@lattice/tools";

/**
 * Thrown by {@link buildTimeline} and {@link renderTimeline} for an event they cannot draw: not
 * an object, a `time` that is not finite or is beyond ±1e15 ms, or a field of the wrong type or
 * missing (an unknown `status`, a `turn` that is not an integer, no `usage`, `plan` or
 * `approvals`, ...). Events given as a list have no line number: the error names the event's
 * position in the list. Code: `"trace_event_invalid"`.
 */
export class TraceEventError extends LatticeError {
  /** The 0-based position of the event among the events given. */
  readonly index: number;
  /** The path of the wrong field, for example `turn` or `plan.runs[0].indices[1]`; `""` when the value is not an event. */
  readonly field: string;

  /**
   * @param index - The event's 0-based position.
   * @param field - The path of the wrong field.
   * @param message - What is wrong, with what, and what to do next.
   */
  constructor(index: number, field: string, message: string) {
    super("trace_event_invalid", message);
    this.name = "TraceEventError";
    this.index = index;
    this.field = field;
  }
}
