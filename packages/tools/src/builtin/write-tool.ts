import { mkdir, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { z } from "zod/v4";
import {
  assertKnownOptions,
  createToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { fileSystemError } from "./file-errors.js";
import {
  confinePath,
  isMissing,
  resolveWorkspace,
  throwIfAborted,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** Options of {@link writeTool}: the workspace. */
export interface WriteToolOptions extends WorkspaceOptions {}

const writeSchema = z.object({
  file_path: z
    .string()
    .min(1)
    .describe("The file to write: an absolute path, or a path relative to the working directory."),
  content: z.string().describe("The file's complete new content."),
}) satisfies z.ZodType<WriteToolInput>;

/** The validated input of the Write tool. */
export interface WriteToolInput {
  /** The file to write: absolute, or relative to `cwd`. */
  readonly file_path: string;
  /** The file's complete new content. */
  readonly content: string;
}

/**
 * The built-in Write tool: creates or overwrites a file inside the working directory with
 * the given content (UTF-8), creating missing parent directories. Input `{ file_path,
 * content }`; not concurrency-safe (T16): its calls always run alone; kind `"builtin"`.
 *
 * The path is confined like every built-in's (see {@link builtinTools}); a symlink, even a
 * dangling one, is followed only to where it points, and refused when that is outside. The
 * file written is the resolved path, never the path as given.
 *
 * @param options - `cwd` and `additionalDirectories`.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory.
 */
export function writeTool(options: WriteToolOptions): ToolDefinition<WriteToolInput> {
  const prefix = "writeTool():";
  assertKnownOptions(options, ["cwd", "additionalDirectories"], prefix);
  return buildWriteTool(resolveWorkspace(options, prefix));
}

/** Builds the Write tool on a checked workspace. Internal. */
export function buildWriteTool(workspace: Workspace): ToolDefinition<WriteToolInput> {
  return createToolDefinition({
    name: "Write",
    description: [
      "Writes a file inside the working directory, replacing it if it exists; missing parent directories are created.",
      "file_path may be absolute or relative to the working directory; it must stay inside it.",
      "To change part of an existing file, prefer Edit.",
    ].join("\n"),
    schema: writeSchema,
    kind: "builtin",
    handler: (input, context) => write(workspace, input, context),
  });
}

async function write(
  workspace: Workspace,
  input: WriteToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  const given = input.file_path;
  const { real } = await confinePath(workspace, given, "Write");
  throwIfAborted(context.signal, "Write");
  let existed = false;
  try {
    const info = await stat(real);
    if (!info.isFile()) {
      throw new BuiltinToolError(
        "not_a_file",
        `Write: ${JSON.stringify(given)} is ${info.isDirectory() ? "a directory" : "not a regular file"}; it was left as it is. Write to a file path instead.`,
      );
    }
    existed = true;
  } catch (error) {
    if (!isMissing(error)) throw fileSystemError(error, workspace, given, "Write");
  }
  try {
    await mkdir(path.dirname(real), { recursive: true });
    await writeFile(real, input.content, "utf8");
  } catch (error) {
    throw fileSystemError(error, workspace, given, "Write");
  }
  const bytes = Buffer.byteLength(input.content);
  return {
    content: `${existed ? "Overwrote" : "Created"} ${given} (${bytes} byte${bytes === 1 ? "" : "s"}).`,
  };
}
