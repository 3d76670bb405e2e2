import type { AsyncDisposeWhereKnown } from "@lattice/core";
import type { AnyToolDefinition, ToolContext, ToolHandlerResult, ToolSource } from "@lattice/tools";
import {
  DEFAULT_REQUEST_TIMEOUT_MSEC,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type Tool,
} from "@modelcontextprotocol/client";
import { McpResponseTooLargeError } from "./bounded-response.js";
import { defineMcpTools } from "./define-mcp-tools.js";
import { McpConnectionError, McpToolCallError } from "./errors.js";
import type { McpToolInput } from "./json-schema-validator.js";
import { mapToolResult } from "./map-tool-result.js";
import { describeCause, McpConnection } from "./mcp-connection.js";
import {
  type McpServerOptions,
  type McpToolInfo,
  type McpWarning,
  type ResolvedMcpServerOptions,
  resolveMcpServerOptions,
} from "./mcp-server-options.js";
import type { SecretRedactor } from "./secret-redactor.js";

/**
 * An MCP server as a source of tools for Lattice agents: what {@link mcpServer} returns. Put
 * it in an agent's `tools` next to ordinary tools; close it with `close()`, `agent.close()` or
 * `await using`.
 */
export interface McpToolSource extends ToolSource, AsyncDisposeWhereKnown {
  /** The discriminant that tells a source from a tool definition. */
  readonly kind: "tool_source";
  /** The server's `name`. */
  readonly name: string;
  /** `"stdio"` for a `command` server, `"http"` for a `url` server. */
  readonly transport: "stdio" | "http";
  /**
   * The server's tools as Lattice tool definitions (M3): connects on the first call (one
   * connection shared by every caller), then returns the same array until the server says
   * its list changed. Aborting `signal` stops this caller's wait, not the shared connect.
   *
   * @throws {@link McpConnectionError} when the server cannot be started or reached, or two of
   *   its tools end with one name (M4); the message names the server and the cause.
   */
  tools(signal?: AbortSignal): Promise<readonly AnyToolDefinition[]>;
  /**
   * Closes the connection and ends a stdio server's process (M2). Calls in flight end as
   * `is_error` results. Safe to call twice; a later `tools()` connects again.
   */
  close(): Promise<void>;
}

/**
 * Describes an MCP server whose tools an agent may call (M1): started as a child process that
 * speaks MCP on stdio (`command`), or reached over Streamable HTTP (`url`).
 *
 * Nothing happens until an agent (or you) asks for the tools: the first run connects, and
 * every run and agent using the same source shares that connection (M2). The tools are named
 * `<name>__<tool>` (M4), validated against the server's input schema before each call (M5),
 * run concurrently when the server marks them `readOnlyHint` (M6); failures become `is_error`
 * results that name the server and the cause (M8).
 *
 * @example
 * ```ts
 * import { createAgent } from "agent-lattice";
 * import { mcpServer } from "@lattice/mcp";
 *
 * await using files = mcpServer({
 *   name: "fs",
 *   command: "npx",
 *   args: ["-y", "@modelcontextprotocol/server-filesystem", "./docs"],
 * });
 * const agent = createAgent({ model, provider, tools: [files] });
 * const result = await agent.run("Summarise ./docs/README.md");
 * ```
 *
 * @param options - {@link McpStdioServerOptions} (`command`) or {@link McpHttpServerOptions}
 *   (`url`), with the common options of {@link McpServerCommonOptions}.
 * @returns A {@link McpToolSource}; nothing is started yet.
 * @throws `UnknownOptionError` (from `@lattice/tools`) for an unknown option.
 * @throws `InvalidOptionError` (from `@lattice/tools`) for a bad value, for example a `url`
 *   that is not http(s).
 */
export function mcpServer(options: McpServerOptions): McpToolSource {
  const resolved = resolveMcpServerOptions(options);
  const source = new McpServerSource(resolved);
  const api: McpToolSource = {
    kind: "tool_source",
    name: resolved.name,
    transport: resolved.transport,
    tools: (signal) => source.tools(signal),
    close: () => source.close(),
    [Symbol.asyncDispose]: () => source.close(),
  };
  return Object.freeze(api);
}

