import type { EventSourceMessage } from "eventsource-parser";
import type { ContentBlock } from "../content-blocks.js";
import type { ModelUsage, StopReason } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { ProviderError } from "../provider-error.js";
import { MAX_TOOL_INPUT_LENGTH, parseToolCallInput } from "../transport/parse-tool-input.js";
import { redactError, redactSecrets } from "../transport/redact-secret.js";
import type {
  DecodedMessage,
  EndpointContext,
  StreamDecoder,
} from "../transport/stream-decoder.js";
import { openAiStopReason } from "./openai-stop-reason.js";
import { readOpenAiUsage } from "./openai-usage.js";
import { stripStrictNulls, stripStrictNullsFromText } from "./strip-strict-nulls.js";

/** A tool call being assembled from deltas. */
interface OpenToolCall {
  /** The call's `index` on the wire: its position among the reply's calls. */
  readonly wireIndex: number;
  /** Its position in the content, once given (calls get positions in `index` order). */
  position: number;
  readonly id: string | undefined;
  readonly name: string;
  arguments: string;
  open: boolean;
}

/** Original input schemas of the request's strict tools, by name. */
export type StrictSchemas = ReadonlyMap<string, { [keyword: string]: unknown }>;

/** The original schema of a request's native output (`ModelRequest.output.schema`). */
export type OutputSchema = { readonly [keyword: string]: unknown };

/**
 * Decodes a Chat Completions SSE stream: content deltas become a text block, DeepSeek/vLLM
 * style `reasoning_content` (or `reasoning`) a thinking block, tool calls are assembled from
 * deltas by `index`; a `refusal` delta (structured outputs) goes into the text block and makes
 * the stop reason `"refusal"`; `finish_reason` closes every block; a usage-only chunk (from
 * `stream_options.include_usage`) sets usage; `[DONE]` ends the stream. A chunk carrying
 * `error` throws a {@link ProviderError}.
 *
 * Tool calls come out in `index` order, as the official `openai` client assembles them,
 * whatever order their deltas arrive in: a call gets its content position (and its
 * `block_start` event) once every call with a lower index has one, starting from index 0; until
 * then its arguments are held and are sent as one `tool_input_delta` when it gets its position.
 * Calls still waiting at the end (a gap in the indices) get theirs in `index` order.
 */
export class OpenAiStreamDecoder implements StreamDecoder {
  /** Events not yet handed to the consumer. */
  readonly events: ModelStreamEvent[] = [];
  readonly #context: EndpointContext;
  readonly #strict: StrictSchemas | undefined;
  readonly #output: OutputSchema | undefined;
  readonly #content: ContentBlock[] = [];
  /** Tool calls by wire index. */
  readonly #tools = new Map<number, OpenToolCall>();
  /** The lowest wire index not yet given a position. */
  #nextWireIndex = 0;
  /** Calls seen but not yet given a position, because a lower index has not arrived. */
  #waiting = 0;
  #textPosition = -1;
  #text = "";
  #thinkingPosition = -1;
  #thinking = "";
  #usage: ModelUsage = { inputTokens: 0, outputTokens: 0 };
  #id: string | undefined;
  #model = "";
  #finishReason: string | undefined;
  /** Whether the model refused (a `refusal` delta). */
  #refused = false;
  #started = false;
  #done = false;

  /**
   * @param context - The endpoint, for error messages.
   * @param strict - Original schemas of strict tools, to remove the nulls strict mode adds.
   * @param output - The original schema of the request's native output, to remove the nulls
   *   strict mode adds from the answer's JSON text (the final text block; deltas stay raw).
   */
  constructor(context: EndpointContext, strict: StrictSchemas | undefined, output?: OutputSchema) {
    this.#context = context;
    this.#strict = strict;
    this.#output = output;
  }

