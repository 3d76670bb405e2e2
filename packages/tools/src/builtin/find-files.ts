import type { Dirent } from "node:fs";
import { lstat, realpath, stat } from "node:fs/promises";
import path from "node:path";
import { directoryBatches } from "./directory-batches.js";
import { SmallestItems } from "./smallest-items.js";
import { isInsideRoot, isInsideWorkspace, type RealWorkspace } from "./workspace.js";

/** A file found by {@link walkFiles}. Internal. */
export interface FoundFile {
  /** The file as the walk reached it: absolute, under the search directory (symlinks kept). */
  readonly path: string;
  /** The file's real path, inside the workspace. */
  readonly real: string;
  /** `path` relative to the search directory, `/`-separated. */
  readonly relative: string;
}

/** What {@link walkFiles} needs. Internal. */
export interface WalkFilesOptions {
  /** The directory to search, real and inside the workspace. */
  readonly directory: string;
  /** The workspace's real directories: nothing outside them is entered or returned. */
  readonly workspace: RealWorkspace;
  /** Directories by this name are not entered (see {@link skippedDirectories}). */
  readonly skip: ReadonlySet<string>;
  /**
   * `"path"`: files in path order (each directory's entries sorted by name in code units, a
   * directory's files where its `name/` sorts); `"any"`: the order the file system lists
   * them.
   */
  readonly order: "path" | "any";
  /** Whether to enter a directory (relative path, `/`-separated); default: every one. */
  readonly descend?: ((relativeDirectory: string) => boolean) | undefined;
  /** Stop after reading this many directory entries; default: no limit. */
  readonly maxVisited?: number | undefined;
  /** Stops the walk (quietly: the caller checks the signal after it). */
  readonly signal: AbortSignal;
}

/** A walk in progress: iterate it for the files; read its counters after. Internal. */
export interface FileWalk extends AsyncIterable<FoundFile> {
  /** Directory entries read so far. */
  readonly visited: number;
  /** Whether the walk stopped at `maxVisited` before it was done. */
  readonly stoppedAtLimit: boolean;
}

/** The directory names every search leaves out unless the search names them. */
export function skippedDirectories(...mentions: readonly (string | undefined)[]): Set<string> {
  const skip = new Set([".git"]);
  if (!mentions.some((text) => text?.includes("node_modules"))) skip.add("node_modules");
  return skip;
}

/**
 * How many entries of one directory a path-order walk holds at a time: a larger directory is
 * read in several passes, each keeping the next `PASS_SIZE` names in order (H8).
 */
const PASS_SIZE = 10_000;

interface Entry {
  /** The sort key: the name, with `/` after a directory's. */
  readonly key: string;
  readonly isDirectory: boolean;
  /** For a symlink, its real target (inside the workspace). */
  readonly target?: string | undefined;
}

interface Frame {
  readonly path: string;
  readonly real: string;
  readonly relative: string;
}

function entryName(entry: Entry): string {
  return entry.isDirectory ? entry.key.slice(0, -1) : entry.key;
}

function byKey(a: Entry, b: Entry): number {
  return a.key < b.key ? -1 : a.key > b.key ? 1 : 0;
}

/**
 * Walks a directory tree for its files, streaming, confined to the workspace: memory holds
 * the directories still to visit and, in `"path"` order, at most 10,000 entries of one
 * directory (a larger one is read in several passes), never the list of files. Internal.
 *
 * Every non-directory entry is a file here (FIFOs and sockets included: the caller decides).
 * Symlinks are followed only when their real path lies inside the workspace; a symlinked
 * directory is entered once per walk, and never when it leads back to a directory being
 * walked (a cycle). Entries whose type or target cannot be read are skipped.
 */
