import { readUIMessageStream, type UIMessage, type UIMessageChunk, uiMessageChunkSchema } from "ai";
import type { LatticeUIMessage, LatticeUIMessageChunk } from "./lattice-ui-message.js";

/** Reads a whole stream into its chunks. Test helper. */
export async function readChunks<T>(stream: ReadableStream<T>): Promise<T[]> {
  const chunks: T[] = [];
  const reader = stream.getReader();
  for (;;) {
    const next = await reader.read();
    if (next.done) return chunks;
    chunks.push(next.value);
  }
}

/**
 * Feeds chunks to the `ai` package's own reader after validating each with its own chunk
 * schema (W5), and returns the last message it assembled, with every error it reported.
 */
export async function assembleWithAiSdk(
  chunks: readonly LatticeUIMessageChunk[],
  message?: UIMessage,
): Promise<{ message: UIMessage | undefined; errors: string[] }> {
  const errors: string[] = [];
  for (const chunk of chunks) {
    const validation = await uiMessageChunkSchema().validate?.(chunk);
    if (validation !== undefined && !validation.success) {
      errors.push(
        `chunk ${JSON.stringify(chunk)} fails the ai chunk schema: ${String(validation.error)}`,
      );
    }
  }
  const stream = new ReadableStream<UIMessageChunk>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk as UIMessageChunk);
      controller.close();
    },
  });
  let last: UIMessage | undefined;
  for await (const assembled of readUIMessageStream({
    stream,
    ...(message !== undefined ? { message } : {}),
    onError: (error) => errors.push(String(error)),
    terminateOnError: false,
  })) {
    last = assembled;
  }
  return { message: last === undefined ? undefined : structuredClone(last), errors };
}

/** A message with only what the protocol means (no `undefined` keys, no `data-*` parts, no streaming-only fields). */
export function comparable(message: UIMessage | LatticeUIMessage | undefined): unknown {
  if (message === undefined) return undefined;
  return {
    id: message.id,
    role: message.role,
    parts: message.parts
      .filter((part) => !part.type.startsWith("data-"))
      .map((part) => {
        const plain = JSON.parse(JSON.stringify(part)) as Record<string, unknown>;
        delete plain.rawInput;
        // A streamed part's id names it within one stream only.
        if (part.type === "reasoning" || part.type === "text") delete plain.id;
        delete plain.providerExecuted;
        delete plain.title;
        delete plain.preliminary;
        return plain;
      }),
  };
}
