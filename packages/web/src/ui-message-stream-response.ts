import type { SDKMessage } from "@lattice/core";
import type { LatticeUIMessageChunk } from "./lattice-ui-message.js";
import { type UIMessageStreamOptions, uiStream } from "./to-ui-message-stream.js";

/**
 * The headers of a UI message stream response: SSE, never cached or buffered by a proxy, and
 * the protocol's version header that `useChat` checks.
 */
export const UI_MESSAGE_STREAM_HEADERS: { readonly [name: string]: string } = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  "x-vercel-ai-ui-message-stream": "v1",
  "x-accel-buffering": "no",
};

/** Options of {@link toUIMessageStreamResponse}: the response's status and headers, and the stream's options. */
export interface UIMessageStreamResponseInit extends UIMessageStreamOptions {
  /** The status. Default 200. */
  readonly status?: number;
  /** More headers; they win over the protocol's. */
  readonly headers?: HeadersInit;
}

/**
 * A run as a `Response` that `useChat` reads (W1): the UI message stream of
 * {@link toUIMessageStream} as server-sent events (`data: <chunk JSON>`, then `data: [DONE]`)
 * with the protocol's headers. Return it from a route handler on anything that speaks web
 * `Request`/`Response`: Next.js, Hono, Remix, Bun, Deno, Cloudflare Workers. A client that
 * goes away cancels the body, which aborts the run (W6).
 *
 * @param query - A query not yet iterated.
 * @param init - Status, headers and {@link UIMessageStreamOptions}.
 */
export function toUIMessageStreamResponse(
  query: AsyncIterable<SDKMessage>,
  init: UIMessageStreamResponseInit = {},
): Response {
  // A plain object, not a Headers instance: Response copies it at half the cost.
  return new Response(sseStream(query, init), {
    status: init.status ?? 200,
    headers: headersWith(init.headers),
  });
}

/** The protocol's headers, with the caller's on top. */
function headersWith(extra: HeadersInit | undefined): { [name: string]: string } {
  const headers: { [name: string]: string } = { ...UI_MESSAGE_STREAM_HEADERS };
  if (extra !== undefined) {
    new Headers(extra).forEach((value, name) => {
      headers[name] = value;
    });
  }
  return headers;
}

/** The part of Node's `http.ServerResponse` (and Express's `res`) that {@link pipeUIMessageStreamToResponse} uses. */
export interface NodeResponseLike {
  writeHead(status: number, headers: { [name: string]: string }): unknown;
  write(chunk: Uint8Array): boolean;
  end(): unknown;
  once(event: "close" | "drain" | "error", listener: () => void): unknown;
  readonly writableEnded?: boolean;
  readonly destroyed?: boolean;
}

/**
 * Writes a run's UI message stream to a Node `http.ServerResponse` or an Express `res` (W1),
 * with the protocol's headers, honouring backpressure. When the client goes away before the
 * end (the response closes), the run is aborted (W6).
 *
 * @param query - A query not yet iterated.
 * @param response - The response to write.
 * @param init - Status, headers and {@link UIMessageStreamOptions}.
 * @returns Resolves when the stream ended (or the client went away and the run settled).
 */
export async function pipeUIMessageStreamToResponse(
  query: AsyncIterable<SDKMessage>,
  response: NodeResponseLike,
  init: UIMessageStreamResponseInit = {},
): Promise<void> {
  const stream = sseStream(query, init);
  if (response.destroyed === true || response.writableEnded === true) {
    // The client left before the stream began (the handler awaited something first): the
    // run never starts.
    await stream.cancel();
    return;
  }
  response.writeHead(init.status ?? 200, headersWith(init.headers));
  const reader = stream.getReader();
  let closed = false;
  const gone = new Promise<void>((resolve) => {
    const leave = (): void => {
      closed = true;
      resolve();
    };
    response.once("close", leave);
    response.once("error", leave);
  });
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), gone.then(() => undefined)]);
      if (next === undefined || closed) {
        await reader.cancel();
        return;
      }
      if (next.done) break;
      if (!response.write(next.value)) {
        await Promise.race([new Promise<void>((resolve) => response.once("drain", resolve)), gone]);
      }
    }
    if (!closed) response.end();
  } finally {
    reader.releaseLock();
  }
}

const encoder = new TextEncoder();
const DONE = encoder.encode("data: [DONE]\n\n");

/** The UI message stream as SSE bytes: one `data:` event per chunk, a buffer per pull, and `data: [DONE]` at the end. */
function sseStream(
  query: AsyncIterable<SDKMessage>,
  options: UIMessageStreamOptions,
): ReadableStream<Uint8Array> {
  return uiStream<Uint8Array>(
    query,
    options,
    (chunks, controller) => {
      let text = "";
      for (const chunk of chunks) text += sseEvent(chunk);
      controller.enqueue(encoder.encode(text));
    },
    (controller) => controller.enqueue(DONE.slice()),
  );
}

/**
 * One chunk as an SSE event. The deltas, most of a stream, are written by hand (the same
 * JSON, in half the time of `JSON.stringify` on the object); every other chunk is stringified.
 */
function sseEvent(chunk: LatticeUIMessageChunk): string {
  switch (chunk.type) {
    case "text-delta":
    case "reasoning-delta":
      if (chunk.providerMetadata === undefined) {
        return `data: {"type":"${chunk.type}","id":${JSON.stringify(chunk.id)},"delta":${JSON.stringify(chunk.delta)}}\n\n`;
      }
      break;
    case "tool-input-delta":
      return `data: {"type":"tool-input-delta","toolCallId":${JSON.stringify(chunk.toolCallId)},"inputTextDelta":${JSON.stringify(chunk.inputTextDelta)}}\n\n`;
  }
  return `data: ${JSON.stringify(chunk)}\n\n`;
}
