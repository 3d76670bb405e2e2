import { stat } from "node:fs/promises";
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
import { fileSystemError } from "./file-errors.js";
import { type FoundFile, skippedDirectories, walkFiles } from "./find-files.js";
import { compileGlob } from "./glob-pattern.js";
import { SmallestItems } from "./smallest-items.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  confinePath,
  displayPath,
  type RealWorkspace,
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** The caps of the Glob tool. */
export interface GlobToolCaps {
  /** The most paths one call returns. Default 100. */
  readonly maxResults?: number | undefined;
  /**
   * The most directory entries one call reads before it stops, with a note that the listing
   * may be incomplete: a bound on the time of a pattern over a huge tree. Default 1,000,000.
   */
  readonly maxVisited?: number | undefined;
}

/** Options of {@link globTool}: the workspace and the caps. */
export interface GlobToolOptions extends WorkspaceOptions, GlobToolCaps {}

/** Glob's caps: each one's default (and upper bound, if any). */
const GLOB_CAPS = {
  maxResults: { fallback: 100 },
  maxVisited: { fallback: 1_000_000 },
} satisfies CapSpecs<keyof GlobToolCaps>;

/** The keys of {@link GlobToolCaps}, for strict option checks. */
export const GLOB_CAP_KEYS: readonly string[] = Object.keys(GLOB_CAPS);

const globSchema = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'The glob pattern to match files against, for example "**/*.ts" or "src/**/*.test.ts".',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The directory to search in: absolute or relative to the working directory. Default: the working directory.",
    ),
}) satisfies z.ZodType<GlobToolInput>;

/** The validated input of the Glob tool. */
export interface GlobToolInput {
  /** The glob pattern, relative to `path`. */
  readonly pattern: string;
  /** The directory to search in; default `cwd`. */
  readonly path?: string | undefined;
}

type ResolvedGlobCaps = ResolvedCaps<typeof GLOB_CAPS>;

/** Checks Glob's caps. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveGlobCaps(
  caps: GlobToolCaps | undefined,
  prefix: string,
  nest?: string,
): ResolvedGlobCaps {
  return resolveCaps(GLOB_CAPS, caps, prefix, nest);
}

/**
 * The built-in Glob tool: finds files by glob pattern inside the working directory. Input
 * `{ pattern, path? }`; concurrency-safe (T16); kind `"builtin"`.
 *
 * Returns one path a line, relative to `cwd` (absolute for files in an additional
 * directory), most recently modified first (ties by name), at most `maxResults` (default
 * 100) with a note giving the number of matches when cut. Dot files are matched; `.git` is
 * always skipped and `node_modules` unless the pattern or path names it. Symlinks are
 * followed only when they lead inside the workspace (each linked directory once, never in a
 * cycle). A pattern with a `..` segment, or an absolute pattern outside the searched
 * directory, is refused.
 *
 * The pattern (picomatch syntax, see `compileGlob`; at most 500 characters) is compiled to a
 * linear-time RE2 matcher, so no pattern can stall the event loop (H3). The tree is walked as
 * a stream (`fs.opendir`), entering only directories that can hold a match, and the newest
 * `maxResults` matches are kept in a bounded heap, so memory stays proportional to
 * `maxResults`, not to the tree (H8). The walk stops after `maxVisited` directory entries
 * (default 1,000,000), with a note that the listing may be incomplete.
 *
 * @param options - `cwd`, `additionalDirectories`, `maxResults` and `maxVisited`.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function globTool(options: GlobToolOptions): ToolDefinition<GlobToolInput> {
  const prefix = "globTool():";
  assertKnownOptions(options, [...WORKSPACE_OPTION_KEYS, ...GLOB_CAP_KEYS], prefix);
  return buildGlobTool(resolveWorkspace(options, prefix), resolveGlobCaps(options, prefix));
}

/** Builds the Glob tool on a checked workspace. Internal. */
export function buildGlobTool(
  workspace: Workspace,
  caps: ResolvedGlobCaps,
): ToolDefinition<GlobToolInput> {
  return createToolDefinition({
    name: "Glob",
    description: [
      'Finds files whose paths match a glob pattern, such as "**/*.js" or "src/**/*.ts", inside the working directory (or inside path, if given).',
      `Returns matching file paths relative to the working directory, most recently modified first, at most ${caps.maxResults}.`,
      ".git and node_modules are skipped unless the pattern or path names them. Patterns cannot climb out with '..'.",
    ].join("\n"),
    schema: globSchema,
    kind: "builtin",
    isConcurrencySafe: () => true,
    handler: (input, context) => globFiles(workspace, caps, input, context),
  });
}

