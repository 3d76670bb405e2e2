import type {
  LanguageModelV2StreamPart,
  LanguageModelV3StreamPart,
  SharedV3ProviderMetadata,
} from "@ai-sdk/provider";
import type {
  ContentBlock,
  ModelStreamEvent,
  ModelUsage,
  OpaqueBlock,
  StopReason,
  StreamBlockStart,
  ThinkingBlock,
  ToolUseBlock,
} from "@lattice/providers";
import { MAX_TOOL_INPUT_LENGTH, ProviderError } from "@lattice/providers";
import { parseToolInput } from "@lattice/providers/http";
import type { ImageBlock, TextBlock } from "@lattice/tools";
import { providerExecutedCall, providerExecutedResult } from "./ai-sdk-opaque-part.js";
import { toStopReason } from "./ai-sdk-stop-reason.js";
import { toModelUsage } from "./ai-sdk-usage.js";
import type { BridgeContext } from "./bridge-context.js";
import { checkStreamPart, toolCallInputText } from "./check-model-answer.js";
import { hasProviderMetadata, toBase64, withProviderMetadata } from "./provider-metadata.js";

/** Any stream part of a V2 or V3 model. */
export type AiSdkStreamPart = LanguageModelV2StreamPart | LanguageModelV3StreamPart;

/** A complete assistant message assembled from a stream or a `doGenerate` result. */
export interface AssembledMessage {
  readonly id: string | undefined;
  readonly model: string;
  readonly content: ContentBlock[];
  readonly stopReason: StopReason;
  readonly rawStopReason: string | undefined;
  readonly usage: ModelUsage;
}

/** A text or reasoning part being streamed; `position` is -1 until its first text. */
interface OpenTextPart {
  readonly kind: "text" | "thinking";
  position: number;
  text: string;
  metadata: SharedV3ProviderMetadata | undefined;
}

/** A tool call whose input is being streamed. */
interface OpenToolCall {
  readonly position: number;
  readonly name: string;
  input: string;
  metadata: SharedV3ProviderMetadata | undefined;
}

/**
 * Turns an AI SDK stream (V2 or V3 parts) into Lattice's normalised events and, at the end, the
 * assistant message.
 *
 * - A text or reasoning part opens a block at its first non-empty delta (so empty parts leave
 *   no empty blocks); a part that stays empty but carries provider metadata (a redacted
 *   reasoning part, a signature-only part) is kept as an empty block. Deltas become
 *   `text_delta` / `thinking_delta`; the part's end becomes `block_stop`. The latest provider
 *   metadata a part carried is kept on its block, as the AI SDK keeps it.
 * - `tool-input-start` opens a tool_use block, `tool-input-delta` becomes `tool_input_delta`,
 *   and the `tool-call` part closes it with its final input, parsed as Lattice's adapters parse
 *   tool input (empty → `{}`; malformed → `{}` with `inputError`). A `tool-call` without a
 *   streamed input opens and closes its block at once.
 * - Provider-executed calls (server-side tools the provider ran) and their results are not
 *   Lattice's to run: each becomes an opaque block (provider `"ai-sdk"`) holding the prompt
 *   part the AI SDK would send back, announced by `block_start` (`blockType` `tool-call` or
 *   `tool-result`) and `block_stop`.
 * - Generated image files become image blocks; sources, other files, raw chunks and warnings
 *   are ignored. `response-metadata` names the message and model.
 * - `finish` closes the blocks still open, then yields `usage` and `stop`; an `error` part
 *   throws.
 *
 * Block indexes are positions in the final content, assigned when a block opens.
 */
export class AiSdkStreamAssembler {
  /** Events not yet handed to the consumer. */
  readonly events: ModelStreamEvent[] = [];
  readonly #context: BridgeContext;
  readonly #content: ContentBlock[] = [];
  readonly #parts = new Map<string, OpenTextPart>();
  readonly #tools = new Map<string, OpenToolCall>();
  /** Ids of provider-executed tool inputs, whose parts are skipped. */
  #skipped: Set<string> | undefined;
  #toolCalls = 0;
  /** Parts handled so far. */
  #count = 0;
  #started = false;
  #id: string | undefined;
  #model: string;
  #finished: { usage: ModelUsage; stopReason: StopReason; raw: string | undefined } | undefined;

  /**
   * @param context - The model, for messages and the default model name.
   */
  constructor(context: BridgeContext) {
    this.#context = context;
    this.#model = context.modelId;
  }

