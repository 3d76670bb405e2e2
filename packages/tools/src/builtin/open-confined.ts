import { constants, existsSync, type Stats } from "node:fs";
import { type FileHandle, lstat, open, readlink, realpath } from "node:fs/promises";
import { BuiltinToolError } from "./builtin-tool-error.js";
import {
  confinePath,
  errorCode,
  isInsideWorkspace,
  isMissing,
  outsideError,
  type RealWorkspace,
  type Workspace,
} from "./workspace.js";

/**
 * Flags for opening a file or directory to read it: never through a symlink in the last
 * component, never blocking (a FIFO opens at once instead of waiting for a writer), never
 * becoming the controlling terminal.
 */
const READ_FLAGS =
  constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK | constants.O_NOCTTY;

/** How many times {@link openConfined} resolves again when a symlink was swapped in. */
const MAX_ATTEMPTS = 3;

let procFileDescriptors: boolean | undefined;

/**
 * Whether `/proc/self/fd` can name an open handle's real path (Linux with `/proc` mounted).
 * Checked once per process.
 */
export function hasProcFileDescriptors(): boolean {
  procFileDescriptors ??= process.platform === "linux" && existsSync("/proc/self/fd");
  return procFileDescriptors;
}

/**
 * The real path of an open handle: `readlink("/proc/self/fd/<fd>")` on Linux, which names the
 * file the handle really is, whatever happened to the path since. Elsewhere (or without
 * `/proc`) it falls back to `realpath(openedPath)`, which names what the path leads to now
 * and so only narrows the race it closes on Linux. Internal.
 */
export async function handleRealPath(handle: FileHandle, openedPath: string): Promise<string> {
  if (hasProcFileDescriptors()) return readlink(`/proc/self/fd/${handle.fd}`);
  return realpath(openedPath);
}

/**
 * The path through which to reach entries of an open directory without resolving its path
 * again: `/proc/self/fd/<fd>` on Linux (the kernel goes straight to the directory the handle
 * is, like `openat`), else the directory's checked real path. Internal.
 */
export function directoryPrefix(handle: FileHandle, realPath: string): string {
  return hasProcFileDescriptors() ? `/proc/self/fd/${handle.fd}` : realPath;
}

/**
 * What a file that is neither a regular file nor a directory is ("a FIFO (named pipe)", "a
 * socket", ...), or `undefined` for a regular file, a directory or a symlink.
 */
export function specialFileKind(stats: Stats): string | undefined {
  if (stats.isFIFO()) return "a FIFO (named pipe)";
  if (stats.isSocket()) return "a socket";
  if (stats.isCharacterDevice()) return "a character device";
  if (stats.isBlockDevice()) return "a block device";
  if (stats.isFile() || stats.isDirectory() || stats.isSymbolicLink()) return undefined;
  return "not a regular file";
}

/** The error for a FIFO, socket or device: what it is, and that it was not read. */
export function specialFileError(given: string, toolName: string, kind: string): BuiltinToolError {
  return new BuiltinToolError(
    "not_a_file",
    `${toolName}: ${JSON.stringify(given)} is ${kind}, not a regular file, so it was not read. ${toolName} works on regular files only.`,
  );
}

/** The error for a file with more than one hard link, when `allowHardLinks` is off. */
export function hardLinkError(given: string, toolName: string, links: number): BuiltinToolError {
  return new BuiltinToolError(
    "hard_link",
    `${toolName} refused ${JSON.stringify(given)}: it has ${links} hard links, so it may be the same file as one outside the working directory, and ${toolName} does not read such files. Ask the user to enable allowHardLinks, or to copy the file (a copy has one link).`,
  );
}

/** The error for a path that became a symlink each time it was opened. */
function changedError(given: string, toolName: string): BuiltinToolError {
  return new BuiltinToolError(
    "file_changed",
    `${toolName}: ${JSON.stringify(given)} kept being replaced by a symbolic link while ${toolName} opened it, so it was not opened. Call ${toolName} again once it has settled.`,
  );
}

