import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { estimateRequestTokens } from "./estimate-request-tokens.js";
import {
  firstToolName,
  header,
  presentedKey,
  readBody,
  redactHeaders,
} from "./incoming-request.js";
import { PromptCacheModel } from "./prompt-cache-model.js";
import {
  anthropicContextOverflowBody,
  anthropicErrorBody,
  renderAnthropicEvents,
  renderAnthropicMessage,
} from "./render-anthropic-reply.js";
import {
  openAiContextOverflowBody,
  openAiErrorBody,
  renderOpenAiCompletion,
  renderOpenAiEvents,
} from "./render-openai-reply.js";
import { type CacheUsage, resolveReply } from "./resolve-reply.js";
import type {
  RecordedRequest,
  ScriptedFault,
  ScriptedHttpError,
  ScriptedReply,
  ScriptedTurn,
} from "./scripted-turn.js";
import { validateAnthropicRequest } from "./validate-anthropic-request.js";
import { validateOpenAiRequest } from "./validate-openai-request.js";

const OPTION_KEYS: ReadonlySet<string> = new Set([
  "turns",
  "respond",
  "apiKey",
  "recordRequests",
  "validate",
  "contextWindow",
]);
const COUNT_TOKENS_PATH = "/v1/messages/count_tokens";

/** Options of {@link createScriptedModelServer}. Checked strictly: an unknown key throws. */
export interface ScriptedModelServerOptions {
  /** Turns served in order, one per model request, whatever the protocol. */
  readonly turns?: readonly ScriptedTurn[];
  /**
   * Answers a request when the queue is empty (for benchmarks and demos with many
   * conversations). Without it, a request with no turn left gets a 500 with
   * `x-should-retry: false`.
   */
  readonly respond?: (request: RecordedRequest) => ScriptedTurn | Promise<ScriptedTurn>;
  /** When set, requests with another key get a 401 with an API-shaped body. */
  readonly apiKey?: string;
  /** Keep every request in `requests`. Default `true`; turn off for long benchmarks. */
  readonly recordRequests?: boolean;
  /** Validate requests like the real APIs (400 on protocol mistakes). Default `true`. */
  readonly validate?: boolean;
  /**
   * The model's context window, in tokens (a positive integer). A messages or chat request
   * whose estimate (`estimateRequestTokens`: a quarter of its size, cached part included) is
   * larger is refused as the real API refuses it, without using a turn: Anthropic with a 400
   * `invalid_request_error` "prompt is too long: N tokens > W maximum", OpenAI with a 400
   * `context_length_exceeded` "This model's maximum context length is W tokens. However, your
   * messages resulted in N tokens. …". The request is still recorded. Default: no window.
   */
  readonly contextWindow?: number;
}

/** A running scripted model server on 127.0.0.1. */
export interface ScriptedModelServer {
  /** `http://127.0.0.1:PORT`. */
  readonly url: string;
  /** The `baseURL` for `anthropic()`: the same as `url`. */
  readonly anthropicBaseURL: string;
  /** The `baseURL` for `openaiCompatible()`: `url + "/v1"`. */
  readonly openaiBaseURL: string;
  /** Every request received, in order (unless `recordRequests: false`). */
  readonly requests: RecordedRequest[];
  /** Turns still queued. */
  readonly pendingTurns: number;
  /** Queues more turns, served after the ones already queued. */
  enqueue(...turns: ScriptedTurn[]): void;
  /** Stops the server and drops every open connection (hanging ones included). */
  close(): Promise<void>;
}

const DEFAULT_FAULT_REPLY: ScriptedReply = {
  content: [
    { type: "text", text: "Let me look that up for you." },
    { type: "tool_use", name: "lookup", input: { query: "weather in Paris", days: 3 } },
  ],
};

