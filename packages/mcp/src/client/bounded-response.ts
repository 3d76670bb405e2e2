import { MAX_RESPONSE_EVENT_SIZE } from "@lattice/providers/internal";
import { LatticeError } from "@lattice/tools";

/** The default `maxResponseBytes`: 16 MiB, the bound a model provider reads (H7, H18). */
export const DEFAULT_MAX_RESPONSE_BYTES = MAX_RESPONSE_EVENT_SIZE;

/**
 * How much of an error response's body (HTTP 4xx/5xx) is read: enough for any message a
 * server writes; the rest is not downloaded. (The providers read error bodies to the same
 * bound; theirs is not exported.)
 */
const MAX_ERROR_BODY_BYTES = 64 * 1024;

/**
 * A server's response was larger than `maxResponseBytes` (H18): its body, or one event of its
 * event stream. The rest of it was not read. Code: `"mcp_response_too_large"`. The call (or
 * listing) it answered fails with a message that names the bound.
 */
export class McpResponseTooLargeError extends LatticeError {
  /** The bound that was passed, in bytes. */
  readonly maxBytes: number;

  /**
   * @param what - `"a response body"` or `"one SSE event"`.
   * @param maxBytes - The bound, in bytes.
   */
  constructor(what: string, maxBytes: number) {
    super(
      "mcp_response_too_large",
      `the server sent ${what} larger than ${formatBytes(maxBytes)} (maxResponseBytes); the rest was not read. Raise maxResponseBytes if the server's answers are that large.`,
    );
    this.name = "McpResponseTooLargeError";
    this.maxBytes = maxBytes;
  }
}

/** What {@link boundResponse} tells its caller. */
export interface BoundResponseEvents {
  /** The bound was passed; the body errors with `error` right after. */
  readonly onTooLarge?: (error: McpResponseTooLargeError, eventStream: boolean) => void;
  /** Reading the body failed (the connection broke); the body errors with `error` right after. */
  readonly onBroken?: (error: unknown, eventStream: boolean) => void;
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * A response whose body cannot hold more than `maxBytes` (H18), read as the MCP SDK reads it:
 * - an event stream (`text/event-stream`): each event (the bytes between two blank lines)
 *   may hold at most `maxBytes`; the stream itself may run as long as the call does;
 * - any other successful body: at most `maxBytes` in all;
 * - an error body (HTTP 4xx/5xx): its first {@link MAX_ERROR_BODY_BYTES} bytes, then it ends.
 *
 * Past the bound the original body is cancelled (nothing more is downloaded) and the returned
 * body errors with a {@link McpResponseTooLargeError}; memory stays bounded.
 *
 * @param response - The response `fetch` gave.
 * @param maxBytes - The bound, in bytes.
 * @param events - Told when the bound is passed or the body breaks.
 */
export function boundResponse(
  response: Response,
  maxBytes: number,
  events: BoundResponseEvents = {},
): Response {
  if (response.body === null) return response;
  const eventStream = (response.headers.get("content-type") ?? "")
    .toLowerCase()
    .includes("text/event-stream");
  const errorBody = !response.ok;
  const reader = response.body.getReader();
  const counter = eventStream && !errorBody ? new EventSizeCounter() : undefined;
  const limit = errorBody ? Math.min(maxBytes, MAX_ERROR_BODY_BYTES) : maxBytes;
  let total = 0;
  const body = new ReadableStream<Uint8Array>({
    pull: async (controller) => {
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await reader.read();
      } catch (error) {
        controller.error(error);
        events.onBroken?.(error, eventStream);
        return;
      }
      if (chunk.done) {
        controller.close();
        return;
      }
      const bytes = chunk.value;
      if (errorBody) {
        const room = limit - total;
        total += bytes.length;
        if (bytes.length < room) {
          controller.enqueue(bytes);
          return;
        }
        controller.enqueue(bytes.subarray(0, room));
        controller.close();
        void reader.cancel().catch(() => {});
        return;
      }
      total += bytes.length;
      const over = (counter !== undefined ? counter.add(bytes) : total) > limit;
      if (!over) {
        controller.enqueue(bytes);
        return;
      }
      const error = new McpResponseTooLargeError(
        counter !== undefined ? "one SSE event" : "a response body",
        maxBytes,
      );
      void reader.cancel(error).catch(() => {});
      controller.error(error);
      events.onTooLarge?.(error, eventStream);
    },
    cancel: (reason) => reader.cancel(reason),
  });
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/**
 * Counts the bytes of the event an event stream is in: an event ends at a blank line (two line
 * ends in a row; a line ends at `\n`, `\r` or `\r\n`).
 */
class EventSizeCounter {
  /** Bytes of the open event. */
  #eventBytes = 0;
  /** Whether the open line has no byte yet (a line end now ends the event). */
  #lineEmpty = true;
  /** Whether the last byte was `\r` (a `\n` right after it ends nothing more). */
  #afterCarriageReturn = false;

  /**
   * Takes the next bytes of the stream.
   *
   * @returns The largest size the open event reached within them.
   */
  add(bytes: Uint8Array): number {
    if (bytes.length > 0 && bytes.indexOf(LF) === -1 && bytes.indexOf(CR) === -1) {
      // The open line goes on (an endless line arrives this way): no byte-by-byte scan.
      this.#eventBytes += bytes.length;
      this.#lineEmpty = false;
      this.#afterCarriageReturn = false;
      return this.#eventBytes;
    }
    let largest = this.#eventBytes;
    for (let index = 0; index < bytes.length; index++) {
      const byte = bytes[index] as number;
      if (byte === LF && this.#afterCarriageReturn) {
        this.#afterCarriageReturn = false;
        continue;
      }
      if (byte === LF || byte === CR) {
        this.#afterCarriageReturn = byte === CR;
        if (this.#lineEmpty) this.#eventBytes = 0;
        this.#lineEmpty = true;
        continue;
      }
      this.#afterCarriageReturn = false;
      this.#lineEmpty = false;
      this.#eventBytes++;
      if (this.#eventBytes > largest) largest = this.#eventBytes;
    }
    return largest;
  }
}

/** `16 MiB`, `64 KiB`, or `1000 bytes`: the bound as a person reads it. */
function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