/** How much of a server's own text (an error body, a JSON-RPC message) a message quotes. */
const MAX_QUOTED_CHARS = 2_000;

/** The state behind one `mcpServer()` value. */
class McpServerSource {
  readonly #options: ResolvedMcpServerOptions;
  /** The connection, or the connect in progress; `undefined` before the first and after one ends. */
  #connection: Promise<McpConnection> | undefined;
  /** The cached definitions; `undefined` when they must be listed (again). */
  #tools: readonly AnyToolDefinition[] | undefined;
  #listing: Promise<readonly AnyToolDefinition[]> | undefined;
  /** Bumped by `list_changed`, a new connection and `close()`: a listing of an older one is not cached. */
  #generation = 0;

  constructor(options: ResolvedMcpServerOptions) {
    this.#options = options;
  }

  async tools(signal?: AbortSignal): Promise<readonly AnyToolDefinition[]> {
    const cached = this.#tools;
    if (cached !== undefined) return cached;
    signal?.throwIfAborted();
    this.#listing ??= this.#list().finally(() => {
      this.#listing = undefined;
    });
    return signal === undefined ? this.#listing : raceAbort(this.#listing, signal);
  }

  async close(): Promise<void> {
    this.#generation++;
    this.#tools = undefined;
    const pending = this.#connection;
    this.#connection = undefined;
    if (pending === undefined) return;
    const connection = await pending.catch(() => undefined);
    await connection?.close(`mcp server "${this.#options.name}" was closed (close())`);
  }

  /** The live connection: the current one, or a new one when there is none or it ended. */
  #connect(): Promise<McpConnection> {
    const current = this.#connection;
    if (current !== undefined) {
      return current.then((connection) =>
        connection.alive ? connection : this.#reconnect(current),
      );
    }
    return this.#reconnect(undefined);
  }

  #reconnect(stale: Promise<McpConnection> | undefined): Promise<McpConnection> {
    // Another caller may have replaced the ended connection already.
    if (this.#connection !== stale && this.#connection !== undefined) return this.#connect();
    const generation = this.#generation;
    const opening = McpConnection.open(this.#options, {
      onToolsChanged: () => {
        this.#generation++;
        this.#tools = undefined;
      },
      onClosed: (connection) => {
        // The next tools() lists the tools of the next connection.
        this.#tools = undefined;
        void connection;
      },
    }).then(async (connection) => {
      if (generation !== this.#generation && this.#connection !== opening) {
        // close() ran while this connection was opening: it must not outlive it.
        await connection.close();
        throw new McpConnectionError(
          this.#options.name,
          `mcp server "${this.#options.name}" was closed while it was connecting. Call tools() again to reconnect.`,
        );
      }
      return connection;
    });
    this.#connection = opening;
    opening.catch(() => {
      if (this.#connection === opening) this.#connection = undefined;
    });
    return opening;
  }

  async #list(): Promise<readonly AnyToolDefinition[]> {
    let retried = false;
    for (;;) {
      const connection = await this.#connect();
      const generation = this.#generation;
      let listed: Tool[];
      // H22: a listing has a deadline, as the handshake does, whatever the SDK's default.
      const o = this.#options;
      const timeout = Math.min(o.timeoutMs ?? Number.POSITIVE_INFINITY, o.connectTimeoutMs);
      try {
        listed = (await connection.client.listTools(undefined, { timeout })).tools;
      } catch (error) {
        if (!retried && isSessionGone(error)) {
          // M10: the server ended the HTTP session; start a new one, once.
          retried = true;
          await connection.close();
          continue;
        }
        await connection.settled();
        const redact = o.redactor;
        const tooLarge = findTooLarge(error) ?? connection.tooLarge;
        const timedOut = error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout;
        let why = `${quote(describeCause(error), redact)}${connection.failure !== undefined ? ` (${connection.failure})` : ""}`;
        if (tooLarge !== undefined) why = tooLarge.message;
        else if (timedOut) {
          why = `the server did not answer tools/list within ${timeout} ms (${timeout === o.connectTimeoutMs ? "connectTimeoutMs" : "timeoutMs"}). Check that the server works, or give it more time`;
          // A server that does not answer is of no use: the next tools() connects again.
          await connection.close();
        }
        throw new McpConnectionError(
          o.name,
          redact.text(`mcp server "${o.name}": listing its tools failed: ${why}.`),
          { cause: redact.error(error) },
        );
      }
      const definitions = defineMcpTools(listed, {
        options: this.#options,
        call: (info, input, context) => this.#call(info, input, context),
        warn: (code, toolName, message) => this.#warn(code, toolName, message),
      });
      if (generation === this.#generation && connection.alive) this.#tools = definitions;
      return definitions;
    }
  }

  /** One call (M5 has validated the input already): M7–M10. */
  async #call(
    info: McpToolInfo,
    input: McpToolInput,
    context: ToolContext,
  ): Promise<ToolHandlerResult> {
    const o = this.#options;
    const { signal } = context;
    let retried = false;
    // H22: a call has a deadline in all, however often the server reports progress.
    const total = Math.min(o.timeoutMs ?? Number.POSITIVE_INFINITY, o.maxCallDurationMs);
    const deadline =
      o.timeoutMs !== undefined
        ? { timeout: total, maxTotalTimeout: total }
        : {
            timeout: Math.min(DEFAULT_REQUEST_TIMEOUT_MSEC, total),
            resetTimeoutOnProgress: true,
            maxTotalTimeout: total,
          };
    for (;;) {
      let connection: McpConnection;
      try {
        connection = await raceAbort(this.#connect(), signal);
      } catch (error) {
        if (signal.aborted) throw signal.reason ?? error;
        throw new McpToolCallError(
          o.name,
          info.name,
          `mcp server "${o.name}": tool "${info.name}" could not be called: ${describeCause(error)}`,
          { cause: error },
        );
      }
      // H18: tells this call's answer from another one when one is over the bound.
      const token = {};
      try {
        const result = await connection.runCall(token, () =>
          connection.client.callTool(
            { name: info.name, arguments: input },
            {
              signal,
              ...deadline,
              ...(o.onProgress !== undefined || context.reportProgress !== undefined
                ? {
                    onprogress: (progress) => {
                      // M9: progress becomes a tool_progress trace event of the run, and the
                      // source's own listener hears it too.
                      const message =
                        progress.message !== undefined
                          ? o.redactor.text(progress.message)
                          : undefined;
                      context.reportProgress?.({
                        progress: progress.progress,
                        ...(progress.total !== undefined ? { total: progress.total } : {}),
                        ...(message !== undefined ? { message } : {}),
                      });
                      o.onProgress?.({
                        serverName: o.name,
                        toolName: info.name,
                        latticeToolName: info.latticeName,
                        toolUseId: context.toolUseId,
                        progress: progress.progress,
                        ...(progress.total !== undefined ? { total: progress.total } : {}),
                        ...(message !== undefined ? { message } : {}),
                      });
                    },
                  }
                : {}),
            },
          ),
        );
        return o.redactor.result(mapToolResult(result));
      } catch (error) {
        if (signal.aborted) throw signal.reason ?? error;
        if (!retried && isSessionGone(error)) {
          // M10: the server ended the HTTP session; start a new one and call again, once.
          retried = true;
          await connection.close();
          continue;
        }
        await connection.settled();
        throw this.#callError(info, error, connection, token);
      }
    }
  }

  /** The error of a failed call, with the source's secrets redacted from it (H21). */
  #callError(
    info: McpToolInfo,
    error: unknown,
    connection: McpConnection,
    token: object,
  ): McpToolCallError {
    const o = this.#options;
    const failure = this.#describeCallError(info, error, connection, token);
    return new McpToolCallError(o.name, info.name, o.redactor.text(failure.message), {
      ...(failure.rpcCode !== undefined ? { rpcCode: failure.rpcCode } : {}),
      cause: o.redactor.error(error),
    });
  }

  /** What a failed call's message says (M8), and its JSON-RPC code. */
  #describeCallError(
    info: McpToolInfo,
    error: unknown,
    connection: McpConnection,
    token: object,
  ): { readonly message: string; readonly rpcCode?: number } {
    const o = this.#options;
    const redact = o.redactor;
    const what = `mcp server "${o.name}": tool "${info.name}"`;
    // H18: this call's answer was over maxResponseBytes (a body: this call's error; one SSE
    // event: the connection was ended for it), or another answer was and the connection ended.
    const own = findTooLarge(error);
    if (own !== undefined) return { message: `${what} failed: ${own.message}` };
    const closed = error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed;
    const tooLarge = closed ? connection.tooLarge : undefined;
    if (tooLarge !== undefined) {
      return {
        message: connection.endedFor(token)
          ? `${what} failed: ${tooLarge.message}`
          : `${what} failed: the connection to the server was ended because of another answer on it: ${tooLarge.message} This call's answer was lost with the connection; the next call reconnects.`,
      };
    }
    if (error instanceof ProtocolError) {
      return {
        message: `${what} failed with JSON-RPC error ${error.code}: ${quote(error.message, redact)}`,
        rpcCode: error.code,
      };
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
      const data = error.data as { timeout?: number; maxTotalTimeout?: number } | undefined;
      if (o.timeoutMs !== undefined && o.timeoutMs <= o.maxCallDurationMs) {
        return {
          message: `${what} timed out after ${o.timeoutMs} ms; the call was cancelled on the server.`,
        };
      }
      const overall = data?.maxTotalTimeout !== undefined || data?.timeout === o.maxCallDurationMs;
      return {
        message: overall
          ? `${what} timed out after ${o.maxCallDurationMs} ms (maxCallDurationMs); the call was cancelled on the server.`
          : `${what} timed out: the server sent nothing for ${data?.timeout ?? DEFAULT_REQUEST_TIMEOUT_MSEC} ms; the call was cancelled on the server.`,
      };
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) {
      const why = connection.failure ?? "the connection closed";
      return {
        message: `${what} failed: the connection to the server ended during the call (${why}). The next call reconnects.`,
      };
    }
    if (error instanceof SdkHttpError) {
      return {
        message: `${what} failed: HTTP ${error.status} from the server (${quote(error.message, redact)}).`,
      };
    }
    return { message: `${what} failed: ${quote(describeCause(error), redact)}` };
  }

  #warn(code: McpWarning["code"], toolName: string, raw: string): void {
    const message = this.#options.redactor.text(raw);
    const warning = { code, serverName: this.#options.name, toolName, message };
    const onWarning = this.#options.onWarning;
    if (onWarning !== undefined) onWarning(warning);
    else process.emitWarning(message, { code: "LATTICE_MCP" });
  }
}

/** The {@link McpResponseTooLargeError} among an error and its causes, if any. */
function findTooLarge(error: unknown): McpResponseTooLargeError | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current instanceof McpResponseTooLargeError) return current;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * A server's text as a message quotes it (H21): redacted first, then cut to at most
 * {@link MAX_QUOTED_CHARS} characters, so that a cut never leaves part of a secret.
 */
function quote(text: string, redactor: SecretRedactor): string {
  const safe = redactor.text(text);
  return safe.length <= MAX_QUOTED_CHARS
    ? safe
    : `${safe.slice(0, MAX_QUOTED_CHARS)}… (${safe.length - MAX_QUOTED_CHARS} more characters)`;
}

/** A Streamable HTTP session the server ended: it answers 404 to the old session id (M10). */
function isSessionGone(error: unknown): boolean {
  return error instanceof SdkHttpError && error.status === 404;
}

/** Waits for `promise`, or rejects with the signal's reason when it aborts first. */
function raceAbort<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
