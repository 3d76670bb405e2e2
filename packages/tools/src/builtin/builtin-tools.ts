import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from "../builtin-tool-names.js";
import { type AnyToolDefinition, InvalidOptionError } from "../index.js";
import { assertKnownOptions, describeValue } from "../internal.js";
import { BASH_CAP_KEYS, type BashToolCaps, buildBashTool, resolveBashCaps } from "./bash-tool.js";
import { buildEditTool } from "./edit-tool.js";
import { buildGlobTool, GLOB_CAP_KEYS, type GlobToolCaps, resolveGlobCaps } from "./glob-tool.js";
import { buildGrepTool, GREP_CAP_KEYS, type GrepToolCaps, resolveGrepCaps } from "./grep-tool.js";
import { buildLsTool, LS_CAP_KEYS, type LsToolCaps, resolveLsCaps } from "./ls-tool.js";
import { buildReadTool, READ_CAP_KEYS, type ReadToolCaps, resolveReadCaps } from "./read-tool.js";
import { assertKnownNestedOptions } from "./tool-options.js";
import {
  buildWebFetchTool,
  resolveWebFetchOptions,
  WEB_FETCH_OPTION_KEYS,
  type WebFetchToolOptions,
} from "./web-fetch-tool.js";
import { resolveWorkspace, WORKSPACE_OPTION_KEYS, type WorkspaceOptions } from "./workspace.js";
import { buildWriteTool } from "./write-tool.js";

/**
 * Options of {@link builtinTools}. Checked strictly: an unknown key, at the top or inside
 * `read`, `ls`, `glob`, `grep` or `bash`, throws.
 */
export interface BuiltinToolsOptions extends WorkspaceOptions {
  /**
   * The tools wanted, for example `["Read", "Grep"]`. None is on by default: Write, Edit and
   * Bash in particular exist only when named here.
   */
  readonly tools: readonly BuiltinToolName[];
  /** Caps of the Read tool. */
  readonly read?: ReadToolCaps | undefined;
  /** Caps of the LS tool. */
  readonly ls?: LsToolCaps | undefined;
  /** Caps of the Glob tool. */
  readonly glob?: GlobToolCaps | undefined;
  /** Caps of the Grep tool. */
  readonly grep?: GrepToolCaps | undefined;
  /** Timeout and output cap of the Bash tool. */
  readonly bash?: BashToolCaps | undefined;
  /** Caps and the network the WebFetch tool may reach (`allowHosts`, `allowPrivateNetwork`). */
  readonly webFetch?: WebFetchToolOptions | undefined;
}

const OPTION_KEYS = [
  "tools",
  ...WORKSPACE_OPTION_KEYS,
  "read",
  "ls",
  "glob",
  "grep",
  "bash",
  "webFetch",
];

const ALLOWED = BUILTIN_TOOL_NAMES.join(", ");

/**
 * Makes the built-in tools named in `tools`, confined to `cwd` (and `additionalDirectories`):
 * what `createAgent({ builtinTools, cwd })` calls. Node-only (`@lattice/tools/builtin`).
 *
 * Every file tool resolves each path it is given (relative to `cwd`, or absolute) through
 * symlinks with `fs.realpath` (for a path that does not exist yet, through its nearest
 * existing ancestor) and refuses it unless the result lies inside the real path of `cwd` or
 * of an additional directory. So `..`, absolute paths outside, and symlinks that lead out
 * are refused with an `is_error` result that names the path as the model gave it and never
 * reads or shows the outside file; a symlink from one place inside to another is fine.
 * The check is repeated on the opened handle (its real path, through `/proc/self/fd` on
 * Linux), and every read and write goes through that handle, so a symlink swapped in by
 * another process between the check and the use cannot redirect it (H9). Write and Edit
 * replace files atomically, so a hard link is never written through; Read, Grep and Edit
 * refuse files with more than one hard link unless `allowHardLinks` is `true` (H10). A
 * FIFO, socket or device is refused and never blocks a call (H11). This confinement covers
 * the file tools only: **Bash is not a sandbox** (see {@link bashTool}).
 *
 * Every tool has `kind: "builtin"` (T23). Read, LS, Glob and Grep are concurrency-safe
 * (`isConcurrencySafe: () => true`); Write, Edit and Bash declare no rule, so they always run
 * alone (T15, T16). Tools are returned in the order named.
 *
 * @example
 * ```ts
 * import { builtinTools } from "@lattice/tools/builtin";
 *
 * const tools = builtinTools({ tools: ["Read", "Grep", "Glob"], cwd: process.cwd() });
 * ```
 *
 * @param options - {@link BuiltinToolsOptions}.
 * @returns One frozen tool definition per name in `tools`.
 * @throws `UnknownOptionError` for an unknown key (prefix `builtinTools():`, nested keys
 *   dotted as `read.maxLines`).
 * @throws `InvalidOptionError` when `tools` is not an array of known, distinct names
 *   (the message lists the allowed ones), when `cwd` or an additional directory is not an
 *   existing directory, when `allowHardLinks` is not a boolean, or when a cap is not a
 *   positive integer.
 */
