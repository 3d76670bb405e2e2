import type { ModelContextEdit, StopReason } from "../model-response.js";

/** A block of a scripted reply. */
export type ScriptedBlock =
  | { readonly type: "text"; readonly text: string }
  | {
      readonly type: "tool_use";
      /** The call id; generated (`toolu_…` or `call_…`) when absent. */
      readonly id?: string;
      readonly name: string;
      /** The input object, serialised with `JSON.stringify`. */
      readonly input?: unknown;
      /** The input's JSON text, sent verbatim instead of `input` (may be malformed on purpose). */
      readonly inputJson?: string;
    }
  | { readonly type: "thinking"; readonly thinking: string; readonly signature: string }
  | {
      readonly type: "refusal";
      /**
       * The refusal's text, as a model declines to answer under structured outputs: OpenAI
       * requests get it as `message.refusal` (`delta.refusal` pieces when streaming, with
       * `content: null`) and `finish_reason: "stop"`, as the API sends it; Anthropic requests
       * get a text block. The reply's stop reason defaults to `"refusal"`.
       */
      readonly text: string;
    }
  | {
      readonly type: "anthropic_block";
      /**
       * A Messages API block sent as it is, for example a `server_tool_use` or a
       * `web_search_tool_result`: streamed in `content_block_start` (an `input` field streams
       * as `input_json_delta` pieces, as the API streams server tool input). OpenAI requests
       * never see it.
       */
      readonly block: { readonly type: string; readonly [key: string]: unknown };
    };

/**
 * A scripted model reply. The server renders it in the protocol of the request (Anthropic or
 * OpenAI) and in its mode (SSE when the request says `stream: true`, else one JSON body).
 */
export interface ScriptedReply {
  /** The reply's blocks, in order. */
  readonly content: readonly ScriptedBlock[];
  /**
   * Default: `"refusal"` when the reply has a refusal block, else `"tool_use"` when it has a
   * tool_use block, else `"end_turn"`.
   */
  readonly stopReason?: StopReason;
  /**
   * Token counts to report, each overriding its default. `inputTokens` defaults to about a
   * quarter of the request's size (less the cached part), `outputTokens` to a quarter of the
   * reply's. The cache counts default to what the server's prompt-cache model computes for an
   * Anthropic request with `cache_control` breakpoints (see `createScriptedModelServer`), and
   * are otherwise not reported. OpenAI replies report `cacheReadInputTokens` as
   * `prompt_tokens_details.cached_tokens`, counted in `prompt_tokens` with the other input.
   */
  readonly usage?: {
    readonly inputTokens?: number;
    readonly outputTokens?: number;
    readonly cacheReadInputTokens?: number;
    readonly cacheCreationInputTokens?: number;
  };
  /** Wait this long before sending the response headers. */
  readonly delayMs?: number;
  /** Wait this long between SSE events (streaming only). */
  readonly chunkDelayMs?: number;
  /** Split text, thinking and tool input deltas into pieces of this many characters. Default: one delta per block. */
  readonly chunkSize?: number;
  /** The model name to report. Default: the request's model. */
  readonly model?: string;
  /**
   * Server-side context edits to report as applied (Anthropic only), rendered as
   * `context_management: { applied_edits: [{ type, cleared_input_tokens, cleared_tool_uses |
   * cleared_thinking_turns }] }` in `message_delta` when streaming, in the body otherwise.
   * Default: none applied (`applied_edits: []`) when the request has a `context_management`,
   * and no `context_management` at all when it has none. The server does not edit anything
   * itself.
   */
  readonly contextEdits?: readonly ModelContextEdit[];
}

/**
 * A scripted fault.
 *
 * - `hang` — accepts the request and never answers (until the client aborts or the server closes).
 * - `cut` — sends the reply (default: a short text and a tool call) and destroys the connection
 *   after `afterBytes` bytes of the body (default: half-way, which lands inside an event).
 * - `malformed_event` — a stream whose event number `afterEvents` (default 1) carries data that
 *   is not JSON; a non-streaming request gets a 200 body that is not JSON. The reply's
 *   `chunkDelayMs` spaces the events out (so the client sees content before the fault).
 * - `malformed_json` — a tool call whose input JSON does not parse (`json`, default
 *   `{"path": "unterminated`), for the tool `name` (default: the request's first tool).
 * - `error_event` — a stream that sends `afterEvents` events (default 2) of `reply` and then an
 *   error event (`errorType` default `overloaded_error`); a non-streaming request gets 529.
 */
export type ScriptedFault =
  | { readonly fault: "hang" }
  | { readonly fault: "cut"; readonly reply?: ScriptedReply; readonly afterBytes?: number }
  | {
      readonly fault: "malformed_event";
      readonly reply?: ScriptedReply;
      readonly afterEvents?: number;
    }
  | {
      readonly fault: "malformed_json";
      readonly name?: string;
      readonly id?: string;
      readonly json?: string;
    }
  | {
      readonly fault: "error_event";
      readonly reply?: ScriptedReply;
      readonly errorType?: string;
      readonly message?: string;
      readonly afterEvents?: number;
    };

/**
 * An HTTP error answer: `status` with optional `headers` (for example `retry-after-ms`) and
 * `body` (default: an API-shaped error body for the request's protocol).
 */
export interface ScriptedHttpError {
  readonly status: number;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: unknown;
  /** Wait this long before answering. */
  readonly delayMs?: number;
}

/** One scripted answer of the server: a reply, a fault, or an HTTP error. */
export type ScriptedTurn = ScriptedReply | ScriptedFault | ScriptedHttpError;

/** A request the server received, as the log keeps it. */
export interface RecordedRequest {
  /** Which API the request spoke. */
  readonly protocol: "anthropic" | "openai";
  /** The HTTP method. */
  readonly method: string;
  /** The request path, for example `/v1/messages`. */
  readonly path: string;
  /**
   * The request headers, lower-cased; credential headers (`x-api-key`, `authorization`,
   * `proxy-authorization`, `api-key`, `cookie`, any name with auth, key, token, secret, cookie,
   * password, signature or credential in it) are `"[redacted]"`.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The parsed JSON body (`undefined` when it did not parse). */
  readonly body: unknown;
  /** Whether the body asked for streaming. */
  readonly stream: boolean;
}
