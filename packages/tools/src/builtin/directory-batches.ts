import type { Dirent } from "node:fs";
import { opendir } from "node:fs/promises";

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
 * @throws The error of `fs.opendir` (missing directory, permission) or of a read.
 */
export async function* directoryBatches(directory: string): AsyncGenerator<Dirent[]> {
  const handle = await opendir(directory, { bufferSize: BATCH });
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
  }
}
