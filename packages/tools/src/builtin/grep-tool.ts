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
import { fileSystemError } from "./file-errors.js";
import { type FoundFile, skippedDirectories, walkFiles } from "./find-files.js";
import { compileGlob, type GlobMatcher } from "./glob-pattern.js";
import { relativePattern } from "./glob-tool.js";
import { LinePattern } from "./grep-pattern.js";
import { LONG_LINE_TIME_LIMIT_MS } from "./long-line-searcher.js";
import { readFileInside } from "./open-confined.js";
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

/** The caps of the Grep tool. */
export interface GrepToolCaps {
  /** The most result lines one call returns (files, matching lines or counts). Default 250. */
  readonly maxResults?: number | undefined;
  /** Files larger than this many bytes are skipped. Default 10 MiB. */
  readonly maxFileBytes?: number | undefined;
  /** In `content` mode, longer matching lines are cut to this many characters. Default 500. */
  readonly maxLineLength?: number | undefined;
}

/** Options of {@link grepTool}: the workspace and the caps. */
export interface GrepToolOptions extends WorkspaceOptions, GrepToolCaps {}

/** Grep's caps: each one's default (and upper bound, if any). */
const GREP_CAPS = {
  maxResults: { fallback: 250 },
  maxFileBytes: { fallback: 10 * 1024 * 1024 },
  maxLineLength: { fallback: 500 },
} satisfies CapSpecs<keyof GrepToolCaps>;

/** The keys of {@link GrepToolCaps}, for strict option checks. */
export const GREP_CAP_KEYS: readonly string[] = Object.keys(GREP_CAPS);

const grepSchema = z.object({
  pattern: z
    .string()
    .min(1)
    .describe(
      'A regular expression in RE2 syntax, like ripgrep (no lookahead, lookbehind or backreferences), matched line by line: for example "function\\s+\\w+" or "TODO".',
    ),
  path: z
    .string()
    .min(1)
    .optional()
    .describe(
      "The file or directory to search: absolute or relative to the working directory. Default: the working directory.",
    ),
  glob: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Only search files whose path matches this glob, for example "*.ts" (any depth) or "src/**/*.{ts,tsx}".',
    ),
  output_mode: z
    .enum(["files_with_matches", "content", "count"])
    .optional()
    .describe(
      '"files_with_matches" (default) lists the matching files; "content" shows matching lines as path:line:text; "count" shows path:number of matching lines.',
    ),
  "-i": z.boolean().optional().describe("Match case-insensitively. Default false."),
}) satisfies z.ZodType<GrepToolInput>;

/** The validated input of the Grep tool. */
export interface GrepToolInput {
  /** A regular expression in RE2 syntax (like ripgrep), matched line by line. */
  readonly pattern: string;
  /** The file or directory to search; default `cwd`. */
  readonly path?: string | undefined;
  /** Only files whose path (or, without `/`, whose name) matches this glob. */
  readonly glob?: string | undefined;
  /** What to return; default `"files_with_matches"`. */
  readonly output_mode?: "files_with_matches" | "content" | "count" | undefined;
  /** Match case-insensitively. */
  readonly "-i"?: boolean | undefined;
}

type ResolvedGrepCaps = ResolvedCaps<typeof GREP_CAPS>;

