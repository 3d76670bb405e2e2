import type { AsyncDisposeWhereKnown } from "@lattice/core";
import {
  type AnyToolDefinition,
  createToolDefinition,
  type NeedsApproval,
  type ToolContext,
  type ToolHandlerResult,
  type ToolSource,
} from "@lattice/tools";
import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  type Tool,
} from "@modelcontextprotocol/client";
import { McpConnectionError, McpToolCallError } from "./errors.js";
import { JsonSchemaCompiler, type McpToolInput } from "./json-schema-validator.js";
import { mapToolResult } from "./map-tool-result.js";
import { describeCause, McpConnection } from "./mcp-connection.js";
import {
  type McpServerOptions,
  type McpToolAnnotations,
  type McpToolInfo,
  type ResolvedMcpServerOptions,
  resolveMcpServerOptions,
} from "./mcp-server-options.js";
import { findNameCollision, latticeToolName } from "./tool-names.js";

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

/** The state behind one `mcpServer()` value. */
class McpServerSource {
  readonly #options: ResolvedMcpServerOptions;
  readonly #compiler = new JsonSchemaCompiler();
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
      try {
        listed = (await connection.client.listTools()).tools;
      } catch (error) {
        if (!retried && isSessionGone(error)) {
          // M10: the server ended the HTTP session; start a new one, once.
          retried = true;
          await connection.close();
          continue;
        }
        throw new McpConnectionError(
          this.#options.name,
          `mcp server "${this.#options.name}": listing its tools failed: ${describeCause(error)}${connection.failure !== undefined ? ` (${connection.failure})` : ""}.`,
          { cause: error },
        );
      }
      const definitions = this.#define(listed);
      if (generation === this.#generation && connection.alive) this.#tools = definitions;
      return definitions;
    }
  }

  /** The server's tools as Lattice definitions: filtered, named, validated (M3–M6). */
  #define(listed: readonly Tool[]): readonly AnyToolDefinition[] {
    const o = this.#options;
    const serverNames = new Set(listed.map((tool) => tool.name));
    for (const [option, names] of [
      ["include", o.include],
      ["exclude", o.exclude],
      [
        "needsApproval",
        typeof o.needsApproval === "object" ? new Set(Object.keys(o.needsApproval)) : undefined,
      ],
    ] as const) {
      for (const name of names ?? []) {
        if (!serverNames.has(name)) {
          this.#warn(
            "unknown_tool",
            name,
            `mcp server "${o.name}": the ${option} option names the tool "${name}", which the server does not list (it lists ${[...serverNames].map((n) => `"${n}"`).join(", ") || "no tools"}).`,
          );
        }
      }
    }
    const chosen = listed.filter(
      (tool) => (o.include === undefined || o.include.has(tool.name)) && !o.exclude?.has(tool.name),
    );
    const collision = findNameCollision(
      chosen.map((tool) => [tool.name, latticeToolName(o.prefix, tool.name)] as const),
    );
    if (collision !== undefined) {
      throw new McpConnectionError(
        o.name,
        `mcp server "${o.name}": the tools "${collision.first}" and "${collision.second}" both become "${collision.latticeName}" once prefixed and made to fit ^[a-zA-Z0-9_-]{1,64}$. Leave one out with include or exclude, or change the prefix option.`,
      );
    }
    const definitions: AnyToolDefinition[] = [];
    for (const tool of chosen) {
      const definition = this.#defineTool(tool);
      if (definition !== undefined) definitions.push(definition);
    }
    return Object.freeze(definitions);
  }

  #defineTool(tool: Tool): AnyToolDefinition | undefined {
    const o = this.#options;
    const latticeName = latticeToolName(o.prefix, tool.name);
    const inputSchema = tool.inputSchema as Record<string, unknown>;
    const compiled = this.#compiler.compile(inputSchema);
    if (!compiled.ok) {
      this.#warn(
        "invalid_input_schema",
        tool.name,
        `mcp server "${o.name}": skipped the tool "${tool.name}": its inputSchema is not valid JSON Schema (${compiled.reason}). The server's other tools are available.`,
      );
      return undefined;
    }
    const annotations: McpToolAnnotations = { ...(tool.annotations ?? {}) };
    const info: McpToolInfo = Object.freeze({
      serverName: o.name,
      name: tool.name,
      latticeName,
      ...(tool.title !== undefined ? { title: tool.title } : {}),
      description: tool.description ?? "",
      inputSchema,
      annotations,
    });
    const safe = concurrencyRule(o.isConcurrencySafe, info);
    const approval = approvalRule(o.needsApproval, info);
    try {
      return createToolDefinition({
        name: latticeName,
        description: tool.description ?? tool.title ?? annotations.title ?? "",
        kind: "mcp",
        schema: compiled.schema,
        inputSchema: inputSchema as { type: "object" },
        handler: (input: McpToolInput, context: ToolContext) => this.#call(info, input, context),
        ...(safe !== undefined ? { isConcurrencySafe: safe } : {}),
        ...(approval !== undefined ? { needsApproval: approval } : {}),
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        metadata: { mcp: { server: o.name, tool: tool.name, annotations } },
      });
    } catch (error) {
      this.#warn(
        "invalid_input_schema",
        tool.name,
        `mcp server "${o.name}": skipped the tool "${tool.name}": ${describeCause(error)}`,
      );
      return undefined;
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
      try {
        const result = await connection.client.callTool(
          { name: info.name, arguments: input },
          {
            signal,
            ...(o.timeoutMs !== undefined
              ? { timeout: o.timeoutMs, maxTotalTimeout: o.timeoutMs }
              : { resetTimeoutOnProgress: true }),
            ...(o.onProgress !== undefined || context.reportProgress !== undefined
              ? {
                  onprogress: (progress) => {
                    // M9: progress becomes a tool_progress trace event of the run, and the
                    // source's own listener hears it too.
                    context.reportProgress?.({
                      progress: progress.progress,
                      ...(progress.total !== undefined ? { total: progress.total } : {}),
                      ...(progress.message !== undefined ? { message: progress.message } : {}),
                    });
                    o.onProgress?.({
                      serverName: o.name,
                      toolName: info.name,
                      latticeToolName: info.latticeName,
                      toolUseId: context.toolUseId,
                      progress: progress.progress,
                      ...(progress.total !== undefined ? { total: progress.total } : {}),
                      ...(progress.message !== undefined ? { message: progress.message } : {}),
                    });
                  },
                }
              : {}),
          },
        );
        return mapToolResult(result);
      } catch (error) {
        if (signal.aborted) throw signal.reason ?? error;
        if (!retried && isSessionGone(error)) {
          // M10: the server ended the HTTP session; start a new one and call again, once.
          retried = true;
          await connection.close();
          continue;
        }
        await connection.settled();
        throw this.#callError(info, error, connection);
      }
    }
  }

  #callError(info: McpToolInfo, error: unknown, connection: McpConnection): McpToolCallError {
    const o = this.#options;
    const what = `mcp server "${o.name}": tool "${info.name}"`;
    if (error instanceof ProtocolError) {
      return new McpToolCallError(
        o.name,
        info.name,
        `${what} failed with JSON-RPC error ${error.code}: ${error.message}`,
        { rpcCode: error.code, cause: error },
      );
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) {
      const ms = o.timeoutMs ?? (error.data as { timeout?: number } | undefined)?.timeout;
      return new McpToolCallError(
        o.name,
        info.name,
        `${what} timed out${ms !== undefined ? ` after ${ms} ms` : ""}; the call was cancelled on the server.`,
        { cause: error },
      );
    }
    if (error instanceof SdkError && error.code === SdkErrorCode.ConnectionClosed) {
      const why = connection.failure ?? "the connection closed";
      return new McpToolCallError(
        o.name,
        info.name,
        `${what} failed: the connection to the server ended during the call (${why}). The next call reconnects.`,
        { cause: error },
      );
    }
    if (error instanceof SdkHttpError) {
      return new McpToolCallError(
        o.name,
        info.name,
        `${what} failed: HTTP ${error.status} from the server (${error.message}).`,
        { cause: error },
      );
    }
    return new McpToolCallError(o.name, info.name, `${what} failed: ${describeCause(error)}`, {
      cause: error,
    });
  }

  #warn(code: "invalid_input_schema" | "unknown_tool", toolName: string, message: string): void {
    const warning = { code, serverName: this.#options.name, toolName, message };
    const onWarning = this.#options.onWarning;
    if (onWarning !== undefined) onWarning(warning);
    else process.emitWarning(message, { code: "LATTICE_MCP" });
  }
}

/** M6: `readOnlyHint: true` means concurrency-safe, unless the source says otherwise. */
function concurrencyRule(
  option: ResolvedMcpServerOptions["isConcurrencySafe"],
  info: McpToolInfo,
): ((input: McpToolInput) => boolean) | undefined {
  if (option === true) return () => true;
  if (option === false) return undefined;
  if (typeof option === "function") return (input) => option(info, input) === true;
  return info.annotations.readOnlyHint === true ? () => true : undefined;
}

function approvalRule(
  option: ResolvedMcpServerOptions["needsApproval"],
  info: McpToolInfo,
): NeedsApproval<McpToolInput> | undefined {
  if (option === undefined) return undefined;
  if (option === true) return true;
  if (typeof option === "function") return (input, context) => option(info, input, context);
  return Object.hasOwn(option, info.name) ? option[info.name] : undefined;
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