async function globFiles(
  workspace: Workspace,
  caps: ResolvedGlobCaps,
  input: GlobToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  throwIfAborted(context.signal, "Glob");
  const given = input.path ?? ".";
  const { real: directory, workspace: real } = await confinePath(workspace, given, "Glob");
  try {
    if (!(await stat(directory)).isDirectory()) {
      throw new BuiltinToolError(
        "not_a_directory",
        `Glob: path ${JSON.stringify(given)} is a file, not a directory. Pass the directory to search in.`,
      );
    }
  } catch (error) {
    throw fileSystemError(error, workspace, given, "Glob");
  }
  const pattern = relativePattern(
    input.pattern,
    [directory, path.resolve(workspace.cwd, given)],
    "Glob",
  );
  const matcher = compileGlob(pattern, "Glob");
  const walk = walkFiles({
    directory,
    workspace: real,
    skip: skippedDirectories(input.pattern, input.path),
    order: "any",
    descend: matcher.mayContain,
    maxVisited: caps.maxVisited,
    signal: context.signal,
  });
  // The newest maxResults matches, in a heap: memory does not grow with the tree (H8).
  const newest = new SmallestItems<DatedFile>(caps.maxResults, newestFirst);
  let batch: FoundFile[] = [];
  const flush = async (): Promise<void> => {
    const dated = await Promise.all(batch.map((file) => dateFile(real, file)));
    for (const file of dated) newest.offer(file);
    batch = [];
  };
  for await (const file of walk) {
    if (!matcher.matches(file.relative)) continue;
    batch.push(file);
    if (batch.length === STAT_BATCH) await flush();
  }
  await flush();
  throwIfAborted(context.signal, "Glob");
  const limitNote = walk.stoppedAtLimit
    ? `[Stopped after reading ${caps.maxVisited} directory entries: there may be more matching files. Narrow the pattern or path.]`
    : undefined;
  if (newest.offered === 0) {
    const none = `No files match ${JSON.stringify(input.pattern)} in ${given}.`;
    return { content: limitNote === undefined ? none : `${none}\n${limitNote}` };
  }
  const lines = newest.sorted().map((file) => file.name);
  if (newest.offered > caps.maxResults) {
    lines.push(
      `[Showing the ${caps.maxResults} most recently modified of ${newest.offered} matching files. Narrow the pattern or path to see the others.]`,
    );
  }
  if (limitNote !== undefined) lines.push(limitNote);
  return { content: lines.join("\n") };
}

/** How many matches are stat-ed at a time. */
const STAT_BATCH = 64;

interface DatedFile {
  readonly name: string;
  readonly modified: number;
}

async function dateFile(real: RealWorkspace, file: FoundFile): Promise<DatedFile> {
  let modified = 0;
  try {
    modified = (await stat(file.real)).mtimeMs;
  } catch {
    // Deleted since the walk: sort it last.
  }
  return { name: displayPath(real, file.path), modified };
}

/** Most recently modified first, ties by name. */
function newestFirst(a: DatedFile, b: DatedFile): number {
  return b.modified - a.modified || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
}

/**
 * Makes a pattern relative to the searched directory, refusing one that climbs out: a `..`
 * segment, or an absolute pattern that does not start with the directory. Internal.
 */
export function relativePattern(
  pattern: string,
  directories: readonly string[],
  toolName: string,
): string {
  let relative = pattern;
  if (path.isAbsolute(pattern)) {
    const base = directories.find((directory) => pattern.startsWith(withSlash(directory)));
    if (base === undefined) {
      throw new BuiltinToolError(
        "invalid_pattern",
        `${toolName}: the absolute pattern ${JSON.stringify(pattern)} does not lie inside the searched directory. Pass the directory as path and a pattern relative to it, inside the working directory.`,
      );
    }
    relative = pattern.slice(withSlash(base).length);
  }
  if (relative.split(/[\\/]/).includes("..")) {
    throw new BuiltinToolError(
      "invalid_pattern",
      `${toolName}: the pattern ${JSON.stringify(pattern)} climbs out with "..". Pass the directory to search as path (it must be inside the working directory) and a pattern without "..".`,
    );
  }
  return relative === "" ? "**/*" : relative;
}

function withSlash(directory: string): string {
  return directory.endsWith("/") ? directory : `${directory}/`;
}
