import { LatticeError } from "@lattice/tools";

/**
 * Thrown by {@link parseTraceJsonl} for a line that is not JSON, or not a trace event (an
 * object with a string `type` and a numeric `time`). Code: `"trace_parse_failed"`.
 */
export class TraceParseError extends LatticeError {
  /** The 1-based number of the offending line. */
  readonly line: number;

  /**
   * @param line - The 1-based line number.
   * @param message - What is wrong with the line and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(line: number, message: string, options?: ErrorOptions) {
    super("trace_parse_failed", message, options);
    this.name = "TraceParseError";
    this.line = line;
  }
}
