import { statSync } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import path from "node:path";
import { InvalidOptionError } from "../index.js";
import { describeValue } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";

/**
 * Where a built-in tool may reach: the working directory and any additional directories.
 * Every tool factory takes these two options.
 */
export interface WorkspaceOptions {
  /**
   * The working directory: relative paths resolve against it, and every path a file tool
   * touches must stay inside it (or inside one of `additionalDirectories`). Must exist and be
   * a directory; a relative `cwd` resolves against `process.cwd()`.
   */
  readonly cwd: string;
  /** More directories the file tools may reach, besides `cwd`. Each must exist. Default none. */
  readonly additionalDirectories?: readonly string[] | undefined;
  /**
   * Let Read, Grep and Edit open files that have more than one hard link. Default `false`.
   *
   * A hard link inside the workspace may be the very file of a path outside it, so by default
   * Read refuses such a file (saying so), Edit refuses to read it, and Grep skips it (with a
   * note). Write and Edit never write through a hard link whatever this option says: they
   * replace the file, so the other names keep the old content. Package managers that
   * hard-link files (pnpm's `node_modules`) need this option for those files to be read.
   */
  readonly allowHardLinks?: boolean | undefined;
}

/** The keys of {@link WorkspaceOptions}, for every tool factory's strict option check. */
export const WORKSPACE_OPTION_KEYS: readonly string[] = [
  "cwd",
  "additionalDirectories",
  "allowHardLinks",
];

/** The checked, absolute form of {@link WorkspaceOptions}. Internal. */
export interface Workspace {
  /** `cwd`, absolute, as configured (not resolved through symlinks). */
  readonly cwd: string;
  /** `cwd` then every additional directory, absolute, as configured. */
  readonly directories: readonly string[];
  /** Whether files with more than one hard link may be read (`allowHardLinks`). */
  readonly allowHardLinks: boolean;
}

/** The workspace's directories resolved through symlinks, at the time of one call. Internal. */
export interface RealWorkspace {
  /** The real path of `cwd`. */
  readonly cwd: string;
  /** The real paths of `cwd` and every additional directory. */
  readonly roots: readonly string[];
}

/**
 * Checks the workspace options at definition time: `cwd` and each additional directory must
 * be a string naming an existing directory, `allowHardLinks` a boolean (default `false`).
 *
 * @throws {@link InvalidOptionError} naming the option and what to pass instead.
 */
export function resolveWorkspace(options: WorkspaceOptions, prefix: string): Workspace {
  const cwd = checkDirectory(options.cwd, prefix, "cwd");
  const extra = options.additionalDirectories;
  if (extra !== undefined && !Array.isArray(extra)) {
    throw new InvalidOptionError(
      prefix,
      "additionalDirectories",
      `must be an array of directory paths, received ${describeValue(extra)}.`,
    );
  }
  const directories = [cwd];
  (extra ?? []).forEach((directory: unknown, index: number) => {
    directories.push(checkDirectory(directory, prefix, `additionalDirectories[${index}]`));
  });
  const allowHardLinks = options.allowHardLinks ?? false;
  if (typeof allowHardLinks !== "boolean") {
    throw new InvalidOptionError(
      prefix,
      "allowHardLinks",
      `must be true or false, received ${describeValue(allowHardLinks)}. Omit it for the default (false).`,
    );
  }
  return { cwd, directories, allowHardLinks };
}

function checkDirectory(value: unknown, prefix: string, option: string): string {
  if (typeof value !== "string" || value === "") {
    throw new InvalidOptionError(
      prefix,
      option,
      `must be a non-empty directory path, received ${describeValue(value)}.`,
    );
  }
  const absolute = path.resolve(value);
  let isDirectory: boolean;
  try {
    isDirectory = statSync(absolute).isDirectory();
  } catch {
    throw new InvalidOptionError(
      prefix,
      option,
      `is ${JSON.stringify(value)}, which does not exist. Pass an existing directory (create it first).`,
    );
  }
  if (!isDirectory) {
    throw new InvalidOptionError(
      prefix,
      option,
      `is ${JSON.stringify(value)}, which is not a directory. Pass the directory the tools should work in.`,
    );
  }
  return absolute;
}

/**
 * Resolves the workspace's directories through symlinks. Done on every call, so a workspace
 * that was moved or deleted after the tools were made fails with a clear message.
 */
export async function realWorkspace(workspace: Workspace): Promise<RealWorkspace> {
  const roots: string[] = [];
  for (const directory of workspace.directories) {
    try {
      roots.push(await realpath(directory));
    } catch (error) {
      throw new BuiltinToolError(
        "file_system_error",
        `The directory ${directory} that the tools work in is no longer reachable (${errorCode(error)}). Ask the user to check it.`,
        { cause: error },
      );
    }
  }
  return { cwd: roots[0]!, roots };
}

/** Whether `candidate` (a real, absolute path) is `root` or lies below it. */
export function isInsideRoot(candidate: string, root: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(path.sep) ? root : root + path.sep;
  return candidate.startsWith(prefix);
}

