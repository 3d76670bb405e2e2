import { stat } from "node:fs/promises";
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
import { defaultIgnores, findFiles } from "./find-files.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  confinePath,
  displayPath,
  resolveWorkspace,
  throwIfAborted,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** The caps of the Glob tool. */
export interface GlobToolCaps {
  /** The most paths one call returns. Default 100. */
  readonly maxResults?: number | undefined;
}

/** Options of {@link globTool}: the workspace and the caps. */
export interface GlobToolOptions extends WorkspaceOptions, GlobToolCaps {}

/** Glob's caps: each one's default (and upper bound, if any). */
const GLOB_CAPS = {
  maxResults: { fallback: 100 },
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
 * The built-in Glob tool: finds files by glob pattern (tinyglobby) inside the working
 * directory. Input `{ pattern, path? }`; concurrency-safe (T16); kind `"builtin"`.
 *
 * Returns one path a line, relative to `cwd` (absolute for files in an additional
 * directory), most recently modified first (ties by name), at most `maxResults` (default
 * 100) with a note when cut. Dot files are matched; `.git` is always skipped and
 * `node_modules` unless the pattern or path names it. Symlinks are followed only when they
 * lead inside the workspace. A pattern with a `..` segment, or an absolute pattern outside
 * the searched directory, is refused.
 *
 * @param options - `cwd`, `additionalDirectories` and `maxResults`.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function globTool(options: GlobToolOptions): ToolDefinition<GlobToolInput> {
  const prefix = "globTool():";
  assertKnownOptions(options, ["cwd", "additionalDirectories", ...GLOB_CAP_KEYS], prefix);
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
  const found = await findFiles({
    directory,
    patterns: [pattern],
    ignore: defaultIgnores(input.pattern, input.path),
    workspace: real,
    signal: context.signal,
  });
  throwIfAborted(context.signal, "Glob");
  if (found.length === 0) {
    return { content: `No files match ${JSON.stringify(input.pattern)} in ${given}.` };
  }
  const dated = await Promise.all(
    found.map(async (file) => {
      let modified = 0;
      try {
        modified = (await stat(file.real)).mtimeMs;
      } catch {
        // Deleted since the crawl: sort it last.
      }
      return { name: displayPath(real, file.path), modified };
    }),
  );
  dated.sort((a, b) => b.modified - a.modified || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const lines = dated.slice(0, caps.maxResults).map((file) => file.name);
  if (dated.length > caps.maxResults) {
    lines.push(
      `[Showing the ${caps.maxResults} most recently modified of ${dated.length} matching files. Narrow the pattern or path to see the others.]`,
    );
  }
  return { content: lines.join("\n") };
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
