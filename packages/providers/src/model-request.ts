import type { AnyToolDefinition } from "@lattice/tools";
import type { ModelMessage } from "./content-blocks.js";

/**
 * How the model may use tools: `auto` (it decides), `any` (it must call one), `none` (it must
 * not), or `tool` (it must call the named one).
 */
export type ModelToolChoice =
  | { readonly type: "auto" }
  | { readonly type: "any" }
  | { readonly type: "none" }
  | { readonly type: "tool"; readonly name: string };

/** A normalised model request, the same for every provider. */
export interface ModelRequest {
  /** The model id, for example `"claude-sonnet-4-6"` or `"deepseek-v4-flash"`. */
  readonly model: string;
  /** The system prompt. */
  readonly system?: string;
  /** The conversation so far, oldest first. */
  readonly messages: readonly ModelMessage[];
  /** The tools the model may call; their `inputSchema` is adjusted per provider. */
  readonly tools?: readonly AnyToolDefinition[];
  /** How the model may use the tools. Default: the API's default (`auto`). */
  readonly toolChoice?: ModelToolChoice;
  /** The most tokens the reply may have. */
  readonly maxTokens: number;
  /** Sampling temperature. Default: the API's default. */
  readonly temperature?: number;
  /** Strings that end the reply when generated. */
  readonly stopSequences?: readonly string[];
  /** Aborts the HTTP request at once; the stream then throws an error named `AbortError`. */
  readonly signal?: AbortSignal;
  /** Stream the reply over SSE. Default `true`; `false` makes one non-streaming request. */
  readonly stream?: boolean;
}