export function builtinTools(options: BuiltinToolsOptions): AnyToolDefinition[] {
  const prefix = "builtinTools():";
  assertKnownOptions(options, OPTION_KEYS, prefix);
  if (options === undefined) {
    throw new InvalidOptionError(
      prefix,
      "options",
      `are required: pass { tools, cwd }, for example { tools: ["Read", "Grep"], cwd: process.cwd() }.`,
    );
  }
  const names = checkToolNames(options.tools, prefix);
  const workspace = resolveWorkspace(options, prefix);
  assertKnownNestedOptions(options.read, READ_CAP_KEYS, prefix, "read");
  assertKnownNestedOptions(options.ls, LS_CAP_KEYS, prefix, "ls");
  assertKnownNestedOptions(options.glob, GLOB_CAP_KEYS, prefix, "glob");
  assertKnownNestedOptions(options.grep, GREP_CAP_KEYS, prefix, "grep");
  assertKnownNestedOptions(options.bash, BASH_CAP_KEYS, prefix, "bash");
  assertKnownNestedOptions(options.webFetch, WEB_FETCH_OPTION_KEYS, prefix, "webFetch");
  const readCaps = resolveReadCaps(options.read, prefix, "read");
  const lsCaps = resolveLsCaps(options.ls, prefix, "ls");
  const globCaps = resolveGlobCaps(options.glob, prefix, "glob");
  const grepCaps = resolveGrepCaps(options.grep, prefix, "grep");
  const bashCaps = resolveBashCaps(options.bash, prefix, "bash");
  const webFetchOptions = resolveWebFetchOptions(options.webFetch, prefix, "webFetch");
  const build: Record<BuiltinToolName, () => AnyToolDefinition> = {
    Read: () => buildReadTool(workspace, readCaps),
    LS: () => buildLsTool(workspace, lsCaps),
    Glob: () => buildGlobTool(workspace, globCaps),
    Grep: () => buildGrepTool(workspace, grepCaps),
    Write: () => buildWriteTool(workspace),
    Edit: () => buildEditTool(workspace),
    Bash: () => buildBashTool(workspace, bashCaps),
    WebFetch: () => buildWebFetchTool(webFetchOptions),
  };
  return names.map((name) => build[name]());
}

function checkToolNames(tools: unknown, prefix: string): BuiltinToolName[] {
  if (!Array.isArray(tools)) {
    throw new InvalidOptionError(
      prefix,
      "tools",
      `must be an array of built-in tool names, received ${describeValue(tools)}. Allowed names: ${ALLOWED}.`,
    );
  }
  const seen = new Set<string>();
  for (const name of tools as unknown[]) {
    if (typeof name !== "string" || !(BUILTIN_TOOL_NAMES as readonly string[]).includes(name)) {
      const hint =
        typeof name === "string"
          ? BUILTIN_TOOL_NAMES.find((known) => known.toLowerCase() === name.toLowerCase())
          : undefined;
      throw new InvalidOptionError(
        prefix,
        "tools",
        `contains ${describeValue(name)}, which is not a built-in tool.${hint !== undefined ? ` Did you mean "${hint}"?` : ""} Allowed names: ${ALLOWED}.`,
      );
    }
    if (seen.has(name)) {
      throw new InvalidOptionError(
        prefix,
        "tools",
        `names "${name}" twice. List each built-in tool once.`,
      );
    }
    seen.add(name);
  }
  return tools as BuiltinToolName[];
}
