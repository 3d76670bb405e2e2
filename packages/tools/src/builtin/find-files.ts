import { realpath } from "node:fs";
import { realpath as realpathAsync } from "node:fs/promises";
import path from "node:path";
import { type FileSystemAdapter, glob } from "tinyglobby";
import { isInsideWorkspace, type RealWorkspace } from "./workspace.js";

/** A file found by {@link findFiles}. Internal. */
export interface FoundFile {
  /** The file as the crawl reached it: absolute, under the search directory (symlinks kept). */
  readonly path: string;
  /** The file's real path, inside the workspace. */
  readonly real: string;
}

/** What {@link findFiles} needs. Internal. */
export interface FindFilesOptions {
  /** The directory to search, real and inside the workspace. */
  readonly directory: string;
  /** Glob patterns relative to `directory`. */
  readonly patterns: readonly string[];
  /** Glob patterns to leave out (directories under them are not crawled). */
  readonly ignore: readonly string[];
  /** The workspace's real directories: nothing outside them is crawled or returned. */
  readonly workspace: RealWorkspace;
  /** Stops the crawl. */
  readonly signal: AbortSignal;
}

/**
 * Finds files with tinyglobby, confined to the workspace.
 *
 * Symlinks are followed only when they lead inside the workspace: the crawler's `realpath`
 * refuses every target outside, so a symlinked directory that leads out is never entered and
 * a symlinked file that leads out is never listed. Every result is checked again by its real
 * path before it is returned. Dot files are included; `ignore` leaves out the rest.
 */
export async function findFiles(options: FindFilesOptions): Promise<FoundFile[]> {
  const { directory, patterns, ignore, workspace, signal } = options;
  const confinedRealpath = ((target: string, callback: RealpathCallback) => {
    realpath(target, (error, resolved) => {
      if (error) return callback(error, "");
      if (!isInsideWorkspace(resolved, workspace)) {
        const refused = Object.assign(new Error("outside the workspace"), { code: "EACCES" });
        return callback(refused, "");
      }
      callback(null, resolved);
    });
  }) as FileSystemAdapter["realpath"];
  const paths = await glob([...patterns], {
    cwd: directory,
    absolute: true,
    dot: true,
    followSymbolicLinks: true,
    expandDirectories: false,
    onlyFiles: true,
    ignore: [...ignore],
    signal,
    fs: { realpath: confinedRealpath },
  });
  const found: FoundFile[] = [];
  for (const file of paths) {
    const absolute = path.resolve(file);
    let real: string;
    try {
      real = await realpathAsync(absolute);
    } catch {
      continue;
    }
    if (isInsideWorkspace(real, workspace)) found.push({ path: absolute, real });
  }
  return found;
}

type RealpathCallback = (error: NodeJS.ErrnoException | null, resolved: string) => void;

/** The directories every search leaves out unless the search names them. */
export function defaultIgnores(...mentions: readonly (string | undefined)[]): string[] {
  const ignore = ["**/.git/**"];
  if (!mentions.some((text) => text?.includes("node_modules"))) ignore.push("**/node_modules/**");
  return ignore;
}
