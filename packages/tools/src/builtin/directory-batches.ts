import type { Dirent } from "node:fs";
import { type FileHandle, opendir } from "node:fs/promises";
import { directoryPrefix, openInside } from "./open-confined.js";
import type { RealWorkspace } from "./workspace.js";

/** How many entries one read of a directory fetches, and one batch holds at most. */
const BATCH = 2048;

/**
 * Reads a directory as a stream of batches of at most 2,048 entries: memory holds one batch,
 * never the whole directory (H8). Internal.
 *
 * Each batch costs one asynchronous read (`dir.read()`, which fetches up to 2,048 entries into
 * the handle's buffer); the rest of the batch comes from that buffer with `dir.readSync()`,
 * without a system call. An async iterator over the handle would cost a promise per entry,
 * and `fs.readdir` the whole listing at once. The handle is closed when the reading ends,
 * however it ends.
 *
 * With `workspace`, the directory is first opened with `O_NOFOLLOW` and checked through its
 * handle (a directory whose real path is inside the workspace, see `openInside`), and the
 * listing reads that very directory (through `/proc/self/fd` on Linux): a directory swapped
 * for a symlink to the outside after the caller checked its path is not listed (H9).
 *
 * @throws The error of `fs.opendir` (missing directory, permission) or of a read; with
 *   `workspace`, an error with code `"ENOTDIR"` when the path no longer is a directory inside
 *   the workspace.
 */
export async function* directoryBatches(
  directory: string,
  workspace?: RealWorkspace,
): AsyncGenerator<Dirent[]> {
  let verified: FileHandle | undefined;
  let listed = directory;
  if (workspace !== undefined) {
    const opened = await openInside(directory, workspace);
    if (opened.status !== "opened" || !opened.stats.isDirectory()) {
      if (opened.status === "opened") await opened.handle.close().catch(() => {});
      throw Object.assign(new Error(`${directory} is no longer a directory inside the workspace`), {
        code: "ENOTDIR",
      });
    }
    verified = opened.handle;
    listed = directoryPrefix(opened.handle, opened.real);
  }
  const handle = await opendir(listed, { bufferSize: BATCH }).catch(async (error: unknown) => {
    await verified?.close().catch(() => {});
    throw error;
  });
  try {
    for (;;) {
      const first = await handle.read();
      if (first === null) return;
      const batch = [first];
      while (batch.length < BATCH) {
        // Served from the buffer the read above filled; at the end it returns null.
        const next = handle.readSync();
        if (next === null) break;
        batch.push(next);
      }
      yield batch;
      if (batch.length < BATCH) return;
    }
  } finally {
    try {
      handle.closeSync();
    } catch {
      // Already closed.
    }
    // Nothing waits for the close: the entries are read.
    verified?.close().catch(() => {});
  }
}
