import { AsyncLocalStorage } from "node:async_hooks";
import type { ChildProcess } from "node:child_process";
import { safeEndpoint } from "@lattice/providers/internal";
import {
  Client,
  SdkError,
  SdkErrorCode,
  StreamableHTTPClientTransport,
} from "@modelcontextprotocol/client";
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio";
import { boundResponse, McpResponseTooLargeError } from "./bounded-response.js";
import { McpConnectionError } from "./errors.js";
import { outputSchemaValidator } from "./json-schema-validator.js";
import type { ResolvedMcpServerOptions } from "./mcp-server-options.js";

/** How this client introduces itself to servers. */
const CLIENT_INFO = { name: "lattice-mcp", version: "0.1.0" } as const;
/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_TAIL_CHARS = 2_000;
/** How long to wait for an exiting server's exit code and last stderr. */
const EXIT_GRACE_MS = 1_000;

/**
 * How the SDK's stdio transport (`@modelcontextprotocol/client` 2.4.0, pinned in
 * package.json) reports a message over its `maxBufferSize` through `onerror`, before it ends
 * the process: `ReadBuffer exceeded maximum size of N bytes`. The SDK exports no error code
 * for it; a test (mcp-server-deadlines.test.ts) fails if a new SDK version words it otherwise.
 */
export const STDIO_MESSAGE_TOO_LARGE = /^ReadBuffer exceeded maximum size of \d+ bytes/;

/**
 * The SDK's stdio transport, telling when its process started. The SDK does not expose the
 * child process, whose exit code the error messages need (M8): its `_process` field is read
 * once, right after the spawn (the SDK version is pinned and the tests cover it).
 */
class WatchedStdioTransport extends StdioClientTransport {
  onStarted: (() => void) | undefined;

  get child(): ChildProcess | undefined {
    return (this as unknown as { _process?: ChildProcess })._process;
  }

  override async start(): Promise<void> {
    await super.start();
    this.onStarted?.();
  }
}

/** What a connection tells its source. */
export interface McpConnectionEvents {
  /** The server sent `notifications/tools/list_changed`. */
  readonly onToolsChanged: () => void;
  /** The connection ended (closed by us, the server exited, or the transport broke). */
  readonly onClosed: (connection: McpConnection) => void;
}

/**
 * One live connection to an MCP server: the SDK's `Client` and its transport, plus what is
 * needed to explain a failure (a stdio server's exit code and stderr tail, the transport's
 * last error). A source makes a new one after the previous one ended.
 */
export class McpConnection {
  /** The MCP SDK client. */
  readonly client: Client;
  readonly #options: ResolvedMcpServerOptions;
  readonly #events: McpConnectionEvents;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** Why the connection ended, when it was not closed on purpose. */
  #failure: string | undefined;
  /** The answer over `maxResponseBytes` the connection was ended for (H18). */
  #tooLarge: McpResponseTooLargeError | undefined;
  /** Why the connection was closed on purpose, when the closer said. */
  #closeReason: string | undefined;
  /** The end of a stdio server's stderr, as written: redacted when it is shown (H21). */
  #stderrTail = "";
  /** Which call a `fetch` carries (H18: the answer over the bound is named to its own call). */
  readonly #calls = new AsyncLocalStorage<object>();
  /**
   * The call whose answer was over the bound, when the connection was ended for one: `null`
   * for an HTTP answer to no call (the standing GET stream), `undefined` when the transport
   * cannot tell (stdio).
   */
  #tooLargeCall: object | null | undefined;
  /** Whether the handshake failed for its deadline (H22). */
  #handshakeLate = false;
  /** Aborted when the connection closes: every request of the HTTP transport ends with it. */
  readonly #closeController = new AbortController();
  #child: ChildProcess | undefined;
  #exit: { readonly code: number | null; readonly signal: NodeJS.Signals | null } | undefined;
  #exited: Promise<void> | undefined;

  private constructor(options: ResolvedMcpServerOptions, events: McpConnectionEvents) {
    this.#options = options;
    this.#events = events;
    // Tools' outputSchema are checked on the linear-time engine too (H19).
    this.client = new Client(CLIENT_INFO, {
      capabilities: {},
      jsonSchemaValidator: outputSchemaValidator,
    });
  }

