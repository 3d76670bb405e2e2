import { type ResolvedReply, splitText } from "./resolve-reply.js";

function event(type: string, data: unknown): string {
  return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * Renders a reply as the SSE events of the Messages API, one string per event: message_start,
 * a ping, each block (start, deltas, stop; a refusal as a text block; thinking with a
 * signature_delta, tool_use with
 * input_json_delta pieces, verbatim `anthropic_block`s whole in content_block_start except an
 * `input`, streamed as input_json_delta pieces), message_delta with cumulative usage,
 * message_stop. Cache counts, when set, are in message_start's usage; context edits, when set,
 * are message_delta's `context_management`.
 *
 * @param reply - The resolved reply.
 * @param messageId - The message id to report.
 */
export function renderAnthropicEvents(reply: ResolvedReply, messageId: string): string[] {
  const events: string[] = [
    event("message_start", {
      type: "message_start",
      message: {
        id: messageId,
        type: "message",
        role: "assistant",
        model: reply.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...inputUsage(reply), output_tokens: 1 },
      },
    }),
    'event: ping\ndata: {"type": "ping"}\n\n',
  ];
  reply.blocks.forEach((block, index) => {
    if (block.type === "text" || block.type === "refusal") {
      events.push(
        event("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "text", text: "" },
        }),
      );
      for (const text of splitText(block.text, reply.chunkSize)) {
        events.push(
          event("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "text_delta", text },
          }),
        );
      }
    } else if (block.type === "thinking") {
      events.push(
        event("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "thinking", thinking: "", signature: "" },
        }),
      );
      for (const thinking of splitText(block.thinking, reply.chunkSize)) {
        events.push(
          event("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "thinking_delta", thinking },
          }),
        );
      }
      events.push(
        event("content_block_delta", {
          type: "content_block_delta",
          index,
          delta: { type: "signature_delta", signature: block.signature },
        }),
      );
    } else if (block.type === "anthropic_block") {
      const { input, ...rest } = block.block;
      const streamsInput = input !== undefined && input !== null && typeof input === "object";
      events.push(
        event("content_block_start", {
          type: "content_block_start",
          index,
          content_block: streamsInput ? { ...rest, input: {} } : block.block,
        }),
      );
      if (streamsInput) {
        for (const partial_json of splitText(JSON.stringify(input), reply.chunkSize)) {
          events.push(
            event("content_block_delta", {
              type: "content_block_delta",
              index,
              delta: { type: "input_json_delta", partial_json },
            }),
          );
        }
      }
    } else {
      events.push(
        event("content_block_start", {
          type: "content_block_start",
          index,
          content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
        }),
      );
      for (const partial_json of splitText(block.json, reply.chunkSize)) {
        events.push(
          event("content_block_delta", {
            type: "content_block_delta",
            index,
            delta: { type: "input_json_delta", partial_json },
          }),
        );
      }
    }
    events.push(event("content_block_stop", { type: "content_block_stop", index }));
  });
  const delta: Record<string, unknown> = {
    type: "message_delta",
    delta: { stop_reason: reply.stopReason, stop_sequence: null },
    usage: { output_tokens: reply.outputTokens },
  };
  if (reply.contextEdits !== undefined) {
    delta.context_management = contextManagementOf(reply.contextEdits);
  }
  events.push(
    event("message_delta", delta),
    'event: message_stop\ndata: {"type":"message_stop"}\n\n',
  );
  return events;
}

/**
 * Renders a reply as a non-streaming Messages API response body.
 *
 * @param reply - The resolved reply.
 * @param messageId - The message id to report.
 */
export function renderAnthropicMessage(reply: ResolvedReply, messageId: string): string {
  let content = "";
  for (const block of reply.blocks) {
    if (content !== "") content += ",";
    if (block.type === "tool_use") {
      // The input is spliced in as JSON text; input that does not parse is sent as a string,
      // which is as malformed as a non-streaming tool_use can get.
      const input = isJson(block.json) ? block.json : JSON.stringify(block.json);
      content += `{"type":"tool_use","id":${JSON.stringify(block.id)},"name":${JSON.stringify(block.name)},"input":${input}}`;
    } else if (block.type === "anthropic_block") {
      content += JSON.stringify(block.block);
    } else if (block.type === "refusal") {
      content += JSON.stringify({ type: "text", text: block.text });
    } else {
      content += JSON.stringify(block);
    }
  }
  const usage = JSON.stringify({ ...inputUsage(reply), output_tokens: reply.outputTokens });
  const management =
    reply.contextEdits === undefined
      ? ""
      : `,"context_management":${JSON.stringify(contextManagementOf(reply.contextEdits))}`;
  return `{"id":${JSON.stringify(messageId)},"type":"message","role":"assistant","model":${JSON.stringify(reply.model)},"content":[${content}],"stop_reason":${JSON.stringify(reply.stopReason)},"stop_sequence":null,"usage":${usage}${management}}`;
}

/** The wire form of applied context edits: `{ applied_edits: [{ type, cleared_… }] }`. */
function contextManagementOf(edits: NonNullable<ResolvedReply["contextEdits"]>): unknown {
  return {
    applied_edits: edits.map((edit) => {
      const wire: Record<string, unknown> = {
        type: edit.type,
        cleared_input_tokens: edit.clearedInputTokens,
      };
      if (edit.clearedToolUses !== undefined) wire.cleared_tool_uses = edit.clearedToolUses;
      if (edit.clearedThinkingTurns !== undefined) {
        wire.cleared_thinking_turns = edit.clearedThinkingTurns;
      }
      return wire;
    }),
  };
}

/** The input side of a Messages API usage object: input tokens, and cache counts when set. */
function inputUsage(reply: ResolvedReply): Record<string, number> {
  const usage: Record<string, number> = { input_tokens: reply.inputTokens };
  if (reply.cacheCreationInputTokens !== undefined) {
    usage.cache_creation_input_tokens = reply.cacheCreationInputTokens;
  }
  if (reply.cacheReadInputTokens !== undefined) {
    usage.cache_read_input_tokens = reply.cacheReadInputTokens;
  }
  return usage;
}

function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The Anthropic error type for an HTTP status. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 504:
      return "timeout_error";
    case 529:
      return "overloaded_error";
    default:
      return status >= 500 ? "api_error" : "invalid_request_error";
  }
}

/**
 * An Anthropic-shaped error body: `{ type: "error", error: { type, message }, request_id }`.
 *
 * @param status - The HTTP status, for the default error type.
 * @param message - The error message.
 * @param requestId - The request id.
 */
export function anthropicErrorBody(status: number, message: string, requestId: string): unknown {
  return {
    type: "error",
    error: { type: anthropicErrorType(status), message },
    request_id: requestId,
  };
}

/**
 * Anthropic's answer to a prompt longer than the context window, as the API words it: a 400
 * `invalid_request_error` whose message is `prompt is too long: N tokens > W maximum`.
 *
 * @param promptTokens - The prompt's size in tokens.
 * @param contextWindow - The window in tokens.
 * @param requestId - The request id.
 */
export function anthropicContextOverflowBody(
  promptTokens: number,
  contextWindow: number,
  requestId: string,
): unknown {
  return anthropicErrorBody(
    400,
    `prompt is too long: ${promptTokens} tokens > ${contextWindow} maximum`,
    requestId,
  );
}
