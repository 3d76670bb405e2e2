// Shared harness of the recorded-fixture tests (not shipped: no entry point imports it).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { ModelProviderV1 } from "../model-provider.js";
import type { ModelRequest } from "../model-request.js";
import type { ModelStreamEvent } from "../model-stream-event.js";

/** A fetch that answers with the given byte chunks as an SSE body, without any network. */
export function fetchChunks(chunks: readonly Uint8Array[]): typeof fetch {
  return async () =>
    new Response(
      new ReadableStream<Uint8Array>({
        start(controller) {
          for (const chunk of chunks) controller.enqueue(chunk);
          controller.close();
        },
      }),
      { status: 200, headers: { "content-type": "text/event-stream" } },
    );
}

/** `bytes` cut at the given offsets (any order, no duplicates). */
export function splitAt(bytes: Uint8Array, cuts: readonly number[]): Uint8Array[] {
  const chunks: Uint8Array[] = [];
  let start = 0;
  for (const cut of [...cuts].sort((a, b) => a - b)) {
    chunks.push(bytes.subarray(start, cut));
    start = cut;
  }
  chunks.push(bytes.subarray(start));
  return chunks;
}

/** `bytes` one byte per chunk. */
export function bytewise(bytes: Uint8Array): Uint8Array[] {
  return Array.from({ length: bytes.length }, (_, index) => bytes.subarray(index, index + 1));
}

/** Every event a provider yields for a request, and the error it ended with, if any. */
export async function drain(
  provider: ModelProviderV1,
  request: ModelRequest,
): Promise<{ events: ModelStreamEvent[]; failure: unknown }> {
  const events: ModelStreamEvent[] = [];
  let failure: unknown;
  try {
    for await (const event of provider.stream(request)) events.push(event);
  } catch (error) {
    failure = error;
  }
  return { events, failure };
}

/** Serves `body` as an SSE response on 127.0.0.1 for the duration of `use(origin)`. */
export async function serveOnce(
  body: Uint8Array,
  headers: Record<string, string>,
  use: (origin: string) => Promise<void>,
): Promise<void> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/event-stream", ...headers });
    res.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}
