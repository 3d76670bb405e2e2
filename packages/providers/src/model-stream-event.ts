import type { ModelResponse, ModelUsage, StopReason } from "./model-response.js";

/**
 * What kind of block a `block_start` event opens; tool_use blocks carry their id and name, and
 * opaque blocks (see `OpaqueBlock`) the API's own block type, for example `"server_tool_use"`.
 * An opaque block has no delta events: it is whole in the final response.
 */
export type StreamBlockStart =
  | { readonly type: "text" }
  | { readonly type: "thinking" }
  | { readonly type: "redacted_thinking" }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string }
  | { readonly type: "opaque"; readonly blockType: string };

/**
 * One event of a model call, normalised across providers and discriminated on `type`.
 *
 * `index` is the block's position in the final `response.message.content`. The last event of a
 * successful call is always `response`. `retry` is emitted before each retry, for traces.
 */
export type ModelStreamEvent =
  | { readonly type: "message_start"; readonly id?: string; readonly model?: string }
  | { readonly type: "block_start"; readonly index: number; readonly block: StreamBlockStart }
  | { readonly type: "text_delta"; readonly index: number; readonly text: string }
  | { readonly type: "thinking_delta"; readonly index: number; readonly thinking: string }
  | { readonly type: "signature_delta"; readonly index: number; readonly signature: string }
  | { readonly type: "tool_input_delta"; readonly index: number; readonly partialJson: string }
  | { readonly type: "block_stop"; readonly index: number }
  | { readonly type: "usage"; readonly usage: ModelUsage }
  | { readonly type: "stop"; readonly stopReason: StopReason }
  | {
      readonly type: "retry";
      /** 1 for the first retry, 2 for the second, ... */
      readonly attempt: number;
      /** How long the provider waits before the retry. */
      readonly delayMs: number;
      /** The HTTP status that caused the retry; absent for connection failures. */
      readonly status?: number;
      /** What failed, without any key. */
      readonly message: string;
    }
  | { readonly type: "response"; readonly response: ModelResponse };
