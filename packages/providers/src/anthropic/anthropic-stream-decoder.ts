import type { EventSourceMessage } from "eventsource-parser";
import type { ContentBlock } from "../content-blocks.js";
import type { ModelContextEdit, ModelUsage } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import {
  MAX_TOOL_INPUT_LENGTH,
  objectToolCallInput,
  parseToolCallInput,
} from "../transport/parse-tool-input.js";
import { redactError, redactSecrets } from "../transport/redact-secret.js";
import type {
  DecodedMessage,
  EndpointContext,
  StreamDecoder,
} from "../transport/stream-decoder.js";
import { anthropicStopReason } from "./anthropic-stop-reason.js";
import { mergeAnthropicUsage } from "./anthropic-usage.js";
import { decodeAnthropicContextEdits } from "./decode-anthropic-context-edits.js";

const SKIPPED = -1;
const RETRYABLE_ERROR_TYPES: ReadonlySet<string> = new Set([
  "overloaded_error",
  "api_error",
  "rate_limit_error",
  "timeout_error",
]);

/** One block being assembled. */
interface OpenBlock {
  kind: "text" | "thinking" | "redacted_thinking" | "tool_use" | "opaque";
  /** Text, thinking text, redacted data, or the tool input's (or opaque block's) JSON text. */
  text: string;
  signature: string;
  id: string;
  name: string;
  /** Input given whole in content_block_start (some gateways send no deltas). */
  initialInput: unknown;
  /** An opaque block as content_block_start gave it; its streamed text and input are added. */
  opaque?: { type: string; [key: string]: unknown };
}

/**
 * Decodes an Anthropic Messages SSE stream: `message_start`, `content_block_*` (text,
 * thinking with `signature_delta`, redacted thinking, tool_use with `input_json_delta`),
 * cumulative `message_delta` usage, `message_stop`; `ping` and unknown events are ignored;
 * an `error` event throws a {@link ProviderError}. Blocks of other types (`server_tool_use`,
 * `web_search_tool_result`, future types) are kept verbatim as opaque blocks, with their
 * streamed `input_json_delta` assembled into `input` and `text_delta` into `text`. The indices
 * of the events are positions in the final content. A `message_delta`'s
 * `context_management.applied_edits` becomes the message's `contextEdits`.
 */
export class AnthropicStreamDecoder implements StreamDecoder {
  /** Events not yet handed to the consumer. */
  readonly events: ModelStreamEvent[] = [];
  readonly #context: EndpointContext;
  readonly #content: ContentBlock[] = [];
  readonly #open: (OpenBlock | undefined)[] = [];
  /** API index → position in `#content`, or `SKIPPED`. */
  readonly #positions: number[] = [];
  readonly #usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  #id: string | undefined;
  #model = "";
  #stopReason: string | undefined;
  #contextEdits: ModelContextEdit[] | undefined;
  #started = false;
  #stopped = false;

  /**
   * @param context - The endpoint, for error messages.
   */
  constructor(context: EndpointContext) {
    this.#context = context;
  }

