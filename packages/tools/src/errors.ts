/**
 * The base class of every error the SDK throws on purpose.
 *
 * `code` is a stable string to branch on; `name` is hard-coded per class so it survives
 * bundlers that rename classes. Messages say what happened, to what, and what to do next.
 */
export class LatticeError extends Error {
  /** A stable, machine-readable identifier of the failure, such as `"unknown_option"`. */
  readonly code: string;

  /**
   * @param code - Stable identifier of the failure.
   * @param message - Human-readable message: what happened, to what, and what to do next.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
    this.name = "LatticeError";
  }
}

/**
 * Thrown at definition time when `tool()` (or another tool factory) receives a definition it
 * cannot use: a bad name, a schema that is not a `z.object`, a handler that is not a function,
 * or a schema field that JSON Schema cannot represent. Code: `"invalid_tool_definition"`.
 */
export class ToolDefinitionError extends LatticeError {
  /** The name of the tool being defined, as given. */
  readonly toolName: string;

  /**
   * @param toolName - The tool being defined.
   * @param message - What is wrong and how to fix it.
   * @param options - Standard `ErrorOptions`, for example `{ cause }`.
   */
  constructor(toolName: string, message: string, options?: ErrorOptions) {
    super("invalid_tool_definition", message, options);
    this.toolName = toolName;
    this.name = "ToolDefinitionError";
  }
}

/** One failing field of a tool input: where it is and what was expected there. */
export interface ToolInputIssue {
  /** Path of the field inside the input, for example `["items", 0, "name"]`; empty for the root. */
  readonly path: readonly PropertyKey[];
  /** What was wrong there, as the schema's validator reports it. */
  readonly message: string;
}

/**
 * The model sent a tool input that does not match the tool's schema. It is never thrown at
 * users during a run: the SDK turns it into an `is_error` tool_result so the model can retry.
 * Code: `"invalid_tool_input"`.
 */
export class ToolInputError extends LatticeError {
  /** The tool whose input was invalid. */
  readonly toolName: string;
  /** Every failing field, in the order the validator reported them. */
  readonly issues: readonly ToolInputIssue[];

  /**
   * @param toolName - The tool whose input was invalid.
   * @param issues - The failing fields.
   * @param message - The model-readable text listing the issues.
   */
  constructor(toolName: string, issues: readonly ToolInputIssue[], message: string) {
    super("invalid_tool_input", message);
    this.toolName = toolName;
    this.issues = issues;
    this.name = "ToolInputError";
  }
}

/**
 * An options object holds a key the SDK does not know (T31–T33). Thrown when the tool or
 * agent is assembled, never later. Code: `"unknown_option"`.
 */
export class UnknownOptionError extends LatticeError {
  /** The unknown key, exactly as given. */
  readonly option: string;

  /**
   * @param prefix - Who owns the options, for example `AgentOptions:` or `tool("search"):`.
   * @param option - The unknown key.
   */
  constructor(prefix: string, option: string) {
    super(
      "unknown_option",
      `${prefix} unknown option "${option}". Check for a typo, or upgrade the SDK if this option was added in a newer version.`,
    );
    this.option = option;
    this.name = "UnknownOptionError";
  }
}

/**
 * A known option holds a value the SDK cannot use, for example `maxConcurrency: 0`.
 * The message names the option, the bad value and what is allowed. Code: `"invalid_option"`.
 */
export class InvalidOptionError extends LatticeError {
  /** The option's name, dotted for nested options (`toolConcurrency.maxConcurrency`). */
  readonly option: string;

  /**
   * @param prefix - Who owns the options, for example `AgentOptions:`.
   * @param option - The option's name.
   * @param message - The rest of the sentence: the bad value and what is allowed.
   */
  constructor(prefix: string, option: string, message: string) {
    super("invalid_option", `${prefix} option "${option}" ${message}`);
    this.option = option;
    this.name = "InvalidOptionError";
  }
}
