import { BuiltinToolError } from "./builtin-tool-error.js";
import { errorCode, isMissing, type Workspace } from "./workspace.js";

/**
 * Turns a file-system error on a confined path into a model-readable error that names the
 * path as the model gave it: "not found" with a hint, or the error code.
 */
export function fileSystemError(
  error: unknown,
  workspace: Workspace,
  givenPath: string,
  toolName: string,
): BuiltinToolError {
  if (error instanceof BuiltinToolError) return error;
  if (isMissing(error)) {
    return new BuiltinToolError(
      "file_not_found",
      `${toolName}: ${JSON.stringify(givenPath)} does not exist. Relative paths start at the working directory ${workspace.cwd}; use LS or Glob to find the right path.`,
      { cause: error },
    );
  }
  const code = errorCode(error);
  const reason =
    code === "EACCES" || code === "EPERM"
      ? "permission denied"
      : code === "EISDIR"
        ? "it is a directory"
        : code;
  return new BuiltinToolError(
    "file_system_error",
    `${toolName} failed on ${JSON.stringify(givenPath)}: ${reason}.`,
    { cause: error },
  );
}