  /**
   * Starts (stdio) or reaches (HTTP) the server and completes the MCP handshake.
   *
   * @param options - The source's options.
   * @param events - Where to report list changes and the end of the connection.
   * @throws {@link McpConnectionError} naming the server and the cause: for stdio, the
   *   command, its exit code and the tail of its stderr.
   */
  static async open(
    options: ResolvedMcpServerOptions,
    events: McpConnectionEvents,
  ): Promise<McpConnection> {
    const connection = new McpConnection(options, events);
    await connection.#open();
    return connection;
  }

  /** Whether the connection can still carry calls. */
  get alive(): boolean {
    return !this.#closed;
  }

  /** The stdio server's process id, while it runs. */
  get pid(): number | undefined {
    return this.#exit === undefined ? this.#child?.pid : undefined;
  }

  /**
   * Why the connection ended, for a call's error message: the server's exit code and stderr
   * tail, or the transport's error. `undefined` while it is alive or when closed on purpose.
   */
  get failure(): string | undefined {
    if (this.#closeReason !== undefined) return this.#closeReason;
    if (this.#tooLarge !== undefined) return this.#tooLarge.message;
    if (this.#exit !== undefined) return this.#exitDescription();
    return this.#failure;
  }

  /**
   * The message over `maxResponseBytes` the connection was ended for (H18): one SSE event, or
   * one stdio message; `undefined` when there was none.
   */
  get tooLarge(): McpResponseTooLargeError | undefined {
    return this.#tooLarge;
  }

  /**
   * Runs one call's request: what the connection learns about its answer is told to this
   * call (see {@link McpConnection.endedFor}).
   *
   * @param token - The call's own token.
   * @param send - Sends the request.
   */
  runCall<T>(token: object, send: () => Promise<T>): Promise<T> {
    return this.#calls.run(token, send);
  }

  /**
   * Whether the connection may have been ended for the answer to the call of `token` (one SSE
   * event over `maxResponseBytes`): `false` when it was another answer. Over stdio, which does
   * not tell one answer from another, always `true`.
   *
   * @param token - The call's token, as given to {@link McpConnection.runCall}.
   */
  endedFor(token: object): boolean {
    return this.#tooLargeCall === undefined || this.#tooLargeCall === token;
  }

  /** When the connection has ended: waits (briefly) for the stdio server's exit code and last stderr. */
  async settled(): Promise<void> {
    if (this.#closed && this.#exited !== undefined) await withTimeout(this.#exited, EXIT_GRACE_MS);
  }

  /**
   * Closes the connection: ends the stdio process (stdin, then SIGTERM, then SIGKILL).
   *
   * @param reason - Why, for the messages of calls still in flight: `"the source was closed"`.
   */
  close(reason?: string): Promise<void> {
    if (reason !== undefined && !this.#closed && this.#failure === undefined) {
      this.#closeReason = reason;
    }
    this.#closing ??= (async () => {
      this.#markClosed();
      await this.client.close().catch(() => {});
      // Whatever request is still open (a POST the server never answers) ends now.
      this.#closeController.abort();
      if (this.#exited !== undefined) await withTimeout(this.#exited, 5_000);
    })();
    return this.#closing;
  }

  async #open(): Promise<void> {
    const options = this.#options;
    this.client.onclose = () => this.#markClosed();
    this.client.onerror = (error) => this.#onTransportError(error);
    this.client.setNotificationHandler("notifications/tools/list_changed", () => {
      this.#events.onToolsChanged();
    });
    if (options.transport === "stdio") {
      const transport = new WatchedStdioTransport({
        command: options.command,
        args: [...options.args],
        ...(options.env !== undefined ? { env: { ...options.env } } : {}),
        ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
        stderr: "pipe",
        // H18: one message (line) holds at most this; the SDK then ends the process.
        maxBufferSize: options.maxResponseBytes,
      });
      transport.onStarted = () => this.#watchChild(transport);
      transport.stderr?.on("data", (chunk: Buffer | string) => {
        const text = String(chunk);
        // H21: more than is shown is kept, so that a secret cut at the start is redacted whole.
        const kept = STDERR_TAIL_CHARS + options.redactor.overlap;
        this.#stderrTail = (this.#stderrTail + text).slice(-kept);
        options.onStderr?.(text);
      });
      try {
        await this.#handshake(transport);
      } catch (error) {
        // A process that started and then died: its exit code and last words explain why.
        // The message is written before this connection ends a process that is still running.
        await this.settled();
        const failure = this.#stdioStartError(error);
        if (this.#exit === undefined) this.#child?.kill("SIGTERM");
        await this.close();
        throw failure;
      }
      return;
    }
    const transport = new StreamableHTTPClientTransport(options.url, {
      ...(options.headers !== undefined
        ? { requestInit: { headers: { ...options.headers } } }
        : {}),
      fetch: (url, init) => this.#fetch(url, init),
      // The SDK gives up on a dead stream after these retries (about 1 s): calls in flight
      // then fail fast instead of waiting for their timeout.
      reconnectionOptions: {
        initialReconnectionDelay: 200,
        maxReconnectionDelay: 1_000,
        reconnectionDelayGrowFactor: 2,
        maxRetries: 2,
      },
    });
    try {
      await this.#handshake(transport);
    } catch (error) {
      await this.close();
      const redact = options.redactor;
      const why =
        this.#tooLarge?.message ??
        (error instanceof McpResponseTooLargeError ? error.message : describeCause(error));
      throw new McpConnectionError(
        options.name,
        redact.text(
          `mcp server "${options.name}": could not connect to ${this.#where()}: ${why}. Check that the server runs and that the URL is its MCP endpoint.`,
        ),
        { cause: redact.error(error) },
      );
    }
  }

  /**
   * The MCP handshake, within `connectTimeoutMs` as a whole (H22): the SDK bounds the
   * `initialize` request, but then awaits the `notifications/initialized` POST without a
   * deadline. At the deadline the caller closes the connection, which aborts its requests
   * (after it has read a stdio server's state, for the message).
   */
  async #handshake(
    transport: WatchedStdioTransport | StreamableHTTPClientTransport,
  ): Promise<void> {
    const ms = this.#options.connectTimeoutMs;
    const late = () => {
      this.#handshakeLate = true;
      return new Error(`the MCP handshake did not finish within ${ms} ms (connectTimeoutMs)`);
    };
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(late()), ms);
    });
    try {
      await Promise.race([this.client.connect(transport, { timeout: ms }), deadline]);
    } catch (error) {
      // The SDK's own timeout of `initialize` says the same.
      if (error instanceof SdkError && error.code === SdkErrorCode.RequestTimeout) throw late();
      throw error;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * `fetch` for the HTTP transport. Every body is bounded by `maxResponseBytes` (H18): a body
   * over it fails the request it answers; one SSE event over it ends the connection (the SDK
   * would otherwise wait for the answer until the call's timeout), and the calls in flight fail
   * naming the bound. A response stream that breaks while it carries a call's answer means the
   * server (or the way to it) is gone, so the connection fails at once and the calls in flight
   * become `is_error` results instead of waiting for their timeouts.
   */
  async #fetch(url: string | URL, init?: RequestInit): Promise<Response> {
    const call = this.#calls.getStore() ?? null;
    const closing = this.#closeController.signal;
    const signal = init?.signal != null ? AbortSignal.any([init.signal, closing]) : closing;
    const response = await fetch(url, { ...init, signal });
    if (response.type === "opaqueredirect") return response;
    const post = init?.method === "POST";
    return boundResponse(response, this.#options.maxResponseBytes, {
      onTooLarge: (error, eventStream) => {
        if (eventStream) this.#failTooLarge(error, call);
      },
      onBroken: (error, eventStream) => {
        if (post && eventStream && !this.#closed && init?.signal?.aborted !== true) {
          this.#fail(`the HTTP stream carrying a call broke (${describeCause(error)})`);
        }
      },
    });
  }

