import { readdir, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { z } from "zod/v4";
import {
  createToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { assertKnownOptions } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { directoryBatches } from "./directory-batches.js";
import { fileSystemError } from "./file-errors.js";
import { type ConfinedFile, directoryPrefix, openConfined } from "./open-confined.js";
import { SmallestItems } from "./smallest-items.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  isInsideWorkspace,
  type RealWorkspace,
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** The caps of the LS tool. */
export interface LsToolCaps {
  /** The most entries one call lists. Default 1000. */
  readonly maxEntries?: number | undefined;
}

/** Options of {@link lsTool}: the workspace and the caps. */
export interface LsToolOptions extends WorkspaceOptions, LsToolCaps {}

/** Ls's caps: each one's default (and upper bound, if any). */
const LS_CAPS = {
  maxEntries: { fallback: 1000 },
} satisfies CapSpecs<keyof LsToolCaps>;

/**
 * The largest directory (its size as `stat` reports it, which grows with its entries on
 * ext4, xfs, btrfs and tmpfs: at most some thousands of names) that LS reads at once with
 * `fs.readdir`; a larger one, or one whose size is unknown (0), is read as a stream.
 */
const SMALL_DIRECTORY_BYTES = 64 * 1024;

/** The keys of {@link LsToolCaps}, for strict option checks. */
export const LS_CAP_KEYS: readonly string[] = Object.keys(LS_CAPS);

const lsSchema = z.object({
  path: z
    .string()
    .min(1)
    .describe(
      'The directory to list: an absolute path, or a path relative to the working directory ("." for the working directory itself).',
    ),
}) satisfies z.ZodType<LsToolInput>;

/** The validated input of the LS tool. */
export interface LsToolInput {
  /** The directory to list: absolute, or relative to `cwd`. */
  readonly path: string;
}

type ResolvedLsCaps = ResolvedCaps<typeof LS_CAPS>;

/** Checks LS's caps. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveLsCaps(
  caps: LsToolCaps | undefined,
  prefix: string,
  nest?: string,
): ResolvedLsCaps {
  return resolveCaps(LS_CAPS, caps, prefix, nest);
}

/**
 * The built-in LS tool: lists one directory inside the working directory, one entry a line,
 * sorted by name, directories marked with a trailing `/`. Input `{ path }`; concurrency-safe
 * (T16); kind `"builtin"`.
 *
 * A symlink is shown with `/` when it leads to a directory inside the workspace; a symlink
 * that leads outside (or nowhere) is listed by name only, and never followed. At most
 * `maxEntries` entries (default 1000): when there are more, the first `maxEntries` by name
 * are shown, with a note giving the total. A directory larger than 64 KiB (as `stat` reports
 * its size), or of unknown size, is read as a stream (`fs.opendir`, 2,048 entries at a time)
 * keeping only those first names, so memory stays proportional to `maxEntries`, not to the
 * directory (H8); a smaller one is read at once with `fs.readdir`, which sorts it.
 *
 * @param options - `cwd`, `additionalDirectories` and `maxEntries`.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function lsTool(options: LsToolOptions): ToolDefinition<LsToolInput> {
  const prefix = "lsTool():";
  assertKnownOptions(options, [...WORKSPACE_OPTION_KEYS, ...LS_CAP_KEYS], prefix);
  return buildLsTool(resolveWorkspace(options, prefix), resolveLsCaps(options, prefix));
}

/** Builds the LS tool on a checked workspace. Internal. */
export function buildLsTool(
  workspace: Workspace,
  caps: ResolvedLsCaps,
): ToolDefinition<LsToolInput> {
  return createToolDefinition({
    name: "LS",
    description: [
      "Lists the entries of a directory inside the working directory, one a line, sorted by name; directories end with '/'.",
      "path may be absolute or relative to the working directory; it must stay inside it.",
      "To find files by name pattern across directories, prefer Glob.",
    ].join("\n"),
    schema: lsSchema,
    kind: "builtin",
    isConcurrencySafe: () => true,
    handler: (input, context) => list(workspace, caps, input, context),
  });
}

async function list(
  workspace: Workspace,
  caps: ResolvedLsCaps,
  input: LsToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  const given = input.path;
  // Open and check the directory itself (H9): what is listed is the directory that was
  // checked, even if its path is swapped for a symlink to the outside meanwhile.
  let opened: ConfinedFile;
  try {
    opened = await openConfined(workspace, given, "LS", { allowHardLinks: true });
  } catch (error) {
    throw fileSystemError(error, workspace, given, "LS");
  }
  const { real, workspace: realRoots, stats: info } = opened;
  // Stream the directory, keeping only the first maxEntries names (H8): a directory of a
  // million entries costs the time to read it, not the memory to hold it.
  const first = new SmallestItems<string>(caps.maxEntries, compareNames);
  try {
    throwIfAborted(context.signal, "LS");
    if (!info.isDirectory()) {
      throw new BuiltinToolError(
        "not_a_directory",
        `LS: ${JSON.stringify(given)} is a file, not a directory. Use Read to read it.`,
      );
    }
    const listed = directoryPrefix(opened.handle, real);
    // A small directory is read at once: the system sorts it (so sorting it here is almost
    // free) and its listing is at most SMALL_DIRECTORY_BYTES. Any other is streamed.
    const small = info.size > 0 && info.size <= SMALL_DIRECTORY_BYTES;
    const batches = small
      ? [await readdir(listed, { withFileTypes: true })]
      : directoryBatches(listed);
    for await (const batch of batches) {
      throwIfAborted(context.signal, "LS");
      for (const entry of batch) {
        first.offer(
          entry.isDirectory()
            ? `${entry.name}/`
            : entry.isSymbolicLink()
              ? await linkName(entry.name, real, realRoots)
              : entry.name,
        );
      }
    }
  } catch (error) {
    throw fileSystemError(error, workspace, given, "LS");
  } finally {
    // Nothing waits for the close: the listing is already in memory.
    opened.handle.close().catch(() => {});
  }
  if (first.offered === 0) return { content: `(${given} is an empty directory.)` };
  const shown = first.sorted();
  if (first.offered > shown.length) {
    shown.push(
      `[Listing cut at ${caps.maxEntries} of ${first.offered} entries. Use Glob with a pattern to narrow it.]`,
    );
  }
  return { content: shown.join("\n") };
}

function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A symlink as listed: with `/` when it leads to a directory inside the workspace. */
async function linkName(name: string, real: string, roots: RealWorkspace): Promise<string> {
  return (await isDirectoryInside(path.join(real, name), roots)) ? `${name}/` : name;
}

/** Whether a symlink leads to a directory inside the workspace; nothing outside is read. */
async function isDirectoryInside(link: string, roots: RealWorkspace): Promise<boolean> {
  try {
    const target = await realpath(link);
    if (!isInsideWorkspace(target, roots)) return false;
    return (await stat(target)).isDirectory();
  } catch {
    return false;
  }
}
