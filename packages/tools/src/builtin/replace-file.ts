import { randomBytes } from "node:crypto";
import { constants, type Stats } from "node:fs";
import { access, type FileHandle, lstat, mkdir, open, rename, unlink } from "node:fs/promises";
import path from "node:path";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { directoryPrefix, handleRealPath } from "./open-confined.js";
import {
  errorCode,
  isInsideRoot,
  isInsideWorkspace,
  outsideError,
  type RealWorkspace,
  type Workspace,
} from "./workspace.js";

/** Opens a directory without following a symlink in its last component, without blocking. */
const DIRECTORY_FLAGS =
  constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK;

/** Creates the temporary file: new (never an existing file or a symlink), write-only. */
const TEMP_FLAGS =
  constants.O_WRONLY |
  constants.O_CREAT |
  constants.O_EXCL |
  constants.O_NOFOLLOW |
  constants.O_NONBLOCK |
  constants.O_NOCTTY;

/** Options of {@link replaceFile}. Internal. */
export interface ReplaceFileOptions {
  /** The file to create or replace: absolute, resolved inside the workspace by `confinePath`. */
  readonly target: string;
  /** The new content, written as UTF-8. */
  readonly content: string;
  /** The workspace as configured, for the outside-path message. */
  readonly workspace: Workspace;
  /** The workspace's real directories at the time of the call. */
  readonly real: RealWorkspace;
  /** Create missing parent directories (Write) or fail with `ENOENT` (Edit). */
  readonly createParents: boolean;
  /** The path as the model gave it, for messages. */
  readonly given: string;
  /** The tool's name, for messages. */
  readonly toolName: string;
  /**
   * What the target is, when the caller knows it already (Edit: `fstat` of the file it just
   * read through its handle); the target is then not looked up again. A file changed since
   * is replaced all the same (a directory there makes the rename fail with `EISDIR`).
   */
  readonly current?: Stats | undefined;
  /**
   * Without `current`: called with `lstat` of what the target is now (`undefined` when it
   * does not exist), before anything is written; throws to refuse (a directory, a FIFO).
   */
  readonly inspect?: ((existing: Stats | undefined) => void) | undefined;
}

/** The outcome of {@link replaceFile}. Internal. */
export interface ReplaceFileResult {
  /** Whether a file was replaced (else one was created). */
  readonly existed: boolean;
}

/**
 * Creates or replaces a file atomically, inside a parent directory checked through its handle.
 *
 * The parent directory is opened with `O_DIRECTORY | O_NOFOLLOW` and its real path, read
 * through `/proc/self/fd` on Linux, must lie inside the workspace; missing parents (with
 * `createParents`) are created one level at a time from the workspace root, each `mkdir`
 * and `open` going through the handle of the level above, so no symlink swapped in can
 * redirect them. Then a temporary file with a random name is created in that directory
 * (`O_CREAT | O_EXCL | O_NOFOLLOW`), written, and renamed onto the target; on any failure the
 * temporary file is removed. So readers see the old content or the new, never a mix; a hard
 * link to a file elsewhere is replaced, never written through; a FIFO is never opened.
 *
 * A file this process could not write in place (read-only) is refused with `EACCES`, as
 * writing it in place would be. An existing file keeps its permission bits (`mode & 0o777`;
 * set-user-ID, set-group-ID and sticky bits are dropped); a new one gets `0o666` minus the
 * umask, as `fs.writeFile` gives.
 * The owner becomes the user running the SDK. The data is not `fsync`ed (as with
 * `fs.writeFile`): atomic against other processes and a crash of this one, not against a
 * power cut. Without `/proc` (not Linux) the directory is reached by its checked path again,
 * which narrows the race rather than closing it.
 *
 * @throws What `inspect` throws; {@link BuiltinToolError} `"path_outside_working_directory"`
 *   when the parent directory turns out to be outside, `"file_changed"` when a parent became
 *   a symlink or a file; other file-system errors as they are.
 */