  /**
   * Handles one stream part, checked first: a part that is not an object with a string `type`,
   * or one of a known type without a field the assembler reads, ends the call (H27).
   *
   * @throws The part's error, for an `error` part (the caller maps it to a `ProviderError`);
   *   `ProviderError` `provider_malformed_response` for a malformed part.
   */
  handle(received: AiSdkStreamPart): void {
    const part = checkStreamPart(received, this.#count++, this.#context);
    switch (part.type) {
      case "text-delta":
        this.#delta(part.id, "text", part.delta, part.providerMetadata);
        return;
      case "reasoning-delta":
        this.#delta(part.id, "thinking", part.delta, part.providerMetadata);
        return;
      case "tool-input-delta": {
        const open = this.#tools.get(part.id);
        if (open === undefined) return;
        // Past the bound the input is refused anyway: stop collecting it.
        if (open.input.length <= MAX_TOOL_INPUT_LENGTH) open.input += part.delta;
        if (part.delta !== "") {
          this.events.push({
            type: "tool_input_delta",
            index: open.position,
            partialJson: part.delta,
          });
        }
        return;
      }
      case "text-start":
        this.#openPart(part.id, "text", part.providerMetadata);
        return;
      case "reasoning-start":
        this.#openPart(part.id, "thinking", part.providerMetadata);
        return;
      case "text-end":
      case "reasoning-end":
        this.#endPart(part.id, part.providerMetadata);
        return;
      case "tool-input-start":
        this.#toolInputStart(part.id, part.toolName, part.providerExecuted, part.providerMetadata);
        return;
      case "tool-input-end":
        return;
      case "tool-call":
        this.#toolCall(part);
        return;
      case "tool-result":
        this.#opaque(
          providerExecutedResult(
            part.toolCallId,
            part.toolName,
            part.result,
            part.isError,
            part.providerMetadata,
          ),
        );
        return;
      case "file":
        this.#file(
          part.mediaType,
          part.data,
          (part as { providerMetadata?: SharedV3ProviderMetadata }).providerMetadata,
        );
        return;
      case "response-metadata":
        if (typeof part.id === "string") this.#id = part.id;
        if (typeof part.modelId === "string" && part.modelId !== "") this.#model = part.modelId;
        return;
      case "finish": {
        this.#start();
        this.#closeAll();
        const usage = toModelUsage(part.usage);
        const mapped = toStopReason(part.finishReason, this.#toolCalls > 0);
        this.#finished = { usage, stopReason: mapped.stopReason, raw: mapped.rawStopReason };
        this.events.push({ type: "usage", usage });
        this.events.push({ type: "stop", stopReason: mapped.stopReason });
        return;
      }
      case "error":
        throw new StreamErrorPart(part.error);
      default:
        // stream-start (warnings), source, raw, tool-approval-request.
        return;
    }
  }

  /**
   * Closes every open block and returns the message.
   *
   * @throws `ProviderError` (`provider_stream_truncated`) when the stream ended without a
   *   `finish` part.
   */
  finish(): AssembledMessage {
    if (this.#finished === undefined) {
      throw new ProviderError({
        code: "provider_stream_truncated",
        message: `The ${this.#context.label} stream ended without a finish part. The partial reply was discarded: retry the turn.`,
        endpoint: this.#context.endpoint,
        retryable: true,
      });
    }
    this.#closeAll();
    return {
      id: this.#id,
      model: this.#model,
      content: this.#content,
      stopReason: this.#finished.stopReason,
      rawStopReason: this.#finished.raw,
      usage: this.#finished.usage,
    };
  }

