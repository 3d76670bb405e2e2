import type { ContentBlock } from "../content-blocks.js";
import { ProviderError } from "../provider-error.js";
import { parseToolCallInput } from "../transport/parse-tool-input.js";
import type { DecodedMessage, EndpointContext } from "../transport/stream-decoder.js";
import { openAiStopReason } from "./openai-stop-reason.js";
import type { OutputSchema, StrictSchemas } from "./openai-stream-decoder.js";
import { readOpenAiUsage } from "./openai-usage.js";
import { stripStrictNulls, stripStrictNullsFromText } from "./strip-strict-nulls.js";

/**
 * Decodes a non-streaming Chat Completions response: `reasoning_content` (or `reasoning`) as a
 * thinking block, `content` as a text block, `tool_calls` as tool_use blocks whose
 * `arguments` are parsed (an `inputError` names the tool when they do not parse). A `refusal`
 * (structured outputs) is a text block too, and makes the stop reason `"refusal"`.
 *
 * @param context - The endpoint, for error messages.
 * @param body - The parsed JSON body.
 * @param strict - Original schemas of strict tools, to remove the nulls strict mode adds.
 * @param output - The original schema of the request's native output, to remove the nulls
 *   strict mode adds from the answer's JSON text.
 * @throws {@link ProviderError} (`provider_malformed_response`) when there is no choice.
 */
export function decodeOpenAiCompletion(
  context: EndpointContext,
  body: unknown,
  strict: StrictSchemas | undefined,
  output?: OutputSchema,
): DecodedMessage {
  const completion = body as Record<string, unknown> | null;
  const choices = completion?.choices;
  const choice = Array.isArray(choices)
    ? (choices[0] as Record<string, unknown> | undefined)
    : undefined;
  const message = choice?.message as Record<string, unknown> | undefined;
  if (
    completion === null ||
    typeof completion !== "object" ||
    message === undefined ||
    message === null
  ) {
    throw new ProviderError({
      code: "provider_malformed_response",
      message: `${context.label} at ${context.endpoint} answered 200 with a body that has no choices[0].message. Check that baseURL points at an OpenAI-compatible API (with /v1).`,
      endpoint: context.endpoint,
      retryable: false,
    });
  }
  const content: ContentBlock[] = [];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === "string" && reasoning !== "") {
    content.push({ type: "thinking", thinking: reasoning, signature: "" });
  }
  const refusal =
    typeof message.refusal === "string" && message.refusal !== "" ? message.refusal : undefined;
  let text = typeof message.content === "string" ? message.content : "";
  if (refusal !== undefined) text += refusal;
  else if (output !== undefined) text = stripStrictNullsFromText(text, output);
  if (text !== "") content.push({ type: "text", text });
  const calls = Array.isArray(message.tool_calls)
    ? (message.tool_calls as Record<string, unknown>[])
    : [];
  for (const call of calls) {
    const fn = (call.function ?? {}) as Record<string, unknown>;
    const name = typeof fn.name === "string" ? fn.name : "";
    const id = typeof call.id === "string" ? call.id : `call_lattice_${content.length}`;
    const args =
      typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
    const parsed = parseToolCallInput(name, args);
    const schema = strict?.get(name);
    const input = schema === undefined ? parsed.input : stripStrictNulls(parsed.input, schema);
    content.push(
      parsed.inputError === undefined
        ? { type: "tool_use", id, name, input }
        : { type: "tool_use", id, name, input, inputError: parsed.inputError },
    );
  }
  const raw = typeof choice?.finish_reason === "string" ? choice.finish_reason : undefined;
  return {
    id: typeof completion.id === "string" ? completion.id : undefined,
    model: typeof completion.model === "string" ? completion.model : "",
    content,
    stopReason: refusal !== undefined ? "refusal" : openAiStopReason(raw, calls.length > 0),
    rawStopReason: raw,
    usage: readOpenAiUsage(completion.usage) ?? { inputTokens: 0, outputTokens: 0 },
  };
}
