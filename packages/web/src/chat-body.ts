import type { UIMessage } from "ai";
import type { ChatRequestBody } from "./chat-endpoint.js";
import { ChatRequestError } from "./chat-request-error.js";

/**
 * Reads a chat request's body (W9): at most `maxBodyBytes` bytes (413 beyond, whether or not
 * it says its length), JSON, `{ id?, messages: UIMessage[], trigger? }` or `{ id?, message }`
 * (a page that sends only its newest message), each message an object with a string `id` and
 * `role` and an array of `parts`, each part an object with a string `type`.
 *
 * @throws {@link ChatRequestError} `chat_body_too_large` or `chat_body_invalid`, naming what is wrong.
 */
export async function readChatBody(
  request: Request,
  maxBodyBytes: number,
): Promise<ChatRequestBody> {
  const declared = Number(request.headers.get("content-length"));
  if (Number.isFinite(declared) && declared > maxBodyBytes) throw tooLarge(maxBodyBytes);
  const chunks: Uint8Array[] = [];
  let length = 0;
  if (request.body !== null) {
    const reader = request.body.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) break;
      length += next.value.length;
      if (length > maxBodyBytes) {
        await reader.cancel();
        throw tooLarge(maxBodyBytes);
      }
      chunks.push(next.value);
    }
  }
  const bytes = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  let body: unknown;
  try {
    body = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    throw invalid(
      "The body is not JSON: post { id, messages } as useChat's transport does, with content-type application/json.",
    );
  }
  if (body === null || typeof body !== "object" || Array.isArray(body)) {
    throw invalid("The body must be a JSON object { id, messages }.");
  }
  const { id, messages, message, trigger } = body as Record<string, unknown>;
  const list = message !== undefined && messages === undefined ? [message] : messages;
  if (!Array.isArray(list)) {
    throw invalid(
      "The body has no messages array: post { id, messages } as useChat's transport does.",
    );
  }
  list.forEach(checkMessage);
  if (id !== undefined && typeof id !== "string") throw invalid("The chat id must be a string.");
  if (trigger !== undefined && typeof trigger !== "string")
    throw invalid("trigger must be a string.");
  return {
    ...(id !== undefined ? { id } : {}),
    messages: list as UIMessage[],
    ...(trigger !== undefined ? { trigger } : {}),
  };
}

function checkMessage(message: unknown, index: number): void {
  const at = `message ${index}`;
  if (message === null || typeof message !== "object" || Array.isArray(message)) {
    throw invalid(`${at} is not a UIMessage object.`);
  }
  const { id, role, parts } = message as Record<string, unknown>;
  if (typeof id !== "string" || id.length > 1_024) {
    throw invalid(`${at} has no string id (of at most 1,024 characters).`);
  }
  if (typeof role !== "string") throw invalid(`${at} has no string role.`);
  if (!Array.isArray(parts)) throw invalid(`${at} has no parts array.`);
  parts.forEach((part, partIndex) => {
    if (
      part === null ||
      typeof part !== "object" ||
      typeof (part as { type?: unknown }).type !== "string"
    ) {
      throw invalid(`${at}, part ${partIndex} is not a part object with a string type.`);
    }
  });
}

function invalid(message: string): ChatRequestError {
  return new ChatRequestError("chat_body_invalid", message);
}

function tooLarge(maxBodyBytes: number): ChatRequestError {
  return new ChatRequestError(
    "chat_body_too_large",
    `The body is larger than ${maxBodyBytes} bytes, the most this chat reads: send a shorter message, or raise the server's maxBodyBytes.`,
  );
}
