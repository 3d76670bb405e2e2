import type { Stats } from "node:fs";
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
import { openConfined, readWhole } from "./open-confined.js";
import { replaceFile } from "./replace-file.js";
import {
  type RealWorkspace,
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** Options of {@link editTool}: the workspace. */
export interface EditToolOptions extends WorkspaceOptions {}

const editSchema = z.object({
  file_path: z
    .string()
    .min(1)
    .describe("The file to edit: an absolute path, or a path relative to the working directory."),
  old_string: z
    .string()
    .min(1, "old_string must not be empty; to create or replace a whole file, use Write")
    .describe(
      "The exact text to replace, including whitespace and indentation. It must occur exactly once unless replace_all is true; include surrounding lines to make it unique.",
    ),
  new_string: z.string().describe("The text to put in its place; must differ from old_string."),
  replace_all: z
    .boolean()
    .optional()
    .describe("Replace every occurrence of old_string instead of exactly one. Default false."),
}) satisfies z.ZodType<EditToolInput>;

/** The validated input of the Edit tool. */
export interface EditToolInput {
  /** The file to edit: absolute, or relative to `cwd`. */
  readonly file_path: string;
  /** The exact text to replace; not empty. */
  readonly old_string: string;
  /** The text to put in its place. */
  readonly new_string: string;
  /** Replace every occurrence instead of exactly one. */
  readonly replace_all?: boolean | undefined;
}

/**
 * The built-in Edit tool: replaces an exact string in a UTF-8 file inside the working
 * directory. Input `{ file_path, old_string, new_string, replace_all? }`; not
 * concurrency-safe (T16): its calls always run alone; kind `"builtin"`.
 *
 * Refused, with an `is_error` result that says why and the file left unchanged: an
 * `old_string` equal to `new_string`, an `old_string` that does not occur, and an
 * `old_string` that occurs more than once (the result says how many times) unless
 * `replace_all` is true. Matching is exact (no regular expressions, no `$` patterns in
 * `new_string`). The path is confined like every built-in's (see {@link builtinTools}).
 *
 * The old content is read through a handle checked inside the workspace, and the new
 * content replaces the file atomically (a temporary file in the same directory, renamed onto
 * it), keeping its permission bits. A file with more than one hard link is refused unless
 * `allowHardLinks` (it may be a file outside, whose content the edit would copy in); when
 * allowed, it is replaced, never written through, so the other names keep the old content.
 * A directory, FIFO, socket or device is refused without being read.
 *
 * @param options - `cwd`, `additionalDirectories` and `allowHardLinks` (default `false`).
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory.
 */
export function editTool(options: EditToolOptions): ToolDefinition<EditToolInput> {
  const prefix = "editTool():";
  assertKnownOptions(options, WORKSPACE_OPTION_KEYS, prefix);
  return buildEditTool(resolveWorkspace(options, prefix));
}

/** Builds the Edit tool on a checked workspace. Internal. */
export function buildEditTool(workspace: Workspace): ToolDefinition<EditToolInput> {
  return createToolDefinition({
    name: "Edit",
    description: [
      "Replaces exact text in a file inside the working directory: old_string becomes new_string.",
      "old_string must match the file exactly (whitespace included) and occur exactly once; add surrounding lines to make it unique, or set replace_all to change every occurrence.",
      "file_path may be absolute or relative to the working directory; it must stay inside it. Read the file first so old_string is exact.",
    ].join("\n"),
    schema: editSchema,
    kind: "builtin",
    handler: (input, context) => edit(workspace, input, context),
  });
}

async function edit(
  workspace: Workspace,
  input: EditToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  const given = input.file_path;
  const { old_string: oldString, new_string: newString } = input;
  if (oldString === newString) {
    throw new BuiltinToolError(
      "edit_no_change",
      `Edit: old_string and new_string are the same, so there is nothing to change in ${given}. Pass the new text as new_string.`,
    );
  }
  throwIfAborted(context.signal, "Edit");
  let text: string;
  let target: string;
  let realWorkspace: RealWorkspace;
  let current: Stats;
  try {
    const opened = await openConfined(workspace, given, "Edit", {
      allowHardLinks: workspace.allowHardLinks,
    });
    try {
      if (!opened.stats.isFile()) {
        throw new BuiltinToolError(
          "not_a_file",
          `Edit: ${JSON.stringify(given)} is a directory. Edit changes text files.`,
        );
      }
      text = (await readWhole(opened.handle, opened.stats.size)).toString("utf8");
    } finally {
      // Nothing waits for the close: the content is already in memory.
      opened.handle.close().catch(() => {});
    }
    target = opened.path;
    realWorkspace = opened.workspace;
    current = opened.stats;
  } catch (error) {
    throw fileSystemError(error, workspace, given, "Edit");
  }
  const occurrences = countOccurrences(text, oldString);
  if (occurrences === 0) {
    throw new BuiltinToolError(
      "edit_old_string_not_found",
      `Edit: old_string was not found in ${given}, so nothing was changed. Read the file and copy the text exactly, whitespace and indentation included.`,
    );
  }
  if (occurrences > 1 && input.replace_all !== true) {
    throw new BuiltinToolError(
      "edit_old_string_not_unique",
      `Edit: old_string occurs ${occurrences} times in ${given}, so nothing was changed. Include more surrounding lines to make it unique, or set replace_all: true to replace all ${occurrences}.`,
    );
  }
  const updated =
    input.replace_all === true
      ? text.split(oldString).join(newString)
      : (() => {
          const at = text.indexOf(oldString);
          return text.slice(0, at) + newString + text.slice(at + oldString.length);
        })();
  throwIfAborted(context.signal, "Edit");
  try {
    await replaceFile({
      target,
      content: updated,
      workspace,
      real: realWorkspace,
      createParents: false,
      given,
      toolName: "Edit",
      current,
    });
  } catch (error) {
    throw fileSystemError(error, workspace, given, "Edit");
  }
  return {
    content: `Edited ${given}: replaced ${occurrences} occurrence${occurrences === 1 ? "" : "s"}.`,
  };
}

/** Non-overlapping occurrences of `needle` in `text`, as `split` counts them. */
function countOccurrences(text: string, needle: string): number {
  let count = 0;
  let from = text.indexOf(needle);
  while (from !== -1) {
    count += 1;
    from = text.indexOf(needle, from + needle.length);
  }
  return count;
}
