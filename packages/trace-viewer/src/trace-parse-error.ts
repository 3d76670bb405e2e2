import { LatticeError } from "@lattice/tools";

/** Options of a {@link TraceParseError}: the standard `cause`, and the wrong field. */
export interface TraceParseErrorOptions extends ErrorOptions {
  /** The path of the wrong field, when the line is an event with a bad field. */
  readonly field?: string | undefined;
}

/**
 * Thrown by {@link parseTraceJsonl} for a line that is not JSON, not a trace event (an object
 * with a string `type` and a `time` within ±1e15 ms), or an event with a field the viewer cannot
 * draw (an unknown `status`, a `turn` that is not an integer, no `usage`, ...). Code:
 * `"trace_parse_failed"`.
 */
export class TraceParseError extends LatticeError {
  /** The 1-based number of the offending line. */
  readonly line: number;
  /** The path of the wrong field (`turn`, `usage`, `plan.runs[0].indices`); `undefined` when the line is not an event at all. */
  readonly field: string | undefined;

  /**
   * @param line - The 1-based line number.
   * @param message - What is wrong with the line and what to do next.
   * @param options - Standard `ErrorOptions` (`{ cause }`), and the wrong `field`.
   */
  constructor(line: number, message: string, options?: TraceParseErrorOptions) {
    super(
      "trace_parse_failed",
      message,
      options?.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = "TraceParseError";
    this.line = line;
    this.field = options?.field;
  }
}