  /** Ends the connection for an answer over `maxResponseBytes`: its message names the bound. */
  #failTooLarge(error: McpResponseTooLargeError, call?: object | null): void {
    if (this.#closed) return;
    this.#tooLarge = error;
    this.#tooLargeCall = call;
    this.#fail(error.message);
  }

  #onTransportError(error: Error): void {
    // The SDK's stdio transport reports a message over its buffer this way, then ends the
    // process: the calls in flight are told the bound, not the exit code (H22).
    if (STDIO_MESSAGE_TOO_LARGE.test(error.message)) {
      this.#failTooLarge(new McpResponseTooLargeError("a message", this.#options.maxResponseBytes));
      return;
    }
    // The SDK's HTTP transport reports a stream it could not re-establish this way; the
    // connection is then of no use, and calls waiting on it would wait for their timeouts.
    if (/^Maximum reconnection attempts/.test(error.message)) {
      this.#fail(`the connection to ${this.#where()} was lost (${error.message})`);
    }
  }

  /** Ends the connection because it broke: calls in flight reject with "Connection closed". */
  #fail(reason: string): void {
    if (this.#closed) return;
    this.#failure = reason;
    void this.close();
  }

  #markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#events.onClosed(this);
  }

  #watchChild(transport: WatchedStdioTransport): void {
    const child = transport.child;
    if (child === undefined || this.#child !== undefined) return;
    this.#child = child;
    if (child.exitCode !== null || child.signalCode !== null) {
      this.#exit = { code: child.exitCode, signal: child.signalCode };
      this.#exited = Promise.resolve();
      return;
    }
    liveChildren.add(child);
    ensureExitHook();
    this.#exited = new Promise((resolve) => {
      child.once("close", (code, signal) => {
        liveChildren.delete(child);
        this.#exit = { code, signal };
        resolve();
      });
    });
  }

  #stdioStartError(error: unknown): McpConnectionError {
    const options = this.#options;
    if (options.transport !== "stdio") throw new Error("unreachable");
    const command = [options.command, ...options.args].map(quoteArg).join(" ");
    const name = options.name;
    const code = (error as { code?: unknown } | null)?.code;
    if (code === "ENOENT") {
      return new McpConnectionError(
        name,
        `mcp server "${name}" could not start: the command "${options.command}" was not found (${describeCause(error)}). Check the command and PATH${options.cwd !== undefined ? ` (cwd: ${options.cwd})` : ""}.`,
        { command, cause: error },
      );
    }
    // A server that prints the secret of a credential-named env variable does not leak it (H21).
    const redact = options.redactor;
    const tail = redact.tail(this.#stderrTail, STDERR_TAIL_CHARS).trim();
    const stderr = tail === "" ? "It wrote nothing to stderr." : `Its stderr ended with:\n${tail}`;
    // H22: a message over the bound made the SDK end the process: that is the cause.
    if (this.#tooLarge !== undefined) {
      return new McpConnectionError(
        name,
        redact.text(
          `mcp server "${name}" could not start: \`${command}\` failed the MCP handshake: ${this.#tooLarge.message}`,
        ),
        {
          command,
          ...(this.#exit !== undefined ? { exitCode: this.#exit.code } : {}),
          stderrTail: tail,
          cause: redact.error(error),
        },
      );
    }
    if (this.#exit !== undefined) {
      return new McpConnectionError(
        name,
        `mcp server "${name}" could not start: \`${command}\` ${this.#exitPhrase()} before the MCP handshake finished. ${stderr}\nCheck that the command starts an MCP server on stdio.`,
        { command, exitCode: this.#exit.code, stderrTail: tail, cause: redact.error(error) },
      );
    }
    const why = this.#handshakeLate
      ? ` within ${options.connectTimeoutMs} ms (connectTimeoutMs)`
      : ` (${describeCause(error)})`;
    return new McpConnectionError(
      name,
      redact.text(
        `mcp server "${name}" could not start: \`${command}\` did not complete the MCP handshake${why}. ${stderr}\nCheck that the command starts an MCP server on stdio.`,
      ),
      { command, stderrTail: tail, cause: redact.error(error) },
    );
  }

  #exitPhrase(): string {
    const exit = this.#exit;
    if (exit === undefined) return "is running";
    return exit.signal !== null ? `was ended by ${exit.signal}` : `exited with code ${exit.code}`;
  }

  #exitDescription(): string {
    const tail = lastLines(this.#options.redactor.tail(this.#stderrTail, STDERR_TAIL_CHARS), 5);
    return `the server process ${this.#exitPhrase()}${tail === "" ? "" : `; its stderr ended with: ${tail}`}`;
  }

  #where(): string {
    const options = this.#options;
    // H21: never the URL as given: without user info, query and fragment.
    return options.transport === "http" ? safeEndpoint(options.url.href) : `\`${options.command}\``;
  }
}

/** Stdio servers still running, ended when this process exits (no orphan survives it, M2). */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function ensureExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once("exit", () => {
    for (const child of liveChildren) {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already gone.
      }
    }
  });
}

/** A short description of a thrown value, with the network cause `fetch` hides. */
export function describeCause(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = (error as { cause?: unknown }).cause;
  const inner = cause instanceof Error && cause.message !== "" ? ` (${cause.message})` : "";
  return `${error.message}${inner}`;
}

function lastLines(text: string, count: number): string {
  return text.trim().split(/\r?\n/).slice(-count).join(" | ");
}

function quoteArg(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : JSON.stringify(arg);
}

async function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    promise,
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref?.();
    }),
  ]);
  clearTimeout(timer);
}