export function walkFiles(options: WalkFilesOptions): FileWalk {
  const { directory, workspace, skip, order, descend, signal } = options;
  const maxVisited = options.maxVisited ?? Number.POSITIVE_INFINITY;
  const linkedDirectories = new Set<string>();
  let visited = 0;
  let stoppedAtLimit = false;

  /** An entry whose type the directory listing gave: no system call needed. */
  const plain = (dirent: Dirent): Entry | undefined => {
    const isDirectory = dirent.isDirectory();
    if (isDirectory && skip.has(dirent.name)) return undefined;
    return { key: isDirectory ? `${dirent.name}/` : dirent.name, isDirectory };
  };

  /** Reads an entry's kind, following a symlink that stays inside; undefined to skip it. */
  const resolve = async (parent: Frame, dirent: Dirent): Promise<Entry | undefined> => {
    const name = dirent.name;
    let isDirectory = dirent.isDirectory();
    let isLink = dirent.isSymbolicLink();
    if (!isDirectory && !isLink && !dirent.isFile() && isUnknown(dirent)) {
      try {
        const info = await lstat(path.join(parent.real, name));
        isDirectory = info.isDirectory();
        isLink = info.isSymbolicLink();
      } catch {
        return undefined;
      }
    }
    let target: string | undefined;
    if (isLink) {
      try {
        target = await realpath(path.join(parent.real, name));
        if (!isInsideWorkspace(target, workspace)) return undefined;
        isDirectory = (await stat(target)).isDirectory();
      } catch {
        return undefined;
      }
      // A cycle: the link leads to this directory or above it.
      if (isDirectory && isInsideRoot(parent.real, target)) return undefined;
    }
    if (isDirectory && skip.has(name)) return undefined;
    return { key: isDirectory ? `${name}/` : name, isDirectory, target };
  };

  const child = (parent: Frame, entry: Entry): Frame => {
    const name = entryName(entry);
    return {
      path: path.join(parent.path, name),
      real: entry.target ?? path.join(parent.real, name),
      relative: parent.relative === "" ? name : `${parent.relative}/${name}`,
    };
  };

  /** Whether to enter a directory; a linked one only once per walk (a maze of links). */
  const enter = (next: Frame, entry: Entry): boolean => {
    if (entry.target !== undefined) {
      if (linkedDirectories.has(entry.target)) return false;
      linkedDirectories.add(entry.target);
    }
    return descend === undefined || descend(next.relative);
  };

  /**
   * Reads one directory's entries in batches of at most 2,048, counting them; stops early at
   * the limit or on abort. A directory that cannot be read is skipped, as before.
   */
  async function* batches(frame: Frame): AsyncGenerator<Entry[]> {
    try {
      for await (const dirents of directoryBatches(frame.real, workspace)) {
        const batch: Entry[] = [];
        for (const dirent of dirents) {
          if (signal.aborted) return;
          if (visited >= maxVisited) {
            stoppedAtLimit = true;
            break;
          }
          visited += 1;
          const entry =
            dirent.isFile() || dirent.isDirectory() ? plain(dirent) : await resolve(frame, dirent);
          if (entry !== undefined) batch.push(entry);
        }
        yield batch;
        if (stoppedAtLimit) return;
      }
    } catch {
      // Unreadable (removed, permission): skipped.
    }
  }

  const root: Frame = { path: directory, real: directory, relative: "" };

  async function* inAnyOrder(): AsyncGenerator<FoundFile> {
    const pending: Frame[] = [root];
    for (let frame = pending.pop(); frame !== undefined; frame = pending.pop()) {
      for await (const batch of batches(frame)) {
        for (const entry of batch) {
          const next = child(frame, entry);
          if (!entry.isDirectory) yield next;
          else if (enter(next, entry)) pending.push(next);
        }
      }
      if (signal.aborted || stoppedAtLimit) return;
    }
  }

  interface Pass {
    readonly frame: Frame;
    readonly list: Entry[];
    next: number;
    /** Whether this pass holds the directory's last entries. */
    readonly last: boolean;
  }

  /** The next (at most) PASS_SIZE entries of a directory after `after`, sorted. */
  const readPass = async (frame: Frame, after: string | undefined): Promise<Pass> => {
    const first = new SmallestItems<Entry>(PASS_SIZE, byKey);
    for await (const batch of batches(frame)) {
      for (const entry of batch) {
        if (after === undefined || entry.key > after) first.offer(entry);
      }
    }
    return { frame, list: first.sorted(), next: 0, last: first.offered <= PASS_SIZE };
  };

  async function* inPathOrder(): AsyncGenerator<FoundFile> {
    const stack = [await readPass(root, undefined)];
    while (stack.length > 0) {
      if (signal.aborted || stoppedAtLimit) return;
      const top = stack[stack.length - 1]!;
      const entry = top.list[top.next];
      if (entry === undefined) {
        const previous = top.list[top.list.length - 1];
        stack.pop();
        if (!top.last && previous !== undefined)
          stack.push(await readPass(top.frame, previous.key));
        continue;
      }
      top.next += 1;
      const next = child(top.frame, entry);
      if (!entry.isDirectory) yield next;
      else if (enter(next, entry)) stack.push(await readPass(next, undefined));
    }
  }

  return {
    [Symbol.asyncIterator]: () => (order === "path" ? inPathOrder() : inAnyOrder()),
    get visited() {
      return visited;
    },
    get stoppedAtLimit() {
      return stoppedAtLimit;
    },
  };
}

/** Whether a directory entry's type is unknown (some file systems do not report it). */
function isUnknown(dirent: Dirent): boolean {
  return !(
    dirent.isFIFO() ||
    dirent.isSocket() ||
    dirent.isCharacterDevice() ||
    dirent.isBlockDevice()
  );
}