/** Checks Grep's caps. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveGrepCaps(
  caps: GrepToolCaps | undefined,
  prefix: string,
  nest?: string,
): ResolvedGrepCaps {
  return resolveCaps(GREP_CAPS, caps, prefix, nest);
}

/**
 * The built-in Grep tool: searches file contents with a regular expression in RE2 syntax
 * (like ripgrep, which Claude Code's Grep runs), in plain TypeScript with no binary to
 * download. Input `{ pattern, path?, glob?, output_mode?, "-i"? }`; concurrency-safe (T16);
 * kind `"builtin"`.
 *
 * Files are found by walking `path` (default `cwd`) as a stream and filtered by `glob`
 * (picomatch syntax; a glob without `/` matches the file name at any depth). Binary files (a
 * NUL byte in the first 8 KiB), files over `maxFileBytes`, `.git`, and `node_modules` (unless
 * `path` or `glob` names it) are skipped; `.gitignore` is not read. Files are searched in
 * path order: each directory's entries sorted by name (code units), a directory's files
 * where `name/` sorts, so the order is the same on every file system. `output_mode`:
 * `"files_with_matches"` (default), `"content"` (`path:line:text`), or `"count"`
 * (`path:count`). At most `maxResults` lines (default 250), with a note when cut; the walk
 * stops there, so memory stays proportional to the caps (and the largest directory), not to
 * the tree (H8). Symlinks are followed only when they lead inside the workspace.
 *
 * The pattern runs on `re2js`, a linear-time engine (RE2 ported to JavaScript): no pattern
 * can backtrack catastrophically. So lookahead, lookbehind and backreferences are not
 * supported; a pattern RE2 rejects is an `is_error` result (code `"invalid_pattern"`) that
 * says what is unsupported and what to do. The search gives the event loop a turn every few
 * milliseconds and checks the call's `signal` there, so timers, servers and other runs keep
 * their pace and an abort stops it promptly (H3); a line too long to search within that
 * slice (long minified lines with a large pattern) goes to a worker thread with a 5 s limit,
 * and lines that could not be searched in time are counted in a note. Plain literal patterns
 * are matched with `String.prototype.includes`.
 *
 * @param options - `cwd`, `additionalDirectories` and the caps of {@link GrepToolCaps}.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function grepTool(options: GrepToolOptions): ToolDefinition<GrepToolInput> {
  const prefix = "grepTool():";
  assertKnownOptions(options, [...WORKSPACE_OPTION_KEYS, ...GREP_CAP_KEYS], prefix);
  return buildGrepTool(resolveWorkspace(options, prefix), resolveGrepCaps(options, prefix));
}

/** Builds the Grep tool on a checked workspace. Internal. */
export function buildGrepTool(
  workspace: Workspace,
  caps: ResolvedGrepCaps,
): ToolDefinition<GrepToolInput> {
  return createToolDefinition({
    name: "Grep",
    description: [
      "Searches file contents inside the working directory with a regular expression in RE2 syntax, like ripgrep (no lookahead, lookbehind or backreferences), line by line.",
      'path narrows the search to a file or directory; glob filters files by name ("*.ts" matches at any depth); "-i": true ignores case.',
      'output_mode: "files_with_matches" (default) lists matching files; "content" shows path:line:text; "count" shows path:count.',
      `Binary files, .git and node_modules are skipped; at most ${caps.maxResults} result lines are returned.`,
    ].join("\n"),
    schema: grepSchema,
    kind: "builtin",
    isConcurrencySafe: () => true,
    handler: (input, context) => grep(workspace, caps, input, context),
  });
}

async function grep(
  workspace: Workspace,
  caps: ResolvedGrepCaps,
  input: GrepToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  throwIfAborted(context.signal, "Grep");
  const pattern = new LinePattern(input.pattern, input["-i"] === true);
  try {
    const mode = input.output_mode ?? "files_with_matches";
    const given = input.path ?? ".";
    const { real: target, workspace: real } = await confinePath(workspace, given, "Grep");
    const globPattern =
      input.glob === undefined ? undefined : relativePattern(input.glob, [target], "Grep");
    const glob = globPattern === undefined ? undefined : compileGlob(globPattern, "Grep");
    // Like ripgrep's --glob: a glob without "/" matches the file name at any depth.
    const byName = globPattern !== undefined && !globPattern.includes("/");
    let files: AsyncIterable<FoundFile> | Iterable<FoundFile>;
    try {
      const info = await stat(target);
      files = info.isDirectory()
        ? walkFiles({
            directory: target,
            workspace: real,
            skip: skippedDirectories(input.path, input.glob),
            order: "path",
            descend: glob === undefined || byName ? undefined : glob.mayContain,
            signal: context.signal,
          })
        : [{ path: target, real: target, relative: "" }];
    } catch (error) {
      throwIfAborted(context.signal, "Grep");
      throw fileSystemError(error, workspace, given, "Grep");
    }
    const named = nameFiles(files, real, glob, byName);
    return await search(named, pattern, mode, caps, context.signal, {
      workspace: real,
      allowHardLinks: workspace.allowHardLinks,
    });
  } finally {
    pattern.close();
  }
}