/** A file or directory opened by {@link openConfined}, checked through its handle. Internal. */
export interface ConfinedFile {
  /** The open handle; the caller closes it. Every read goes through it. */
  readonly handle: FileHandle;
  /** `fstat` of the handle: a regular file or a directory. */
  readonly stats: Stats;
  /** The path that was opened: absolute, resolved through symlinks by {@link confinePath}. */
  readonly path: string;
  /** The handle's real path (see {@link handleRealPath}), inside the workspace. */
  readonly real: string;
  /** The workspace's real directories at the time of the call. */
  readonly workspace: RealWorkspace;
}

/** Options of {@link openConfined}. Internal. */
export interface OpenConfinedOptions {
  /** Open a regular file with more than one hard link (else `"hard_link"` is thrown). */
  readonly allowHardLinks: boolean;
}

/**
 * Resolves a path the model gave and opens it for reading in one step, so that no symlink
 * swapped in between the check and the use can redirect the read.
 *
 * {@link confinePath} first gives the cheap check and its messages (an outside path is
 * refused without saying whether it exists). Then the resolved path is opened with
 * `O_NOFOLLOW | O_NONBLOCK` (a symlink swapped into the last component fails the open; a FIFO
 * opens at once instead of blocking); the handle is `fstat`ed (a FIFO, socket or device is
 * closed unread and refused) and its real path, read through `/proc/self/fd` on Linux, must
 * lie inside the workspace: that also catches a directory higher up swapped for a symlink.
 * One `open`, then `fstat` and `readlink` side by side. A path that became a symlink is
 * resolved again, at most three times.
 *
 * @returns The open handle; the caller reads through it and closes it.
 * @throws {@link BuiltinToolError} `"path_outside_working_directory"` (the same message
 *   whether or not the outside file exists), `"not_a_file"` for a FIFO, socket or device,
 *   `"hard_link"` for a regular file with more than one link unless `allowHardLinks`,
 *   `"file_changed"` when the path kept turning into a symlink. Other file-system errors
 *   (`ENOENT`, `EACCES`) are thrown as they are, for {@link fileSystemError}.
 */
export async function openConfined(
  workspace: Workspace,
  given: string,
  toolName: string,
  options: OpenConfinedOptions,
): Promise<ConfinedFile> {
  for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
    const confined = await confinePath(workspace, given, toolName);
    const opened = await openInside(confined.real, confined.workspace);
    if (opened.status === "changed") continue;
    if (opened.status === "outside") throw outsideError(workspace, given, toolName);
    if (opened.status === "special") throw specialFileError(given, toolName, opened.kind);
    const { handle, stats } = opened;
    if (stats.isFile() && stats.nlink > 1 && !options.allowHardLinks) {
      await handle.close().catch(() => {});
      throw hardLinkError(given, toolName, stats.nlink);
    }
    return { ...opened, path: confined.real, workspace: confined.workspace };
  }
  throw changedError(given, toolName);
}

/** The outcome of {@link openInside}. Internal. */
export type OpenedInside =
  | {
      readonly status: "opened";
      readonly handle: FileHandle;
      readonly stats: Stats;
      readonly real: string;
    }
  | { readonly status: "outside" }
  | { readonly status: "special"; readonly kind: string }
  | { readonly status: "changed" };

/**
 * Opens a path that was resolved inside the workspace, and checks the handle: a regular file
 * or directory whose real path is inside. The lower half of {@link openConfined}, for callers
 * that resolved the path themselves (Grep's crawl). Internal.
 *
 * A FIFO, socket or device is opened non-blocking (so the open returns at once), recognised
 * by `fstat`, and closed unread: nothing blocks. (An `lstat` before the open would spare that
 * open but cost a system call per file, some 20 % of a small Read; the handle must be checked
 * anyway, since one can be swapped in after any `lstat`.)
 *
 * @returns `"opened"` with the handle (the caller closes it); `"outside"`, `"special"` or
 *   `"changed"` (the last component is now a symlink) with nothing left open.
 * @throws The file-system error of `open` (`ENOENT`, `EACCES`, ...).
 */
