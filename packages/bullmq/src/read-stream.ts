import { createAbortError } from "@lattice/scheduler/internal";
import { closeClient, duplicateClient, type OpenedClient } from "./connection.js";
import { decodeRecord, type StreamRecord } from "./step-job.js";

/** How long one blocking read waits before it checks the signal again. */
const BLOCK_MS = 2_000;
/** Records read at most at once. */
const COUNT = 1_000;

/** Records read at once; `caughtUp` when the last of them was the newest in the stream. */
export interface StreamBatch {
  readonly records: readonly StreamRecord[];
  readonly caughtUp: boolean;
}

/**
 * Reads a run's event stream from its start, in batches: each batch is what Redis had past the
 * previous one (up to 1,000 records). Reads block on a
 * connection of their own, closed when the reader stops. Internal.
 *
 * @throws an error named `"AbortError"` when `signal` aborts.
 */
export async function* readStream(
  source: OpenedClient,
  key: string,
  signal: AbortSignal | undefined,
): AsyncGenerator<StreamBatch> {
  const reader = duplicateClient(source);
  const onAbort = (): void => reader.client.disconnect();
  signal?.addEventListener("abort", onAbort, { once: true });
  let lastId = "0";
  try {
    for (;;) {
      if (signal?.aborted) throw createAbortError(signal.reason);
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await reader.client.xread(
          "COUNT",
          COUNT,
          "BLOCK",
          BLOCK_MS,
          "STREAMS",
          key,
          lastId,
        )) as [string, [string, string[]][]][] | null;
      } catch (error) {
        if (signal?.aborted) throw createAbortError(signal.reason);
        throw error;
      }
      const entries = reply?.[0]?.[1];
      // Nothing new within the wait: the reader is caught up.
      if (entries === undefined || entries.length === 0) {
        yield { records: [], caughtUp: true };
        continue;
      }
      const batch: StreamRecord[] = [];
      for (const [id, fields] of entries) {
        lastId = id;
        const record = decodeRecord(fields);
        if (record !== undefined) batch.push(record);
      }
      if (batch.length > 0) yield { records: batch, caughtUp: entries.length < COUNT };
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
    await closeClient(reader);
  }
}