/**
 * Starts a scripted model server: a real HTTP server on 127.0.0.1 (random port) that speaks the
 * Anthropic Messages API (`POST /v1/messages`) and OpenAI Chat Completions
 * (`POST /v1/chat/completions`), streaming and not, and Anthropic's token counting
 * (`POST /v1/messages/count_tokens`, answered `{ "input_tokens": N }` with
 * `estimateRequestTokens` of the body, never using a turn).
 *
 * Each request is logged, checked like the real APIs would check it (400 with an API-shaped
 * error for protocol mistakes), then answered with the next scripted turn: a reply rendered in
 * the request's protocol and mode, a fault (`hang`, `cut`, `malformed_event`, `malformed_json`,
 * `error_event`), or an HTTP error with headers.
 *
 * Prompt caching: an Anthropic request carrying `cache_control` breakpoints is answered with
 * `cache_read_input_tokens` and `cache_creation_input_tokens`, from a simple deterministic model
 * kept per server: the prefix (tools, system, message blocks) up to each breakpoint is
 * remembered; a later request reads the longest remembered prefix that ends at or before its
 * last breakpoint and writes the rest up to that breakpoint; tokens are characters / 4. A
 * request without breakpoints reports no cache counts. A scripted reply's `usage` overrides any
 * count (and is the way to report cache reads to OpenAI requests).
 *
 * Context: with `contextWindow`, a request larger than the window gets the protocol's real
 * overflow error. An Anthropic request with `context_management` (validated, beta header
 * included) is answered with the reply's `contextEdits` as `context_management.applied_edits`
 * (none by default); the server does not clear anything itself.
 *
 * @example
 * ```ts
 * const server = await createScriptedModelServer({ turns: [{ content: [{ type: "text", text: "Hi" }] }] });
 * const provider = anthropic({ baseURL: server.anthropicBaseURL, apiKey: "test" });
 * // ...
 * await server.close();
 * ```
 *
 * @param options - {@link ScriptedModelServerOptions}.
 * @throws `UnknownOptionError` (as a rejection) for an unknown option.
 */
export async function createScriptedModelServer(
  options: ScriptedModelServerOptions = {},
): Promise<ScriptedModelServer> {
  assertKnownOptions(options, OPTION_KEYS, "createScriptedModelServer():");
  const contextWindow = options.contextWindow;
  if (
    contextWindow !== undefined &&
    (typeof contextWindow !== "number" || !Number.isInteger(contextWindow) || contextWindow < 1)
  ) {
    throw new InvalidOptionError(
      "createScriptedModelServer():",
      "contextWindow",
      `must be a positive integer number of tokens, received ${describeValue(contextWindow)}. Omit it for no window.`,
    );
  }
  const queue: ScriptedTurn[] = [...(options.turns ?? [])];
  const requests: RecordedRequest[] = [];
  const record = options.recordRequests !== false;
  const validate = options.validate !== false;
  const promptCache = new PromptCacheModel();
  let serial = 0;

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) {
        sendJson(res, 500, { error: { type: "api_error", message: String(error) } }, {});
      } else {
        res.destroy();
      }
    });
  });
  server.keepAliveTimeout = 30_000;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const raw = await readBody(req);
    const path = (req.url ?? "/").split("?")[0]!;
    const countTokens = path === COUNT_TOKENS_PATH;
    const protocol =
      path === "/v1/messages" || countTokens
        ? "anthropic"
        : path === "/v1/chat/completions"
          ? "openai"
          : undefined;
    const id = ++serial;
    const requestId = `req_scripted_${id}`;
    if (protocol === undefined || req.method !== "POST") {
      const message = `Not found: ${req.method} ${path}. The scripted server serves POST /v1/messages, POST ${COUNT_TOKENS_PATH} and POST /v1/chat/completions.`;
      const body = path.includes("chat")
        ? openAiErrorBody(404, message)
        : anthropicErrorBody(404, message, requestId);
      sendJson(res, 404, body, { "request-id": requestId });
      return;
    }
    let body: unknown;
    try {
      body = JSON.parse(raw);
    } catch {
      body = undefined;
    }
    const stream = !countTokens && (body as { stream?: unknown } | undefined)?.stream === true;
    const recorded: RecordedRequest = {
      protocol,
      method: req.method,
      path,
      headers: redactHeaders(req.headers),
      body,
      stream,
    };
    if (record) requests.push(recorded);
    const idHeaders: Record<string, string> =
      protocol === "anthropic" ? { "request-id": requestId } : { "x-request-id": requestId };
    const fail = (status: number, message: string, extra: Record<string, string> = {}): void => {
      const errorBody =
        protocol === "anthropic"
          ? anthropicErrorBody(status, message, requestId)
          : openAiErrorBody(status, message);
      sendJson(res, status, errorBody, { ...idHeaders, ...extra });
    };
    if (body === undefined) {
      fail(400, "The request body is not valid JSON.");
      return;
    }
    if (options.apiKey !== undefined && presentedKey(req, protocol) !== options.apiKey) {
      fail(401, protocol === "anthropic" ? "invalid x-api-key" : "Incorrect API key provided.");
      return;
    }
    if (validate) {
      const error =
        protocol === "anthropic"
          ? validateAnthropicRequest(body, { countTokens, betas: header(req, "anthropic-beta") })
          : validateOpenAiRequest(body);
      if (error !== undefined) {
        fail(400, error);
        return;
      }
    }
    const requestTokens = estimateRequestTokens(raw);
    if (countTokens) {
      sendJson(res, 200, { input_tokens: requestTokens }, idHeaders);
      return;
    }
    if (contextWindow !== undefined && requestTokens > contextWindow) {
      const overflow =
        protocol === "anthropic"
          ? anthropicContextOverflowBody(requestTokens, contextWindow, requestId)
          : openAiContextOverflowBody(requestTokens, contextWindow);
      sendJson(res, 400, overflow, idHeaders);
      return;
    }
    let turn = queue.shift();
    if (turn === undefined && options.respond !== undefined) turn = await options.respond(recorded);
    if (turn === undefined) {
      fail(
        500,
        "The scripted model server has no turn left for this request: enqueue more turns or pass respond.",
        { "x-should-retry": "false" },
      );
      return;
    }
    const request = body as {
      model?: unknown;
      tools?: unknown;
      stream_options?: { include_usage?: unknown };
      context_management?: unknown;
    };
    const model = typeof request.model === "string" ? request.model : "scripted-model";
    const context: TurnContext = {
      res,
      protocol,
      stream,
      serial: id,
      model,
      requestTokens,
      editsRequested:
        request.context_management !== undefined && request.context_management !== null,
      idHeaders,
      includeUsage: request.stream_options?.include_usage === true,
      firstToolName: firstToolName(request.tools, protocol),
      cache:
        protocol === "anthropic" && !("status" in turn) && !("fault" in turn)
          ? promptCache.measure(body)
          : undefined,
      fail,
    };
    if ("status" in turn) await serveHttpError(context, turn);
    else if ("fault" in turn) await serveFault(context, turn);
    else await serveReply(context, turn);
  }

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    anthropicBaseURL: url,
    openaiBaseURL: `${url}/v1`,
    requests,
    get pendingTurns() {
      return queue.length;
    },
    enqueue(...turns: ScriptedTurn[]) {
      queue.push(...turns);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
    },
  };
}