/** Whether `candidate` (a real, absolute path) lies inside one of the workspace's roots. */
export function isInsideWorkspace(candidate: string, real: RealWorkspace): boolean {
  return real.roots.some((root) => isInsideRoot(candidate, root));
}

/** The outcome of {@link confinePath}. Internal. */
export interface ConfinedPath {
  /** The path the tool must operate on: absolute, every existing part resolved through symlinks. */
  readonly real: string;
  /** The workspace's real directories at the time of the call. */
  readonly workspace: RealWorkspace;
}

/**
 * Resolves a path the model gave and refuses it unless it stays inside the workspace.
 *
 * Relative paths resolve against `cwd`; absolute paths are accepted when they lead inside.
 * Every existing part of the path is resolved through symlinks (`fs.realpath`); for a path
 * that does not exist yet, its nearest existing ancestor is, and a dangling symlink is
 * followed to where it points (so Write cannot create a file through it outside). The check
 * happens before the path's existence is reported, so the error for an outside path never
 * says whether that path exists, and nothing outside is ever read. Callers must operate on
 * the returned `real` path, never on the path as given, and must not trust it either: this is
 * the cheap first check. They open it with `openConfined` (reads) or `replaceFile` (writes),
 * which check the opened handle again, so a symlink swapped in meanwhile cannot redirect them.
 *
 * @throws {@link BuiltinToolError} `"path_outside_working_directory"` naming the path as the
 *   model gave it.
 */
export async function confinePath(
  workspace: Workspace,
  givenPath: string,
  toolName: string,
): Promise<ConfinedPath> {
  const real = await realWorkspace(workspace);
  const absolute = path.resolve(real.cwd, givenPath);
  let resolved: string;
  try {
    resolved = await resolveThroughSymlinks(absolute, 0);
  } catch (error) {
    if (error instanceof BuiltinToolError) throw error;
    throw new BuiltinToolError(
      "file_system_error",
      `${toolName} cannot resolve the path ${JSON.stringify(givenPath)} (${errorCode(error)}).`,
      { cause: error },
    );
  }
  if (!isInsideWorkspace(resolved, real)) throw outsideError(workspace, givenPath, toolName);
  return { real: resolved, workspace: real };
}

/** The error for a path that leads outside the workspace; it names only the path as given. */
export function outsideError(
  workspace: Workspace,
  givenPath: string,
  toolName: string,
): BuiltinToolError {
  const where =
    workspace.directories.length === 1
      ? `the working directory ${workspace.cwd}`
      : `the working directory ${workspace.cwd} and the allowed directories ${workspace.directories.slice(1).join(", ")}`;
  return new BuiltinToolError(
    "path_outside_working_directory",
    `${toolName} refused the path ${JSON.stringify(givenPath)}: it is outside the working directory (after resolving "..", absolute paths and symlinks). ${toolName} can only reach ${where}. Use a path inside it.`,
  );
}

const MAX_SYMLINK_DEPTH = 40;

/** `realpath`, extended to paths that do not exist yet and to dangling symlinks. */
async function resolveThroughSymlinks(absolute: string, depth: number): Promise<string> {
  if (depth > MAX_SYMLINK_DEPTH) {
    throw new BuiltinToolError(
      "file_system_error",
      `Too many levels of symbolic links while resolving ${absolute}.`,
    );
  }
  try {
    return await realpath(absolute);
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const parent = path.dirname(absolute);
  if (parent === absolute) return absolute;
  const realParent = await resolveThroughSymlinks(parent, depth);
  const candidate = path.join(realParent, path.basename(absolute));
  let isSymlink = false;
  try {
    isSymlink = (await lstat(candidate)).isSymbolicLink();
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  if (!isSymlink) return candidate;
  const target = await readlink(candidate);
  return resolveThroughSymlinks(path.resolve(realParent, target), depth + 1);
}

/** Whether a file-system error means "no such file" (including a file used as a directory). */
export function isMissing(error: unknown): boolean {
  const code = errorCode(error);
  return code === "ENOENT" || code === "ENOTDIR";
}

/** The `code` of a Node file-system error, or `"unknown error"`. */
export function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "unknown error";
}

/**
 * How a result names a real path: relative to the real `cwd` when inside it, else absolute
 * (a path inside an additional directory).
 */
export function displayPath(real: RealWorkspace, realPath: string): string {
  if (isInsideRoot(realPath, real.cwd)) {
    const relative = path.relative(real.cwd, realPath);
    return relative === "" ? "." : relative.split(path.sep).join("/");
  }
  return realPath;
}

/** Throws a `BuiltinToolError` with code `"aborted"` when the call's signal has fired. */
export function throwIfAborted(signal: AbortSignal, toolName: string): void {
  if (signal.aborted) {
    throw new BuiltinToolError("aborted", `${toolName} was cancelled before it finished.`);
  }
}