  /** Handles one SSE event. */
  handle(message: EventSourceMessage): void {
    const data = message.data;
    if (data === "[DONE]") {
      this.#done = true;
      return;
    }
    let chunk: Record<string, unknown>;
    try {
      chunk = JSON.parse(data) as Record<string, unknown>;
    } catch (error) {
      throw this.#malformed(
        `an event whose data is not JSON (${quote(redactSecrets(data, this.#context.secrets))})`,
        error,
      );
    }
    if (chunk === null || typeof chunk !== "object") {
      throw this.#malformed(
        `an event whose data is not an object (${quote(redactSecrets(data, this.#context.secrets))})`,
      );
    }
    if (chunk.error !== undefined && chunk.error !== null) throw this.#errorChunk(chunk.error);
    if (!this.#started) {
      this.#started = true;
      if (typeof chunk.id === "string") this.#id = chunk.id;
      if (typeof chunk.model === "string") this.#model = chunk.model;
      this.events.push({ type: "message_start", id: this.#id, model: this.#model });
    }
    const choices = chunk.choices;
    if (Array.isArray(choices) && choices.length > 0) {
      const choice = choices[0] as Record<string, unknown>;
      const delta = choice.delta as Record<string, unknown> | null | undefined;
      if (delta !== null && delta !== undefined) this.#delta(delta);
      const finish = choice.finish_reason;
      if (typeof finish === "string") this.#finish(finish);
    }
    const usage = chunk.usage;
    if (usage !== null && usage !== undefined) {
      const read = readOpenAiUsage(usage);
      if (read !== undefined) {
        this.#usage = read;
        this.events.push({ type: "usage", usage: read });
      }
    }
  }

  /** The assembled message; throws when the stream ended before `finish_reason` or `[DONE]`. */
  finish(): DecodedMessage {
    if (!this.#done && this.#finishReason === undefined) {
      throw new ProviderError({
        code: "provider_stream_truncated",
        message: `The ${this.#context.label} stream from ${this.#context.endpoint} ended before finish_reason and [DONE]. The partial reply was discarded: retry the turn.`,
        endpoint: this.#context.endpoint,
        retryable: true,
      });
    }
    this.#closeAll();
    return {
      id: this.#id,
      model: this.#model,
      content: this.#content,
      stopReason: this.#stopReason(this.#finishReason),
      rawStopReason: this.#finishReason,
      usage: this.#usage,
    };
  }

  #delta(delta: Record<string, unknown>): void {
    const reasoning = delta.reasoning_content ?? delta.reasoning;
    if (typeof reasoning === "string" && reasoning !== "") {
      if (this.#thinkingPosition < 0) {
        this.#closeText();
        this.#thinkingPosition = this.#open({ type: "thinking" });
      }
      this.#thinking += reasoning;
      this.events.push({
        type: "thinking_delta",
        index: this.#thinkingPosition,
        thinking: reasoning,
      });
    }
    const content = delta.content;
    if (typeof content === "string" && content !== "") this.#textDelta(content);
    const refusal = delta.refusal;
    if (typeof refusal === "string" && refusal !== "") {
      this.#refused = true;
      this.#textDelta(refusal);
    }
    const calls = delta.tool_calls;
    if (Array.isArray(calls)) {
      for (let position = 0; position < calls.length; position++) {
        this.#toolCallDelta(calls[position] as Record<string, unknown>, position);
      }
    }
  }

  #textDelta(text: string): void {
    if (this.#textPosition < 0) {
      this.#closeThinking();
      this.#textPosition = this.#open({ type: "text" });
    }
    this.#text += text;
    this.events.push({ type: "text_delta", index: this.#textPosition, text });
  }

  #stopReason(reason: string | undefined): StopReason {
    return this.#refused ? "refusal" : openAiStopReason(reason, this.#tools.size > 0);
  }

  #toolCallDelta(call: Record<string, unknown>, fallbackIndex: number): void {
    const index = typeof call.index === "number" ? call.index : fallbackIndex;
    const fn = call.function as Record<string, unknown> | undefined;
    let state = this.#tools.get(index);
    if (state === undefined) {
      this.#closeText();
      this.#closeThinking();
      state = {
        wireIndex: index,
        position: -1,
        id: typeof call.id === "string" && call.id !== "" ? call.id : undefined,
        name: typeof fn?.name === "string" ? fn.name : "",
        arguments: "",
        open: true,
      };
      this.#tools.set(index, state);
      this.#waiting++;
    }
    const piece = fn?.arguments;
    const text =
      typeof piece === "string"
        ? piece
        : piece !== undefined && piece !== null
          ? JSON.stringify(piece)
          : "";
    if (text !== "" && state.open) {
      // Past the bound the input is refused anyway (H6): stop collecting it.
      if (state.arguments.length <= MAX_TOOL_INPUT_LENGTH) state.arguments += text;
      if (state.position >= 0) {
        this.events.push({ type: "tool_input_delta", index: state.position, partialJson: text });
      }
    }
    if (state.position < 0 && index === this.#nextWireIndex) this.#placeWaitingCalls(false);
  }

  /**
   * Gives content positions to waiting calls in wire-index order: those whose lower indices all
   * have positions, or, when `all`, every one left (at the end of the reply).
   */
  #placeWaitingCalls(all: boolean): void {
    while (this.#waiting > 0) {
      let state = this.#tools.get(this.#nextWireIndex);
      if (state === undefined) {
        if (!all) return;
        let lowest: OpenToolCall | undefined;
        for (const candidate of this.#tools.values()) {
          if (
            candidate.position < 0 &&
            (lowest === undefined || candidate.wireIndex < lowest.wireIndex)
          ) {
            lowest = candidate;
          }
        }
        state = lowest!;
      }
      this.#nextWireIndex = state.wireIndex + 1;
      if (state.position >= 0) continue;
      this.#waiting--;
      const position = this.#content.length;
      this.#content.push(undefined as unknown as ContentBlock);
      state.position = position;
      const id = state.id ?? `call_lattice_${position}`;
      this.events.push({
        type: "block_start",
        index: position,
        block: { type: "tool_use", id, name: state.name },
      });
      if (state.arguments !== "") {
        this.events.push({
          type: "tool_input_delta",
          index: position,
          partialJson: state.arguments,
        });
      }
    }
  }

  #finish(reason: string): void {
    this.#finishReason = reason;
    this.#closeAll();
    this.events.push({ type: "stop", stopReason: this.#stopReason(reason) });
  }

  #open(block: { type: "text" } | { type: "thinking" }): number {
    const position = this.#content.length;
    this.#content.push(undefined as unknown as ContentBlock);
    this.events.push({ type: "block_start", index: position, block });
    return position;
  }

  #closeText(): void {
    if (this.#textPosition < 0) return;
    const text =
      this.#output === undefined || this.#refused
        ? this.#text
        : stripStrictNullsFromText(this.#text, this.#output);
    this.#content[this.#textPosition] = { type: "text", text };
    this.events.push({ type: "block_stop", index: this.#textPosition });
    this.#textPosition = -1;
    this.#text = "";
  }

  #closeThinking(): void {
    if (this.#thinkingPosition < 0) return;
    this.#content[this.#thinkingPosition] = {
      type: "thinking",
      thinking: this.#thinking,
      signature: "",
    };
    this.events.push({ type: "block_stop", index: this.#thinkingPosition });
    this.#thinkingPosition = -1;
    this.#thinking = "";
  }

  #closeAll(): void {
    this.#closeThinking();
    this.#closeText();
    this.#placeWaitingCalls(true);
    const calls = [...this.#tools.values()].sort((a, b) => a.wireIndex - b.wireIndex);
    for (const state of calls) {
      if (!state.open) continue;
      state.open = false;
      const parsed = parseToolCallInput(state.name, state.arguments);
      const schema = this.#strict?.get(state.name);
      const input = schema === undefined ? parsed.input : stripStrictNulls(parsed.input, schema);
      const id = state.id ?? `call_lattice_${state.position}`;
      this.#content[state.position] =
        parsed.inputError === undefined
          ? { type: "tool_use", id, name: state.name, input }
          : {
              type: "tool_use",
              id,
              name: state.name,
              input,
              inputError: parsed.inputError,
            };
      this.events.push({ type: "block_stop", index: state.position });
    }
  }

  #errorChunk(error: unknown): ProviderError {
    const record = (typeof error === "object" ? error : { message: String(error) }) as Record<
      string,
      unknown
    >;
    const type =
      typeof record.type === "string"
        ? record.type
        : typeof record.code === "string"
          ? record.code
          : undefined;
    const apiMessage =
      typeof record.message === "string"
        ? redactSecrets(record.message, this.#context.secrets)
        : undefined;
    const retryable = type === undefined || /server|overload|rate|timeout|unavailable/i.test(type);
    return new ProviderError({
      code:
        type !== undefined && /overload/i.test(type)
          ? "provider_overloaded"
          : "provider_stream_error",
      message: `The ${this.#context.label} stream from ${this.#context.endpoint} ended with an error (${type ?? "unknown"}${apiMessage === undefined ? "" : `: ${apiMessage}`}). ${retryable ? "This may be transient: retry the turn." : "Check the request."}`,
      endpoint: this.#context.endpoint,
      type,
      apiMessage,
      retryable,
    });
  }

  #malformed(what: string, cause?: unknown): ProviderError {
    return new ProviderError({
      code: "provider_malformed_response",
      message: `The ${this.#context.label} stream from ${this.#context.endpoint} sent ${what}. The partial reply was discarded: retry the turn, and check that baseURL points at an OpenAI-compatible API.`,
      endpoint: this.#context.endpoint,
      retryable: true,
      cause: redactError(cause, (text) => redactSecrets(text, this.#context.secrets)),
    });
  }
}

function quote(text: string): string {
  return JSON.stringify(text.length > 120 ? `${text.slice(0, 120)}…` : text);
}