/** What serving one turn needs to know about its request. */
interface TurnContext {
  readonly res: ServerResponse;
  readonly protocol: "anthropic" | "openai";
  readonly stream: boolean;
  readonly serial: number;
  readonly model: string;
  /** The request's `estimateRequestTokens`. */
  readonly requestTokens: number;
  /** Whether the request has a `context_management` (the reply then reports applied edits). */
  readonly editsRequested: boolean;
  readonly idHeaders: Record<string, string>;
  readonly includeUsage: boolean;
  readonly firstToolName: string | undefined;
  /** The prompt-cache model's counts, for an Anthropic reply to a request with breakpoints. */
  readonly cache: CacheUsage | undefined;
  readonly fail: (status: number, message: string, extra?: Record<string, string>) => void;
}

async function serveHttpError(context: TurnContext, turn: ScriptedHttpError): Promise<void> {
  if (turn.delayMs !== undefined && !(await pause(context.res, turn.delayMs))) return;
  if (turn.body === undefined) {
    context.fail(turn.status, `Scripted error ${turn.status}.`, { ...turn.headers });
    return;
  }
  sendJson(context.res, turn.status, turn.body, { ...context.idHeaders, ...turn.headers });
}

async function serveReply(context: TurnContext, reply: ScriptedReply): Promise<void> {
  if (reply.delayMs !== undefined && !(await pause(context.res, reply.delayMs))) return;
  if (!context.stream) {
    sendRaw(context.res, 200, "application/json", renderBody(context, reply), context.idHeaders);
    return;
  }
  startStream(context);
  await writeEvents(context.res, renderStream(context, reply), reply.chunkDelayMs ?? 0);
}

/** Writes SSE events at once, or one by one `delayMs` apart, then ends the response. */
async function writeEvents(
  res: ServerResponse,
  events: readonly string[],
  delayMs: number,
): Promise<void> {
  if (delayMs <= 0) {
    res.end(events.join(""));
    return;
  }
  for (const event of events) {
    if (!(await pause(res, delayMs))) return;
    res.write(event);
  }
  res.end();
}

