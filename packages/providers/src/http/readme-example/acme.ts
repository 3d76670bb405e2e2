import type {
  ContentBlock,
  ModelMessage,
  ModelProviderV1,
  ModelRequest,
  ModelUsage,
  StopReason,
} from "@lattice/providers";
import {
  createHttpTransport,
  type DecodedModelResponse,
  type ModelResponseCodec,
  ProviderError,
  parseToolInput,
} from "@lattice/providers/http";

/** Options of {@link acme}. */
export interface AcmeOptions {
  /** The API key, sent as `x-api-key`; the transport keeps it out of every error. */
  readonly apiKey: string;
  /** The API's address; requests go to `baseURL + "/v1/messages"`. */
  readonly baseURL: string;
  /** Retries after the first attempt. Default 2. */
  readonly maxRetries?: number;
}

/** A provider for the Acme API, which speaks the Messages protocol. */
export function acme(options: AcmeOptions): ModelProviderV1 {
  const transport = createHttpTransport({
    label: "Acme API",
    url: `${options.baseURL}/v1/messages`,
    headers: { "x-api-key": options.apiKey, "anthropic-version": "2023-06-01" },
    keyHint: "the apiKey option of acme()",
    maxRetries: options.maxRetries,
  });
  return {
    specificationVersion: "v1",
    name: "acme",
    baseURL: options.baseURL,
    stream(request) {
      const stream = request.stream !== false;
      const body = toBody(request, stream);
      return transport.call({ body, stream, codec, signal: request.signal });
    },
  };
}

// 1. The request: Lattice's normalised request → the API's JSON (undefined fields are dropped).
function toBody(request: ModelRequest, stream: boolean) {
  return {
    model: request.model,
    max_tokens: request.maxTokens,
    system: request.system,
    messages: request.messages.map(toWireMessage),
    tools: request.tools?.map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
    })),
    stream,
  };
}

// Lattice's messages are already Messages-style blocks; `inputError` must not go on the wire.
function toWireMessage(message: ModelMessage) {
  if (typeof message.content === "string") return message;
  const content = message.content.map((block) =>
    block.type === "tool_use"
      ? { type: "tool_use", id: block.id, name: block.name, input: block.input }
      : block,
  );
  return { role: message.role, content };
}

// 2. The response: server-sent events → normalised events, then the whole message.
interface OpenBlock {
  readonly type: "text" | "tool_use";
  readonly id: string;
  readonly name: string;
  /** The text so far, or the tool input's JSON text so far. */
  text: string;
}

const codec: ModelResponseCodec = {
  createStreamDecoder({ emit, label, endpoint, redact }) {
    const blocks: OpenBlock[] = []; // by position in the final content
    const positions = new Map<number, number>(); // the API's block index → position
    const usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
    let id: string | undefined;
    let model = "";
    let stopReason: string | undefined;
    let ended = false;
    return {
      handle(sse) {
        // Whatever a decoder throws that is not a ProviderError (this JSON.parse on a broken
        // event, a missing field) ends the call as provider_malformed_response.
        const event = JSON.parse(sse.data);
        const index = positions.get(event.index) ?? -1;
        switch (event.type) {
          case "message_start":
            ({ id, model } = event.message);
            usage.inputTokens = event.message.usage.input_tokens;
            emit({ type: "message_start", id, model });
            return;
          case "content_block_start": {
            const { type, id = "", name = "" } = event.content_block;
            if (type !== "text" && type !== "tool_use") return; // this toy skips other blocks
            positions.set(event.index, blocks.length);
            blocks.push({ type, id, name, text: "" });
            const block = type === "text" ? { type } : { type, id, name };
            emit({ type: "block_start", index: blocks.length - 1, block });
            return;
          }
          case "content_block_delta": {
            const block = blocks[index];
            const delta = event.delta;
            if (block === undefined) return;
            if (delta.type === "text_delta") {
              block.text += delta.text;
              emit({ type: "text_delta", index, text: delta.text });
            } else if (delta.type === "input_json_delta") {
              block.text += delta.partial_json;
              emit({ type: "tool_input_delta", index, partialJson: delta.partial_json });
            }
            return;
          }
          case "content_block_stop":
            if (index >= 0) emit({ type: "block_stop", index });
            return;
          case "message_delta":
            stopReason = event.delta.stop_reason ?? stopReason;
            usage.outputTokens = event.usage.output_tokens;
            emit({ type: "usage", usage: { ...usage } });
            emit({ type: "stop", stopReason: toStopReason(stopReason) });
            return;
          case "message_stop":
            ended = true;
            return;
          case "error": // retried when nothing was yielded yet and `retryable` is true
            throw new ProviderError({
              code: "provider_stream_error",
              message: `The ${label} stream from ${endpoint} ended with an error event: ${redact(String(event.error?.message))}`,
              endpoint,
              type: event.error?.type,
              retryable: event.error?.type === "overloaded_error",
            });
        }
      },
      finish(): DecodedModelResponse {
        if (!ended) {
          throw new ProviderError({
            code: "provider_stream_truncated",
            message: `The ${label} stream from ${endpoint} ended before message_stop: retry the turn.`,
            endpoint,
            retryable: true,
          });
        }
        const content = blocks.map((block) =>
          block.type === "text"
            ? { type: "text" as const, text: block.text }
            : toolUse(block.id, block.name, block.text),
        );
        return {
          id,
          model,
          content,
          stopReason: toStopReason(stopReason),
          rawStopReason: stopReason,
          usage,
        };
      },
    };
  },

  // `stream: false`: one JSON body; the transport yields `usage`, `stop` and `response`.
  decodeMessage(body): DecodedModelResponse {
    const message = body as WireMessage;
    const content: ContentBlock[] = [];
    for (const block of message.content) {
      if (block.type === "text") content.push({ type: "text", text: block.text ?? "" });
      if (block.type === "tool_use")
        content.push(toolUse(block.id ?? "", block.name ?? "", block.input));
    }
    return {
      id: message.id,
      model: message.model,
      content,
      stopReason: toStopReason(message.stop_reason),
      rawStopReason: message.stop_reason ?? undefined,
      usage: { inputTokens: message.usage.input_tokens, outputTokens: message.usage.output_tokens },
    };
  },
};

/** The parts of a non-streaming reply this provider reads. */
interface WireMessage {
  id: string;
  model: string;
  stop_reason: string | null;
  content: { type: string; text?: string; id?: string; name?: string; input?: unknown }[];
  usage: { input_tokens: number; output_tokens: number };
}

// A tool call's input goes through parseToolInput, as in Lattice's adapters: input that is not
// a JSON object becomes `{}` plus an `inputError`, which the agent answers with is_error.
function toolUse(id: string, name: string, input: unknown): ContentBlock {
  return { type: "tool_use", id, name, ...parseToolInput(name, input) };
}

const STOP_REASONS = [
  "end_turn",
  "tool_use",
  "max_tokens",
  "stop_sequence",
  "pause_turn",
  "refusal",
];

function toStopReason(raw: string | null | undefined): StopReason {
  return raw != null && STOP_REASONS.includes(raw) ? (raw as StopReason) : "other";
}
