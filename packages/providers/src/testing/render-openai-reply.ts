import type { StopReason } from "../model-response.js";
import { type ResolvedReply, splitText } from "./resolve-reply.js";

/**
 * The Chat Completions `finish_reason` for a stop reason: `tool_use` → `tool_calls`,
 * `max_tokens` → `length`, `refusal` → `content_filter`, everything else → `stop`.
 *
 * @param reason - The scripted stop reason.
 */
export function openAiFinishReason(reason: StopReason): string {
  switch (reason) {
    case "tool_use":
      return "tool_calls";
    case "max_tokens":
      return "length";
    case "refusal":
      return "content_filter";
    default:
      return "stop";
  }
}

/**
 * Renders a reply as Chat Completions SSE chunks, one string per event: a role chunk, content
 * (and DeepSeek-style `reasoning_content` for thinking, `refusal` for a refusal) deltas, tool
 * calls by index with `arguments` pieces, the finish chunk, a usage-only chunk when
 * `includeUsage`, and `[DONE]`. A reply with a refusal block starts with
 * `{ role: "assistant", content: null, refusal: "" }` and finishes `"stop"` when its stop
 * reason is `refusal`, as structured outputs answer.
 *
 * @param reply - The resolved reply.
 * @param completionId - The completion id to report.
 * @param includeUsage - Whether the request set `stream_options.include_usage`.
 */
export function renderOpenAiEvents(
  reply: ResolvedReply,
  completionId: string,
  includeUsage: boolean,
): string[] {
  const head = `{"id":${JSON.stringify(completionId)},"object":"chat.completion.chunk","created":${Math.floor(Date.now() / 1000)},"model":${JSON.stringify(reply.model)},"choices":`;
  const chunk = (delta: unknown, finish: string | null = null): string =>
    `data: ${head}[{"index":0,"delta":${JSON.stringify(delta)},"logprobs":null,"finish_reason":${JSON.stringify(finish)}}]}\n\n`;
  const refused = reply.blocks.some((block) => block.type === "refusal");
  const events: string[] = [
    chunk(
      refused
        ? { role: "assistant", content: null, refusal: "" }
        : { role: "assistant", content: "" },
    ),
  ];
  let toolIndex = 0;
  for (const block of reply.blocks) {
    if (block.type === "text") {
      for (const content of splitText(block.text, reply.chunkSize)) events.push(chunk({ content }));
    } else if (block.type === "refusal") {
      for (const refusal of splitText(block.text, reply.chunkSize)) events.push(chunk({ refusal }));
    } else if (block.type === "thinking") {
      for (const reasoning_content of splitText(block.thinking, reply.chunkSize)) {
        events.push(chunk({ reasoning_content }));
      }
    } else if (block.type === "tool_use") {
      const index = toolIndex++;
      events.push(
        chunk({
          tool_calls: [
            {
              index,
              id: block.id,
              type: "function",
              function: { name: block.name, arguments: "" },
            },
          ],
        }),
      );
      for (const args of splitText(block.json, reply.chunkSize)) {
        events.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
      }
    }
  }
  events.push(chunk({}, finishReason(reply, refused)));
  if (includeUsage) {
    events.push(`data: ${head}[],"usage":${JSON.stringify(openAiUsage(reply))}}\n\n`);
  }
  events.push("data: [DONE]\n\n");
  return events;
}

/**
 * Renders a reply as a non-streaming Chat Completions response body.
 *
 * @param reply - The resolved reply.
 * @param completionId - The completion id to report.
 */
export function renderOpenAiCompletion(reply: ResolvedReply, completionId: string): string {
  let text = "";
  let reasoning = "";
  let refusal: string | undefined;
  const toolCalls: unknown[] = [];
  for (const block of reply.blocks) {
    if (block.type === "text") text += block.text;
    else if (block.type === "refusal") refusal = (refusal ?? "") + block.text;
    else if (block.type === "thinking") reasoning += block.thinking;
    else if (block.type === "tool_use") {
      toolCalls.push({
        id: block.id,
        type: "function",
        function: { name: block.name, arguments: block.json },
      });
    }
  }
  const message: Record<string, unknown> = {
    role: "assistant",
    content: text === "" && (toolCalls.length > 0 || refusal !== undefined) ? null : text,
  };
  if (refusal !== undefined) message.refusal = refusal;
  if (reasoning !== "") message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return JSON.stringify({
    id: completionId,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: reply.model,
    choices: [
      {
        index: 0,
        message,
        logprobs: null,
        finish_reason: finishReason(reply, refusal !== undefined),
      },
    ],
    usage: openAiUsage(reply),
  });
}

/** The finish reason of a reply: `"stop"` for a refusal block's `refusal`, as the API says it. */
function finishReason(reply: ResolvedReply, refused: boolean): string {
  return refused && reply.stopReason === "refusal" ? "stop" : openAiFinishReason(reply.stopReason);
}

/**
 * A Chat Completions usage object: cached and uncached input together in `prompt_tokens`, the
 * cache reads in `prompt_tokens_details.cached_tokens` when the reply sets them.
 */
function openAiUsage(reply: ResolvedReply): Record<string, unknown> {
  const read = reply.cacheReadInputTokens;
  const prompt = reply.inputTokens + (read ?? 0) + (reply.cacheCreationInputTokens ?? 0);
  const usage: Record<string, unknown> = {
    prompt_tokens: prompt,
    completion_tokens: reply.outputTokens,
    total_tokens: prompt + reply.outputTokens,
  };
  if (read !== undefined) usage.prompt_tokens_details = { cached_tokens: read };
  return usage;
}

/** The OpenAI error type for an HTTP status. */
function openAiErrorType(status: number): string {
  if (status === 401) return "invalid_request_error";
  if (status === 429) return "rate_limit_exceeded";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/**
 * An OpenAI-shaped error body: `{ error: { message, type, param, code } }`.
 *
 * @param status - The HTTP status, for the error type.
 * @param message - The error message.
 */
export function openAiErrorBody(status: number, message: string): unknown {
  return {
    error: {
      message,
      type: openAiErrorType(status),
      param: null,
      code: status === 401 ? "invalid_api_key" : null,
    },
  };
}

/**
 * OpenAI's answer to a prompt longer than the context window, as the API words it: a 400
 * `invalid_request_error` with `param: "messages"` and `code: "context_length_exceeded"`.
 *
 * @param promptTokens - The prompt's size in tokens.
 * @param contextWindow - The window in tokens.
 */
export function openAiContextOverflowBody(promptTokens: number, contextWindow: number): unknown {
  return {
    error: {
      message: `This model's maximum context length is ${contextWindow} tokens. However, your messages resulted in ${promptTokens} tokens. Please reduce the length of the messages.`,
      type: "invalid_request_error",
      param: "messages",
      code: "context_length_exceeded",
    },
  };
}