async function serveFault(context: TurnContext, turn: ScriptedFault): Promise<void> {
  const { res } = context;
  switch (turn.fault) {
    case "hang":
      // Answer nothing; the connection stays open until the client or close() drops it.
      return;
    case "cut": {
      const reply = turn.reply ?? DEFAULT_FAULT_REPLY;
      const bytes = Buffer.from(
        context.stream ? renderStream(context, reply).join("") : renderBody(context, reply),
      );
      const at = Math.min(turn.afterBytes ?? Math.floor(bytes.length / 2), bytes.length);
      if (context.stream) startStream(context);
      else res.writeHead(200, { "content-type": "application/json", ...context.idHeaders });
      res.write(bytes.subarray(0, at), () => setImmediate(() => res.destroy()));
      return;
    }
    case "malformed_event": {
      if (!context.stream) {
        sendRaw(res, 200, "application/json", '{"id": "broken", "content": [', context.idHeaders);
        return;
      }
      const reply = turn.reply ?? DEFAULT_FAULT_REPLY;
      const events = renderStream(context, reply);
      const at = Math.min(turn.afterEvents ?? 1, events.length);
      const bad =
        context.protocol === "anthropic"
          ? 'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_del\n\n'
          : 'data: {"id":"chatcmpl-broken","choices":[{"index":0,"delta":{"content":"x\n\n';
      startStream(context);
      await writeEvents(
        res,
        [...events.slice(0, at), bad, ...events.slice(at)],
        reply.chunkDelayMs ?? 0,
      );
      return;
    }
    case "malformed_json": {
      const reply: ScriptedReply = {
        content: [
          {
            type: "tool_use",
            name: turn.name ?? context.firstToolName ?? "unknown_tool",
            inputJson: turn.json ?? '{"path": "unterminated',
            ...(turn.id === undefined ? {} : { id: turn.id }),
          },
        ],
        chunkSize: 8,
      };
      await serveReply(context, reply);
      return;
    }
    case "error_event": {
      const errorType = turn.errorType ?? "overloaded_error";
      const message = turn.message ?? "Overloaded";
      if (!context.stream) {
        context.fail(529, message);
        return;
      }
      const reply = turn.reply ?? DEFAULT_FAULT_REPLY;
      const events = renderStream(context, reply);
      const at = Math.min(turn.afterEvents ?? 2, events.length);
      const error =
        context.protocol === "anthropic"
          ? `event: error\ndata: ${JSON.stringify({ type: "error", error: { type: errorType, message } })}\n\n`
          : `data: ${JSON.stringify({ error: { type: errorType, message, param: null, code: null } })}\n\n`;
      startStream(context);
      await writeEvents(res, [...events.slice(0, at), error], reply.chunkDelayMs ?? 0);
      return;
    }
  }
}

function renderBody(context: TurnContext, reply: ScriptedReply): string {
  const resolved = resolveReply(
    reply,
    context.protocol,
    context.serial,
    context.model,
    context.requestTokens,
    context.cache,
    context.editsRequested,
  );
  return context.protocol === "anthropic"
    ? renderAnthropicMessage(resolved, `msg_scripted_${context.serial}`)
    : renderOpenAiCompletion(resolved, `chatcmpl-scripted-${context.serial}`);
}

function renderStream(context: TurnContext, reply: ScriptedReply): string[] {
  const resolved = resolveReply(
    reply,
    context.protocol,
    context.serial,
    context.model,
    context.requestTokens,
    context.cache,
    context.editsRequested,
  );
  return context.protocol === "anthropic"
    ? renderAnthropicEvents(resolved, `msg_scripted_${context.serial}`)
    : renderOpenAiEvents(resolved, `chatcmpl-scripted-${context.serial}`, context.includeUsage);
}

function startStream(context: TurnContext): void {
  context.res.writeHead(200, {
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache",
    ...context.idHeaders,
  });
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  sendRaw(res, status, "application/json", JSON.stringify(body), headers);
}

function sendRaw(
  res: ServerResponse,
  status: number,
  contentType: string,
  text: string,
  headers: Record<string, string>,
): void {
  res.writeHead(status, {
    "content-type": contentType,
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** Waits `ms`; resolves `false` when the client went away meanwhile. */
function pause(res: ServerResponse, ms: number): Promise<boolean> {
  return new Promise((resolve) => {
    if (res.destroyed) {
      resolve(false);
      return;
    }
    const onClose = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      res.off("close", onClose);
      resolve(!res.destroyed);
    }, ms);
    res.once("close", onClose);
  });
}