  /** Closes the parts and tool inputs still open, as their end parts would. */
  #closeAll(): void {
    if (this.#parts.size > 0)
      for (const id of [...this.#parts.keys()]) this.#endPart(id, undefined);
    for (const [id, open] of this.#tools) this.#closeTool(id, open, open.input, open.metadata);
  }

  #start(): void {
    if (this.#started) return;
    this.#started = true;
    this.events.push({ type: "message_start", id: this.#id, model: this.#model });
  }

  #openBlock(block: StreamBlockStart): number {
    this.#start();
    const position = this.#content.length;
    this.#content.push(undefined as unknown as ContentBlock);
    this.events.push({ type: "block_start", index: position, block });
    return position;
  }

  #openPart(
    id: string,
    kind: "text" | "thinking",
    metadata: SharedV3ProviderMetadata | undefined,
  ): void {
    const open = this.#parts.get(id);
    if (open !== undefined) this.#endPart(id, undefined);
    this.#parts.set(id, { kind, position: -1, text: "", metadata });
  }

  #delta(
    id: string,
    kind: "text" | "thinking",
    delta: string,
    metadata: SharedV3ProviderMetadata | undefined,
  ): void {
    let open = this.#parts.get(id);
    if (open === undefined || open.kind !== kind) {
      // A delta without its start part: open one, as lenient decoders do.
      this.#openPart(id, kind, undefined);
      open = this.#parts.get(id)!;
    }
    if (metadata !== undefined) open.metadata = metadata;
    if (delta === "") return;
    if (open.position < 0) open.position = this.#openBlock({ type: kind });
    open.text += delta;
    this.events.push(
      kind === "text"
        ? { type: "text_delta", index: open.position, text: delta }
        : { type: "thinking_delta", index: open.position, thinking: delta },
    );
  }

  #endPart(id: string, metadata: SharedV3ProviderMetadata | undefined): void {
    const open = this.#parts.get(id);
    if (open === undefined) return;
    this.#parts.delete(id);
    if (metadata !== undefined) open.metadata = metadata;
    if (open.position < 0) {
      if (!hasProviderMetadata(open.metadata)) return;
      open.position = this.#openBlock({ type: open.kind });
    }
    const block: TextBlock | ThinkingBlock =
      open.kind === "text"
        ? { type: "text", text: open.text }
        : { type: "thinking", thinking: open.text, signature: "" };
    this.#content[open.position] = withProviderMetadata(block, open.metadata);
    this.events.push({ type: "block_stop", index: open.position });
  }

  #toolInputStart(
    id: string,
    name: string,
    providerExecuted: boolean | undefined,
    metadata: SharedV3ProviderMetadata | undefined,
  ): void {
    if (providerExecuted === true) {
      this.#skipped ??= new Set();
      this.#skipped.add(id);
      return;
    }
    if (this.#tools.has(id)) return;
    const position = this.#openBlock({ type: "tool_use", id, name });
    this.#toolCalls++;
    this.#tools.set(id, { position, name, input: "", metadata });
  }

  #toolCall(part: Extract<AiSdkStreamPart, { type: "tool-call" }>): void {
    const id = part.toolCallId;
    // The input as JSON text: a value JSON cannot take ends the call here (H27).
    const text = toolCallInputText(
      part.input,
      `sent stream part ${this.#count - 1}`,
      this.#context,
    );
    if (part.providerExecuted === true || this.#skipped?.has(id) === true) {
      this.#opaque(providerExecutedCall(id, part.toolName, text, part.providerMetadata));
      return;
    }
    let open = this.#tools.get(id);
    if (open === undefined) {
      const position = this.#openBlock({ type: "tool_use", id, name: part.toolName });
      this.#toolCalls++;
      open = { position, name: part.toolName, input: "", metadata: undefined };
      if (text !== "")
        this.events.push({ type: "tool_input_delta", index: position, partialJson: text });
    }
    this.#closeTool(id, open, text, part.providerMetadata ?? open.metadata);
  }

  #closeTool(
    id: string,
    open: OpenToolCall,
    input: unknown,
    metadata: SharedV3ProviderMetadata | undefined,
  ): void {
    this.#tools.delete(id);
    const block: ToolUseBlock = {
      type: "tool_use",
      id,
      name: open.name,
      ...parseToolInput(open.name, input),
    };
    this.#content[open.position] = withProviderMetadata(block, metadata);
    this.events.push({ type: "block_stop", index: open.position });
  }

  #opaque(block: OpaqueBlock): void {
    const position = this.#openBlock({ type: "opaque", blockType: block.block.type });
    this.#content[position] = block;
    this.events.push({ type: "block_stop", index: position });
  }

  #file(
    mediaType: string,
    data: string | Uint8Array,
    metadata: SharedV3ProviderMetadata | undefined,
  ): void {
    if (!mediaType.startsWith("image/")) return;
    // Lattice's stream events have no image block: the block only takes its place in the content.
    this.#start();
    const block: ImageBlock = {
      type: "image",
      source: { type: "base64", media_type: mediaType, data: toBase64(data) },
    };
    this.#content.push(withProviderMetadata(block, metadata));
  }
}

/** An `error` stream part, thrown so the caller can map it with its phase. */
export class StreamErrorPart {
  /** What the part carried. */
  readonly error: unknown;

  /**
   * @param error - The part's error.
   */
  constructor(error: unknown) {
    this.error = error;
  }
}