  /** Handles one SSE event. */
  handle(message: EventSourceMessage): void {
    if (message.event === "ping") return;
    let data: Record<string, unknown>;
    try {
      data = JSON.parse(message.data) as Record<string, unknown>;
    } catch (error) {
      throw this.#malformed(
        `an event whose data is not JSON (${quote(redactSecrets(message.data, this.#context.secrets))})`,
        error,
      );
    }
    if (data === null || typeof data !== "object") {
      throw this.#malformed(
        `an event whose data is not an object (${quote(redactSecrets(message.data, this.#context.secrets))})`,
      );
    }
    switch (data.type) {
      case "content_block_delta":
        this.#delta(data);
        return;
      case "content_block_start":
        this.#blockStart(data);
        return;
      case "content_block_stop":
        this.#blockStop(data);
        return;
      case "message_start":
        this.#messageStart(data);
        return;
      case "message_delta":
        this.#messageDelta(data);
        return;
      case "message_stop":
        this.#stopped = true;
        return;
      case "error":
        throw this.#errorEvent(data.error);
      default:
        return;
    }
  }

  /** The assembled message; throws when the stream ended before `message_stop`. */
  finish(): DecodedMessage {
    if (!this.#stopped) {
      throw new ProviderError({
        code: "provider_stream_truncated",
        message: `The ${this.#context.label} stream from ${this.#context.endpoint} ended before message_stop${this.#started ? "" : " (no message_start either)"}. The partial reply was discarded: retry the turn.`,
        endpoint: this.#context.endpoint,
        retryable: true,
      });
    }
    for (let index = 0; index < this.#open.length; index++) {
      if (this.#open[index] !== undefined) this.#close(index);
    }
    return {
      id: this.#id,
      model: this.#model,
      content: this.#content,
      stopReason: anthropicStopReason(this.#stopReason),
      rawStopReason: this.#stopReason,
      usage: this.#usage,
      contextEdits: this.#contextEdits,
    };
  }

  #messageStart(data: Record<string, unknown>): void {
    this.#started = true;
    const message = data.message as Record<string, unknown> | undefined;
    if (message === undefined || message === null) return;
    if (typeof message.id === "string") this.#id = message.id;
    if (typeof message.model === "string") this.#model = message.model;
    mergeAnthropicUsage(this.#usage, message.usage);
    this.events.push({ type: "message_start", id: this.#id, model: this.#model });
    this.events.push({ type: "usage", usage: { ...this.#usage } });
  }

  #messageDelta(data: Record<string, unknown>): void {
    const delta = data.delta as Record<string, unknown> | undefined;
    const reason = delta?.stop_reason;
    if (typeof reason === "string") this.#stopReason = reason;
    mergeAnthropicUsage(this.#usage, data.usage);
    const management = data.context_management;
    if (management !== undefined && management !== null) {
      this.#contextEdits = decodeAnthropicContextEdits(management);
    }
    this.events.push({ type: "usage", usage: { ...this.#usage } });
    if (typeof reason === "string") {
      this.events.push({ type: "stop", stopReason: anthropicStopReason(reason) });
    }
  }

  #blockStart(data: Record<string, unknown>): void {
    const apiIndex = data.index as number;
    const block = data.content_block as Record<string, unknown> | undefined;
    const type = block?.type;
    if (
      block === undefined ||
      block === null ||
      typeof block !== "object" ||
      typeof type !== "string"
    ) {
      this.#positions[apiIndex] = SKIPPED;
      return;
    }
    const kind =
      type === "text" || type === "thinking" || type === "redacted_thinking" || type === "tool_use"
        ? type
        : "opaque";
    const index = this.#content.length;
    this.#content.push(undefined as unknown as ContentBlock);
    this.#positions[apiIndex] = index;
    const open: OpenBlock = {
      kind,
      text: "",
      signature: "",
      id: "",
      name: "",
      initialInput: undefined,
    };
    this.#open[index] = open;
    if (type === "text") {
      this.events.push({ type: "block_start", index, block: { type: "text" } });
      const text = block.text;
      if (typeof text === "string" && text !== "") {
        open.text = text;
        this.events.push({ type: "text_delta", index, text });
      }
    } else if (type === "tool_use") {
      open.id = typeof block.id === "string" ? block.id : `toolu_lattice_${index}`;
      open.name = typeof block.name === "string" ? block.name : "";
      open.initialInput = block.input;
      this.events.push({
        type: "block_start",
        index,
        block: { type: "tool_use", id: open.id, name: open.name },
      });
    } else if (type === "thinking") {
      this.events.push({ type: "block_start", index, block: { type: "thinking" } });
      if (typeof block.thinking === "string" && block.thinking !== "") {
        open.text = block.thinking;
        this.events.push({ type: "thinking_delta", index, thinking: block.thinking });
      }
      if (typeof block.signature === "string") open.signature = block.signature;
    } else if (type === "redacted_thinking") {
      open.text = typeof block.data === "string" ? block.data : "";
      this.events.push({ type: "block_start", index, block: { type: "redacted_thinking" } });
    } else {
      open.opaque = { ...block, type };
      this.events.push({ type: "block_start", index, block: { type: "opaque", blockType: type } });
    }
  }

  #delta(data: Record<string, unknown>): void {
    const index = this.#positions[data.index as number];
    if (index === undefined || index === SKIPPED) return;
    const open = this.#open[index];
    const delta = data.delta as Record<string, unknown> | undefined;
    if (open === undefined || delta === undefined || delta === null) return;
    if (open.opaque !== undefined) {
      this.#opaqueDelta(open, open.opaque, delta);
      return;
    }
    switch (delta.type) {
      case "text_delta": {
        const text = delta.text as string;
        open.text += text;
        this.events.push({ type: "text_delta", index, text });
        return;
      }
      case "input_json_delta": {
        const partialJson = delta.partial_json as string;
        if (typeof partialJson !== "string" || partialJson === "") return;
        // Past the bound the input is refused anyway (H6): stop collecting it.
        if (open.text.length <= MAX_TOOL_INPUT_LENGTH) open.text += partialJson;
        this.events.push({ type: "tool_input_delta", index, partialJson });
        return;
      }
      case "thinking_delta": {
        const thinking = delta.thinking as string;
        open.text += thinking;
        this.events.push({ type: "thinking_delta", index, thinking });
        return;
      }
      case "signature_delta": {
        const signature = delta.signature as string;
        open.signature += signature;
        this.events.push({ type: "signature_delta", index, signature });
        return;
      }
      default:
        return;
    }
  }

  /** Adds a delta to an opaque block: input JSON text, or text; other deltas are ignored. */
  #opaqueDelta(
    open: OpenBlock,
    block: { [key: string]: unknown },
    delta: Record<string, unknown>,
  ): void {
    if (delta.type === "input_json_delta" && typeof delta.partial_json === "string") {
      if (open.text.length <= MAX_TOOL_INPUT_LENGTH) open.text += delta.partial_json;
    } else if (delta.type === "text_delta" && typeof delta.text === "string") {
      block.text = (typeof block.text === "string" ? block.text : "") + delta.text;
    }
  }

  #blockStop(data: Record<string, unknown>): void {
    const index = this.#positions[data.index as number];
    if (index === undefined || index === SKIPPED || this.#open[index] === undefined) return;
    this.#close(index);
  }

  #close(index: number): void {
    const open = this.#open[index]!;
    this.#open[index] = undefined;
    let block: ContentBlock;
    switch (open.kind) {
      case "text":
        block = { type: "text", text: open.text };
        break;
      case "thinking":
        block = { type: "thinking", thinking: open.text, signature: open.signature };
        break;
      case "redacted_thinking":
        block = { type: "redacted_thinking", data: open.text };
        break;
      case "opaque": {
        const opaque = open.opaque!;
        if (open.text !== "") {
          const parsed = parseToolCallInput(opaque.type, open.text);
          // Input that does not parse keeps what content_block_start gave (the API would
          // reject a block whose input is not an object anyway).
          if (parsed.inputError === undefined) opaque.input = parsed.input;
        }
        block = { type: "opaque", provider: "anthropic", block: opaque };
        break;
      }
      default: {
        const parsed =
          open.text === ""
            ? objectToolCallInput(open.name, open.initialInput)
            : parseToolCallInput(open.name, open.text);
        block =
          parsed.inputError === undefined
            ? { type: "tool_use", id: open.id, name: open.name, input: parsed.input }
            : {
                type: "tool_use",
                id: open.id,
                name: open.name,
                input: parsed.input,
                inputError: parsed.inputError,
              };
      }
    }
    this.#content[index] = block;
    this.events.push({ type: "block_stop", index });
  }

  #errorEvent(error: unknown): ProviderError {
    const record = (error ?? {}) as Record<string, unknown>;
    const type = typeof record.type === "string" ? record.type : undefined;
    const apiMessage =
      typeof record.message === "string"
        ? redactSecrets(record.message, this.#context.secrets)
        : undefined;
    const retryable = type !== undefined && RETRYABLE_ERROR_TYPES.has(type);
    return new ProviderError({
      code: type === "overloaded_error" ? "provider_overloaded" : "provider_stream_error",
      message: `The ${this.#context.label} stream from ${this.#context.endpoint} ended with an error event (${type ?? "unknown"}${apiMessage === undefined ? "" : `: ${apiMessage}`}). ${retryable ? "This is transient: retry the turn." : "Check the request."}`,
      endpoint: this.#context.endpoint,
      type,
      apiMessage,
      retryable,
    });
  }

  #malformed(what: string, cause?: unknown): ProviderError {
    return new ProviderError({
      code: "provider_malformed_response",
      message: `The ${this.#context.label} stream from ${this.#context.endpoint} sent ${what}. The partial reply was discarded: retry the turn, and check that baseURL points at an Anthropic-compatible API.`,
      endpoint: this.#context.endpoint,
      retryable: true,
      cause: redactError(cause, (text) => redactSecrets(text, this.#context.secrets)),
    });
  }
}

function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
