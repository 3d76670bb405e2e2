import { readFile, stat } from "node:fs/promises";
import path from "node:path";
import picomatch from "picomatch";
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
import { defaultIgnores, type FoundFile, findFiles } from "./find-files.js";
import { relativePattern } from "./glob-tool.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  confinePath,
  displayPath,
  resolveWorkspace,
  throwIfAborted,
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
      'A JavaScript regular expression to search file contents for, matched line by line (for example "function\\s+\\w+" or "TODO").',
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
  /** A JavaScript regular expression, matched line by line. */
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
 * The built-in Grep tool: searches file contents with a JavaScript regular expression, in
 * plain TypeScript (no ripgrep binary to download). Input `{ pattern, path?, glob?,
 * output_mode?, "-i"? }`; concurrency-safe (T16); kind `"builtin"`.
 *
 * Files are found with tinyglobby under `path` (default `cwd`) and filtered with picomatch
 * by `glob` (a glob without `/` matches the file name at any depth). Binary files (a NUL
 * byte in the first 8 KiB), files over `maxFileBytes`, `.git`, and `node_modules` (unless
 * `path` or `glob` names it) are skipped; `.gitignore` is not read. Files are searched in
 * path order. `output_mode`: `"files_with_matches"` (default), `"content"` (`path:line:text`),
 * or `"count"` (`path:count`). At most `maxResults` lines (default 250), with a note when
 * cut. Symlinks are followed only when they lead inside the workspace.
 *
 * The pattern is compiled with the `u` flag when it is valid so, else without; a pattern that
 * is not a valid regular expression is an `is_error` result. The search runs on the main
 * thread and checks the call's `signal` between files, so one pathological (catastrophically
 * backtracking) pattern on a large file can hold the event loop until that file is done.
 *
 * @param options - `cwd`, `additionalDirectories` and the caps of {@link GrepToolCaps}.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function grepTool(options: GrepToolOptions): ToolDefinition<GrepToolInput> {
  const prefix = "grepTool():";
  assertKnownOptions(options, ["cwd", "additionalDirectories", ...GREP_CAP_KEYS], prefix);
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
      "Searches file contents inside the working directory with a JavaScript regular expression, line by line.",
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
  const regex = compile(input.pattern, input["-i"] === true);
  const mode = input.output_mode ?? "files_with_matches";
  const given = input.path ?? ".";
  const { real: target, workspace: real } = await confinePath(workspace, given, "Grep");
  let files: FoundFile[];
  try {
    const info = await stat(target);
    files = info.isDirectory()
      ? await findFiles({
          directory: target,
          patterns: ["**/*"],
          ignore: defaultIgnores(input.path, input.glob),
          workspace: real,
          signal: context.signal,
        })
      : [{ path: target, real: target }];
  } catch (error) {
    throwIfAborted(context.signal, "Grep");
    throw fileSystemError(error, workspace, given, "Grep");
  }
  // The crawl stops quietly on abort; say so rather than report no matches.
  throwIfAborted(context.signal, "Grep");
  if (input.glob !== undefined) {
    const globPattern = relativePattern(input.glob, [target], "Grep");
    const matches = picomatch(globPattern, { dot: true });
    // Like ripgrep's --glob: a glob without "/" matches the file name at any depth.
    const byName = !globPattern.includes("/");
    files = files.filter((file) => {
      const relative = path.relative(target, file.path).split(path.sep).join("/");
      return matches(byName || relative === "" ? path.basename(file.path) : relative);
    });
  }
  const named = files
    .map((file) => ({ ...file, name: displayPath(real, file.path) }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return search(named, regex, mode, caps, context.signal);
}

function compile(pattern: string, ignoreCase: boolean): RegExp {
  const flags = ignoreCase ? "i" : "";
  try {
    return new RegExp(pattern, `${flags}u`);
  } catch {
    try {
      return new RegExp(pattern, flags);
    } catch (error) {
      throw new BuiltinToolError(
        "invalid_pattern",
        `Grep: ${JSON.stringify(pattern)} is not a valid JavaScript regular expression (${(error as Error).message}). Escape special characters such as ( [ { . * + ? with a backslash and call Grep again.`,
      );
    }
  }
}

async function search(
  files: readonly (FoundFile & { readonly name: string })[],
  regex: RegExp,
  mode: "files_with_matches" | "content" | "count",
  caps: ResolvedGrepCaps,
  signal: AbortSignal,
): Promise<ToolHandlerResult> {
  const lines: string[] = [];
  let cut = false;
  let skippedLarge = 0;
  for (const file of files) {
    throwIfAborted(signal, "Grep");
    let buffer: Buffer;
    try {
      const info = await stat(file.real);
      if (!info.isFile()) continue;
      if (info.size > caps.maxFileBytes) {
        skippedLarge += 1;
        continue;
      }
      buffer = await readFile(file.real, { signal });
    } catch {
      throwIfAborted(signal, "Grep");
      continue;
    }
    if (buffer.subarray(0, 8192).includes(0)) continue;
    const text = buffer.toString("utf8").split(/\r?\n/);
    if (text.length > 0 && text[text.length - 1] === "") text.pop();
    let count = 0;
    for (let index = 0; index < text.length; index++) {
      const line = text[index]!;
      if (!regex.test(line)) continue;
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
  if (lines.length === 0) return { content: ["No matches found.", ...notes].join("\n") };
  return { content: [...lines, ...notes].join("\n") };
}