export async function openInside(
  realPath: string,
  workspace: RealWorkspace,
): Promise<OpenedInside> {
  let handle: FileHandle;
  try {
    handle = await open(realPath, READ_FLAGS);
  } catch (error) {
    const code = errorCode(error);
    if (code === "ELOOP") return { status: "changed" };
    // A socket (ENXIO), or a device without a driver: say what it is rather than the code.
    if (code === "ENXIO" || code === "ENODEV" || code === "EOPNOTSUPP") {
      const kind = await lstat(realPath).then(specialFileKind, () => undefined);
      if (kind !== undefined) return { status: "special", kind };
    }
    throw error;
  }
  try {
    // Both ask the kernel about the handle; neither depends on the other.
    const [stats, real] = await Promise.all([handle.stat(), handleRealPath(handle, realPath)]);
    const kind = specialFileKind(stats);
    if (kind !== undefined) {
      await handle.close().catch(() => {});
      return { status: "special", kind };
    }
    if (!isInsideWorkspace(real, workspace)) {
      await handle.close().catch(() => {});
      return { status: "outside" };
    }
    return { status: "opened", handle, stats, real };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

/** The outcome of {@link readFileInside}: the content, or why the file was skipped. Internal. */
export type FileInside =
  | { readonly status: "read"; readonly buffer: Buffer }
  | {
      readonly status: "skipped";
      readonly reason:
        | "missing"
        | "not_a_file"
        | "special"
        | "too_large"
        | "hard_link"
        | "outside"
        | "changed";
    };

/** Options of {@link readFileInside}. Internal. */
export interface ReadFileInsideOptions {
  /** The workspace's real directories: the handle's real path must lie inside. */
  readonly workspace: RealWorkspace;
  /** Read files with more than one hard link (else skipped as `"hard_link"`). */
  readonly allowHardLinks: boolean;
  /** Files larger than this are skipped as `"too_large"`. */
  readonly maxBytes: number;
}

/**
 * Reads a whole file found inside the workspace through a checked handle (see
 * {@link openInside}): one `open`, then `fstat` and the real-path check side by side, one read,
 * and a close nobody waits for. Never blocks on a FIFO (it is opened non-blocking and closed
 * unread), never follows a symlink swapped in, never reads a file outside. Internal.
 *
 * @returns The content, or `"skipped"` with the reason: a vanished file is `"missing"`, one
 *   whose last component became a symlink `"changed"`.
 * @throws Other file-system errors (`EACCES`, `EIO`).
 */
export async function readFileInside(
  realPath: string,
  options: ReadFileInsideOptions,
): Promise<FileInside> {
  let opened: OpenedInside;
  try {
    opened = await openInside(realPath, options.workspace);
  } catch (error) {
    if (isMissing(error)) return { status: "skipped", reason: "missing" };
    throw error;
  }
  if (opened.status !== "opened") return { status: "skipped", reason: opened.status };
  const { handle, stats } = opened;
  try {
    if (!stats.isFile()) return { status: "skipped", reason: "not_a_file" };
    if (stats.nlink > 1 && !options.allowHardLinks)
      return { status: "skipped", reason: "hard_link" };
    if (stats.size > options.maxBytes) return { status: "skipped", reason: "too_large" };
    return { status: "read", buffer: await readWhole(handle, stats.size) };
  } finally {
    // Nothing waits for the close: the content is already in memory.
    handle.close().catch(() => {});
  }
}

/**
 * Reads a regular file's first `size` bytes (its `fstat` size) through its handle, in one
 * read when the kernel allows; fewer bytes when the file shrank, never more. Internal.
 */
export async function readWhole(handle: FileHandle, size: number): Promise<Buffer> {
  const buffer = Buffer.allocUnsafe(size);
  let filled = 0;
  while (filled < size) {
    const { bytesRead } = await handle.read(buffer, filled, size - filled, filled);
    if (bytesRead === 0) break;
    filled += bytesRead;
  }
  return filled === size ? buffer : buffer.subarray(0, filled);
}