export async function replaceFile(options: ReplaceFileOptions): Promise<ReplaceFileResult> {
  const { target, real } = options;
  if (real.roots.includes(target)) {
    // The target is a workspace directory itself; its parent is outside.
    options.inspect?.(await lstat(target));
    throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
  }
  const directory = await openParent(path.dirname(target), options);
  try {
    const prefix = directoryPrefix(directory.handle, directory.real);
    const name = path.basename(target);
    const destination = path.join(prefix, name);
    let existing = options.current;
    if (existing === undefined) {
      try {
        existing = await lstat(destination);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") throw error;
      }
      if (existing?.isSymbolicLink() === true) throw changedError(options);
      options.inspect?.(existing);
    }
    if (existing !== undefined) await assertWritable(existing, destination);
    const temporary = path.join(prefix, `.lattice-${randomBytes(8).toString("hex")}.tmp`);
    // Created with the old mode minus the umask, never wider than the old file; the chmod
    // that restores the exact old mode can then run alongside the write.
    const mode = existing === undefined ? 0o666 : existing.mode & 0o777;
    const file = await open(temporary, TEMP_FLAGS, mode);
    try {
      try {
        await Promise.all([
          existing === undefined ? undefined : file.chmod(mode),
          file.writeFile(options.content, "utf8"),
        ]);
      } catch (error) {
        await file.close().catch(() => {});
        throw error;
      }
      // The data is written: closing and renaming need not wait for each other.
      await Promise.all([file.close(), rename(temporary, destination)]);
    } catch (error) {
      await unlink(temporary).catch(() => {});
      throw error;
    }
    return { existed: existing !== undefined };
  } finally {
    // Nothing waits for the close: the rename is done.
    directory.handle.close().catch(() => {});
  }
}

/**
 * Refuses to replace a file this process could not write in place (a read-only file), as
 * writing it in place would have: replacing needs only the directory to be writable.
 */
async function assertWritable(existing: Stats, destination: string): Promise<void> {
  const uid = process.getuid?.();
  if (uid === 0) return;
  if (uid === existing.uid) {
    if ((existing.mode & 0o200) !== 0) return;
    throw Object.assign(new Error("the file is read-only"), { code: "EACCES" });
  }
  // Someone else's file: let the kernel say (group and other bits, ACLs).
  await access(destination, constants.W_OK);
}

interface OpenDirectory {
  readonly handle: FileHandle;
  readonly real: string;
}

/** Opens the target's parent directory, creating it level by level when asked. */
async function openParent(directory: string, options: ReplaceFileOptions): Promise<OpenDirectory> {
  try {
    return await openDirectory(directory, options);
  } catch (error) {
    if (!options.createParents || errorCode(error) !== "ENOENT") throw error;
  }
  // Walk down from the workspace root that holds the directory, one level at a time.
  const root = options.real.roots
    .filter((candidate) => isInsideRoot(directory, candidate))
    .reduce((longest, candidate) => (candidate.length > longest.length ? candidate : longest));
  let current = await openDirectory(root, options);
  try {
    for (const part of path.relative(root, directory).split(path.sep)) {
      if (part === "") continue;
      const child = path.join(directoryPrefix(current.handle, current.real), part);
      let next: OpenDirectory;
      try {
        next = await openDirectory(child, options);
      } catch (error) {
        if (errorCode(error) !== "ENOENT") throw error;
        await mkdir(child).catch((mkdirError: unknown) => {
          if (errorCode(mkdirError) !== "EEXIST") throw mkdirError;
        });
        next = await openDirectory(child, options);
      }
      await current.handle.close().catch(() => {});
      current = next;
    }
    return current;
  } catch (error) {
    await current.handle.close().catch(() => {});
    throw error;
  }
}

/** Opens a directory with `O_NOFOLLOW` and checks its real path is inside the workspace. */
async function openDirectory(
  directory: string,
  options: ReplaceFileOptions,
): Promise<OpenDirectory> {
  let handle: FileHandle;
  try {
    handle = await open(directory, DIRECTORY_FLAGS);
  } catch (error) {
    // A symlink (ELOOP, or ENOTDIR with O_DIRECTORY) where a directory was resolved.
    const code = errorCode(error);
    if (code === "ELOOP" || code === "ENOTDIR") throw changedError(options, error);
    throw error;
  }
  try {
    const real = await handleRealPath(handle, directory);
    if (!isInsideWorkspace(real, options.real)) {
      throw outsideError(options.workspace, options.given, options.toolName);
    }
    return { handle, real };
  } catch (error) {
    await handle.close().catch(() => {});
    throw error;
  }
}

function changedError(options: ReplaceFileOptions, cause?: unknown): BuiltinToolError {
  const { given, toolName } = options;
  return new BuiltinToolError(
    "file_changed",
    `${toolName}: a part of ${JSON.stringify(given)} is not a directory, or was replaced by a symbolic link or a file while ${toolName} ran, so nothing was written. Check the path with LS and call ${toolName} again.`,
    cause === undefined ? undefined : { cause },
  );
}