/** The files that pass `glob`, each with the name a result shows. */
async function* nameFiles(
  files: AsyncIterable<FoundFile> | Iterable<FoundFile>,
  real: RealWorkspace,
  glob: GlobMatcher | undefined,
  byName: boolean,
): AsyncGenerator<FoundFile & { readonly name: string }> {
  for await (const file of files) {
    if (glob !== undefined) {
      const subject = byName || file.relative === "" ? path.basename(file.path) : file.relative;
      if (!glob.matches(subject)) continue;
    }
    yield { ...file, name: displayPath(real, file.path) };
  }
}

async function search(
  files: AsyncIterable<FoundFile & { readonly name: string }>,
  pattern: LinePattern,
  mode: "files_with_matches" | "content" | "count",
  caps: ResolvedGrepCaps,
  signal: AbortSignal,
  access: { readonly workspace: RealWorkspace; readonly allowHardLinks: boolean },
): Promise<ToolHandlerResult> {
  const lines: string[] = [];
  let cut = false;
  let skippedLarge = 0;
  let skippedHardLinks = 0;
  let skippedSpecial = 0;
  for await (const file of files) {
    throwIfAborted(signal, "Grep");
    let buffer: Buffer;
    try {
      // Read through a handle checked inside the workspace (H9): never a FIFO (H11), never a
      // file with several hard links unless allowed (H10).
      const read = await readFileInside(file.real, { ...access, maxBytes: caps.maxFileBytes });
      if (read.status === "skipped") {
        if (read.reason === "too_large") skippedLarge += 1;
        if (read.reason === "hard_link") skippedHardLinks += 1;
        if (read.reason === "special") skippedSpecial += 1;
        continue;
      }
      buffer = read.buffer;
    } catch {
      throwIfAborted(signal, "Grep");
      continue;
    }
    if (buffer.subarray(0, 8192).includes(0)) continue;
    let count = 0;
    for await (const { index, line } of pattern.matchingLines(buffer.toString("utf8"), signal)) {
      count += 1;
      if (mode === "files_with_matches") break;
      if (mode === "content") {
        if (lines.length === caps.maxResults) {
          cut = true;
          break;
        }
        const shown =
          line.length > caps.maxLineLength
            ? `${line.slice(0, caps.maxLineLength)}… [line cut]`
            : line;
        lines.push(`${file.name}:${index + 1}:${shown}`);
      }
    }
    if (cut) break;
    if (count > 0 && mode !== "content") {
      if (lines.length === caps.maxResults) {
        cut = true;
        break;
      }
      lines.push(mode === "count" ? `${file.name}:${count}` : file.name);
    }
  }
  // The walk and the line search stop quietly on abort; say so rather than report no matches.
  throwIfAborted(signal, "Grep");
  const notes: string[] = [];
  if (cut) {
    const what = mode === "content" ? "matching lines" : "files";
    notes.push(
      `[Results cut at ${caps.maxResults} ${what}; there are more. Narrow the search with path, glob or a more specific pattern.]`,
    );
  }
  if (skippedLarge > 0) {
    notes.push(
      `[${skippedLarge} file${skippedLarge === 1 ? " was" : "s were"} larger than ${caps.maxFileBytes} bytes and not searched.]`,
    );
  }
  if (skippedHardLinks > 0) {
    notes.push(
      `[${skippedHardLinks} file${skippedHardLinks === 1 ? " has" : "s have"} more than one hard link and ${skippedHardLinks === 1 ? "was" : "were"} not searched: such a file may be the same as one outside the working directory. Ask the user to enable allowHardLinks to search ${skippedHardLinks === 1 ? "it" : "them"}.]`,
    );
  }
  if (skippedSpecial > 0) {
    notes.push(
      `[${skippedSpecial} file${skippedSpecial === 1 ? " is a FIFO, socket or device" : "s are FIFOs, sockets or devices"} and ${skippedSpecial === 1 ? "was" : "were"} not searched.]`,
    );
  }
  if (pattern.unsearchedLines > 0) {
    const count = pattern.unsearchedLines;
    notes.push(
      `[${count} very long line${count === 1 ? " was" : "s were"} not searched: this pattern could not finish on ${count === 1 ? "it" : "them"} within ${LONG_LINE_TIME_LIMIT_MS / 1000} s. Use a simpler pattern (a literal word, fewer counted repetitions) or narrow the search.]`,
    );
  }
  if (lines.length === 0) return { content: ["No matches found.", ...notes].join("\n") };
  return { content: [...lines, ...notes].join("\n") };
}
