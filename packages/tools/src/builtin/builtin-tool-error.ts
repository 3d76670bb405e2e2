import { LatticeError } from "../index.js";

/**
 * A built-in tool refused or failed a call: a path outside the working directory, a missing
 * file, an `old_string` that does not match, an invalid regular expression. It is never
 * thrown at users during a run: the tool's handler throws it and the SDK turns it into an
 * `is_error` tool_result carrying the message, so the model can correct the call (T6).
 *
 * Codes: `"path_outside_working_directory"`, `"file_not_found"`, `"not_a_file"`,
 * `"not_a_directory"`, `"binary_file"`, `"edit_no_change"`, `"edit_old_string_not_found"`,
 * `"edit_old_string_not_unique"`, `"invalid_pattern"`, `"aborted"`, `"file_system_error"`,
 * `"hard_link"` (a file with more than one hard link, without `allowHardLinks`),
 * `"file_changed"` (a path that turned into a symlink or a file while the tool used it).
 */
export class BuiltinToolError extends LatticeError {
  /**
   * @param code - Stable identifier of the failure.
   * @param message - What happened, to which path (as the model gave it), and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(code, message, options);
    this.name = "BuiltinToolError";
  }
}
