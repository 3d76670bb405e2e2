import { z } from "zod/v4";
import {
  createToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { assertKnownOptions } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { fileSystemError } from "./file-errors.js";
import { specialFileKind } from "./open-confined.js";
import { replaceFile } from "./replace-file.js";
import {
  confinePath,
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
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
 * file written is the resolved path, never the path as given. The file is replaced
 * atomically (a temporary file in the same directory, checked through its handle, then
 * renamed onto it), so a hard link to a file elsewhere is replaced, never written through,
 * and the replaced file keeps its permission bits. A directory, FIFO, socket or device at
 * the path is refused and left as it is, without being opened.
 *
 * @param options - `cwd`, `additionalDirectories` and `allowHardLinks` (unused by Write).
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory.
 */
export function writeTool(options: WriteToolOptions): ToolDefinition<WriteToolInput> {
  const prefix = "writeTool():";
  assertKnownOptions(options, WORKSPACE_OPTION_KEYS, prefix);
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
  const { real, workspace: realWorkspace } = await confinePath(workspace, given, "Write");
  throwIfAborted(context.signal, "Write");
  let existed: boolean;
  try {
    ({ existed } = await replaceFile({
      target: real,
      content: input.content,
      workspace,
      real: realWorkspace,
      createParents: true,
      given,
      toolName: "Write",
      inspect: (existing) => {
        if (existing === undefined || existing.isFile()) return;
        const what = existing.isDirectory()
          ? "a directory"
          : `${specialFileKind(existing)}, not a regular file (it was not opened)`;
        throw new BuiltinToolError(
          "not_a_file",
          `Write: ${JSON.stringify(given)} is ${what}; it was left as it is. Write to a file path instead.`,
        );
      },
    }));
  } catch (error) {
    throw fileSystemError(error, workspace, given, "Write");
  }
  const bytes = Buffer.byteLength(input.content);
  return {
    content: `${existed ? "Overwrote" : "Created"} ${given} (${bytes} byte${bytes === 1 ? "" : "s"}).`,
  };
}
