import { safeEndpoint } from "@lattice/providers/internal";
import {
  InvalidOptionError,
  type JsonSchema,
  type NeedsApproval,
  type ToolContext,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { DEFAULT_MAX_RESPONSE_BYTES } from "./bounded-response.js";
import type { McpToolInput } from "./json-schema-validator.js";
import { SecretRedactor } from "./secret-redactor.js";
import { describeUrlSecrets } from "./url-secrets.js";

/** What an MCP server says about one of its tools' behaviour (all hints, none guaranteed). */
export interface McpToolAnnotations {
  /** A human-readable title. */
  readonly title?: string;
  /** The tool does not change its environment. Lattice runs such calls concurrently (M6). */
  readonly readOnlyHint?: boolean;
  /** The tool may destroy or overwrite data (meaningful when not read-only). */
  readonly destructiveHint?: boolean;
  /** Calling the tool twice with the same input has no further effect. */
  readonly idempotentHint?: boolean;
  /** The tool reaches an open world (the web), not a closed one (a database). */
  readonly openWorldHint?: boolean;
}

/**
 * One tool as the MCP server listed it, for the source's option callbacks; its title,
 * description and schema carry none of the source's secrets (H21).
 */
export interface McpToolInfo {
  /** The `name` of the `mcpServer()` that lists the tool. */
  readonly serverName: string;
  /** The tool's name on the server (before prefixing and sanitising). */
  readonly name: string;
  /** The name the model sees: prefixed and sanitised (M4). */
  readonly latticeName: string;
  /** The tool's title, when the server gave one. */
  readonly title?: string;
  /** The tool's description, `""` when the server gave none. */
  readonly description: string;
  /** The JSON Schema of the tool's input, as the server listed it (secrets redacted). */
  readonly inputSchema: JsonSchema;
  /** The server's annotations; `{}` when it gave none. */
  readonly annotations: McpToolAnnotations;
}

/**
 * Which calls need a person's decision before they run (R13), for a whole source:
 * - `true`: every call of every tool;
 * - a function of the tool, the validated input and the call's context, for example
 *   `(tool) => tool.annotations.destructiveHint === true`;
 * - a record from the server's tool names to `true` or a function of the input, for
 *   example `{ delete_file: true }`. Tools not named never need a decision.
 */
export type McpNeedsApproval =
  | true
  | ((tool: McpToolInfo, input: McpToolInput, context: ToolContext) => boolean | Promise<boolean>)
  | Readonly<Record<string, NeedsApproval<McpToolInput>>>;

/**
 * Which calls may overlap other calls (M6), overriding the default (`readOnlyHint: true`
 * means concurrency-safe, anything else means the call runs alone): `true` or `false` for
 * every tool of the source, or a function of the tool and the validated input.
 */
export type McpConcurrencySafe = boolean | ((tool: McpToolInfo, input: McpToolInput) => boolean);

/** Something the source skipped or could not honour, reported through `onWarning`. */
export interface McpWarning {
  /**
   * - `"invalid_input_schema"`: the tool's `inputSchema` is not valid JSON Schema, or not an
   *   object schema; the tool is skipped, the others work.
   * - `"unknown_tool"`: `include`, `exclude` or `needsApproval` names a tool the server does
   *   not list.
   * - `"unchecked_pattern"`: a `pattern` (or `patternProperties` key) of the tool's
   *   `inputSchema` or `outputSchema` cannot run on the linear-time engine (a lookahead, a
   *   backreference, over the size bounds or the budget); inputs (or `structuredContent`) are
   *   not checked against it, the rest of the schema is (H19). Told when the tools are listed,
   *   or, for a pattern the engine refuses when it compiles it, on the tool's first call.
   * - `"unchecked_schema"`: the tool's `inputSchema` or `outputSchema` is over the size
   *   Lattice compiles (128 KiB of JSON); it is not checked locally at all (the server still
   *   checks its input) (H19).
   */
  readonly code: "invalid_input_schema" | "unknown_tool" | "unchecked_pattern" | "unchecked_schema";
  /** The source's name. */
  readonly serverName: string;
  /** The tool concerned, by its name on the server. */
  readonly toolName: string;
  /** What happened, naming the server and the tool. */
  readonly message: string;
}

/** A progress notification the server sent for a call in flight (M9). */
export interface McpProgressEvent {
  /** The source's name. */
  readonly serverName: string;
  /** The tool's name on the server. */
  readonly toolName: string;
  /** The tool's name as the model sees it. */
  readonly latticeToolName: string;
  /** The tool_use id of the call. */
  readonly toolUseId: string;
  /** The progress so far; grows with every notification. */
  readonly progress: number;
  /** The total, when the server knows it. */
  readonly total?: number;
  /** The server's description of the step, when it gave one. */
  readonly message?: string;
}

/** The options every MCP server takes, whatever its transport. */
export interface McpServerCommonOptions {
  /**
   * The server's name: named in every message and, by default, the prefix of its tools'
   * names (`fs` → `fs__read_file`). 1 to 64 letters, digits, `_` or `-`.
   */
  readonly name: string;
  /** Only these tools (by their names on the server). Default: every tool. */
  readonly include?: readonly string[];
  /** Not these tools (by their names on the server). Applied after `include`. */
  readonly exclude?: readonly string[];
  /**
   * What goes before each tool's name (M4): a string, or `false` for none. Default
   * `"<name>__"`. The result is sanitised to `^[a-zA-Z0-9_-]{1,64}$`.
   */
  readonly prefix?: string | false;
  /** Overrides the concurrency mapping of `readOnlyHint` (M6). */
  readonly isConcurrencySafe?: McpConcurrencySafe;
  /** Which calls need a person's decision (R13). Default: none. */
  readonly needsApproval?: McpNeedsApproval;
  /**
   * The longest a call may take, in milliseconds (M9): at the deadline the call is cancelled
   * on the server (`notifications/cancelled`) and answered `is_error`; it is also the tools'
   * `timeoutMs` (R20). Listing the tools (`tools/list`) waits at most this long too, or
   * `connectTimeoutMs` when that is shorter (H22). Default: none; a call then ends when the
   * server has sent nothing for the MCP SDK's 60 s request timeout (each progress
   * notification restarts it), and at the latest after `maxCallDurationMs`.
   */
  readonly timeoutMs?: number;
  /**
   * The longest a call may take in all, in milliseconds, however often the server reports
   * progress (H22): at this deadline the call is cancelled on the server and answered
   * `is_error`. Default 600,000 (10 minutes). `timeoutMs`, when set and shorter, wins.
   */
  readonly maxCallDurationMs?: number;
  /**
   * The longest connecting may take, in milliseconds: starting the process (stdio), the MCP
   * handshake (`initialize`), and listing the tools (`tools/list`), each (H22). Default 30,000.
   */
  readonly connectTimeoutMs?: number;
  /**
   * The largest message the server may send, in bytes (H18): over HTTP a response body, or one
   * event of an SSE stream (the stream itself may last as long as the call); over stdio one
   * message. Past it the call (or the listing) fails with a message naming the bound, nothing
   * more of it is read, and memory stays bounded. Default 16 MiB (16,777,216), the bound of a
   * model's response. Error bodies (HTTP 4xx/5xx) are read up to 64 KiB.
   */
  readonly maxResponseBytes?: number;
  /** Told about tools the source skipped (invalid input schema) and unknown tool names. */
  readonly onWarning?: (warning: McpWarning) => void;
  /**
   * Told about every progress notification of a call in flight (M9). When it is set, calls ask
   * the server for progress (a `progressToken`).
   */
  readonly onProgress?: (event: McpProgressEvent) => void;
}

/** An MCP server started as a child process that speaks MCP over its stdin and stdout (M1). */
export interface McpStdioServerOptions extends McpServerCommonOptions {
  /** The executable, found on `PATH`: `"npx"`, `"node"`, `"/usr/local/bin/my-server"`. */
  readonly command: string;
  /** Its arguments. */
  readonly args?: readonly string[];
  /**
   * Environment variables for the process, added to a safe default set (`HOME`, `LOGNAME`,
   * `PATH`, `SHELL`, `TERM`, `USER`; on Windows the system ones). The rest of this process's
   * environment is not passed on: give secrets explicitly.
   */
  readonly env?: Readonly<Record<string, string>>;
  /** The process's working directory. Default: this process's. */
  readonly cwd?: string;
  /**
   * Receives what the server writes to stderr (its logs). Default: not printed; the last
   * 2,000 characters are kept for error messages.
   */
  readonly onStderr?: (text: string) => void;
}

/** An MCP server reached over Streamable HTTP (M1). */
export interface McpHttpServerOptions extends McpServerCommonOptions {
  /**
   * The MCP endpoint, `http:` or `https:`: `"https://example.com/mcp"`. It may not carry a
   * credential (H21): a user name or password, a fragment (`#access_token=...`; a fragment is
   * never sent to a server), or a query parameter whose name looks like a secret is refused,
   * and the message shows the URL without user info, query or fragment. A name is cut into
   * words (`apiKey` → `api`, `key`) and is a secret when a word is `token`, `key`, `apikey`,
   * `secret`, `password`, `passwd`, `pwd`, `pass`, `passphrase`, `passcode`, `auth`,
   * `authorization`, `sig`, `signature`, `hmac`, `credential(s)`, `session`, `sessionid`,
   * `jwt`, `bearer` or `cookie`, or ends with `token`, `secret`, `password`, `passcode`,
   * `apikey`, `accesskey`, `secretkey`, `privatekey`, `authkey`, `sessionkey`, `signingkey`,
   * `masterkey`, `signature`, `hmac` or `credential(s)`. A secret in the path
   * (`/mcp/sk-.../sse`) cannot be told from an ordinary path and is not refused. Pass
   * secrets in `headers`.
   */
  readonly url: string | URL;
  /**
   * Headers sent with every request, for example `{ Authorization: "Bearer ..." }`. The values
   * of credential headers (a name holding `auth`, `key`, `token`, `secret`, `cookie`,
   * `password`, `signature` or `credential`) of 8 characters or more are treated as secrets
   * (H21): wherever the source reports something (errors, the tool results the model reads,
   * tools' descriptions, progress messages, warnings), a value a server echoes back is
   * replaced by `[redacted]`, as is the token after a `Bearer ` or `Basic ` scheme, the
   * percent-encoded, JSON-escaped and base64 forms of each, and a `Basic` credential's decoded
   * `user:password`.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

/** What `mcpServer()` takes: a stdio server (`command`) or a Streamable HTTP one (`url`). */
export type McpServerOptions = McpStdioServerOptions | McpHttpServerOptions;

/** The options after checking: one transport, defaults applied. Internal. */
export type ResolvedMcpServerOptions = {
  readonly name: string;
  readonly prefix: string;
  readonly include?: ReadonlySet<string>;
  readonly exclude?: ReadonlySet<string>;
  readonly isConcurrencySafe?: McpConcurrencySafe;
  readonly needsApproval?: McpNeedsApproval;
  readonly timeoutMs?: number;
  readonly maxCallDurationMs: number;
  readonly connectTimeoutMs: number;
  readonly maxResponseBytes: number;
  /** Hides the source's credentials (headers, secret env values) in what it reports. */
  readonly redactor: SecretRedactor;
  readonly onWarning?: (warning: McpWarning) => void;
  readonly onProgress?: (event: McpProgressEvent) => void;
} & (
  | {
      readonly transport: "stdio";
      readonly command: string;
      readonly args: readonly string[];
      readonly env?: Readonly<Record<string, string>>;
      readonly cwd?: string;
      readonly onStderr?: (text: string) => void;
    }
  | {
      readonly transport: "http";
      readonly url: URL;
      readonly headers?: Readonly<Record<string, string>>;
    }
);

const COMMON_KEYS = [
  "name",
  "include",
  "exclude",
  "prefix",
  "isConcurrencySafe",
  "needsApproval",
  "timeoutMs",
  "maxCallDurationMs",
  "connectTimeoutMs",
  "maxResponseBytes",
  "onWarning",
  "onProgress",
] as const;
const STDIO_KEYS = ["command", "args", "env", "cwd", "onStderr"] as const;
const HTTP_KEYS = ["url", "headers"] as const;
const ALL_KEYS: ReadonlySet<string> = new Set([...COMMON_KEYS, ...STDIO_KEYS, ...HTTP_KEYS]);
const SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;
const DEFAULT_CONNECT_TIMEOUT_MS = 30_000;
/** The longest delay a Node.js timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2_147_483_647;
/** The default `maxCallDurationMs`: 10 minutes. */
const DEFAULT_MAX_CALL_DURATION_MS = 600_000;

/**
 * Checks `mcpServer()`'s options strictly (M1, T31) and applies the defaults.
 *
 * @param options - As the user gave them.
 * @throws {@link UnknownOptionError} for an unknown key.
 * @throws {@link InvalidOptionError} for a bad value, both or neither of `command` and `url`,
 *   or an option of the other transport.
 */
export function resolveMcpServerOptions(options: McpServerOptions): ResolvedMcpServerOptions {
  const raw = options as unknown as Record<string, unknown>;
  const givenName =
    raw !== null && typeof raw === "object" && typeof raw.name === "string" ? raw.name : undefined;
  const prefix = `mcpServer(${givenName === undefined ? "" : JSON.stringify(givenName)}):`;
  if (options === undefined) {
    throw new InvalidOptionError(
      prefix,
      "options",
      "are required: pass { name, command } or { name, url }.",
    );
  }
  assertKnownOptions(options, ALL_KEYS, prefix);
  const fail = (option: string, message: string): never => {
    throw new InvalidOptionError(prefix, option, message);
  };
  if (typeof raw.name !== "string" || !SERVER_NAME.test(raw.name)) {
    fail(
      "name",
      `must be 1 to 64 letters, digits, "_" or "-" (it prefixes the tools' names), received ${describeValue(raw.name)}.`,
    );
  }
  const name = raw.name as string;
  const hasCommand = raw.command !== undefined;
  const hasUrl = raw.url !== undefined;
  if (hasCommand === hasUrl) {
    fail(
      hasCommand ? "url" : "command",
      hasCommand
        ? "cannot be given together with command: a server is either started (command, stdio) or reached (url, Streamable HTTP)."
        : "is required: give command (and args) to start a stdio server, or url to reach a Streamable HTTP server.",
    );
  }
  const common = resolveCommon(raw, name, fail);
  if (hasCommand) {
    for (const key of HTTP_KEYS) {
      if (raw[key] !== undefined)
        fail(key, "applies to url servers only; this server has a command (stdio).");
    }
    if (typeof raw.command !== "string" || raw.command.trim() === "") {
      fail("command", `must be a non-empty string, received ${describeValue(raw.command)}.`);
    }
    if (
      raw.args !== undefined &&
      (!Array.isArray(raw.args) || raw.args.some((arg) => typeof arg !== "string"))
    ) {
      fail("args", `must be an array of strings, received ${describeValue(raw.args)}.`);
    }
    if (raw.env !== undefined && !isStringRecord(raw.env)) {
      fail("env", `must be an object of string values, received ${describeValue(raw.env)}.`);
    }
    if (raw.cwd !== undefined && (typeof raw.cwd !== "string" || raw.cwd === "")) {
      fail("cwd", `must be a non-empty string (a directory), received ${describeValue(raw.cwd)}.`);
    }
    checkFunction(raw, "onStderr", fail);
    return {
      ...common,
      redactor: SecretRedactor.forEnv(raw.env as Record<string, string> | undefined),
      transport: "stdio",
      command: raw.command as string,
      args: [...((raw.args as string[] | undefined) ?? [])],
      ...(raw.env !== undefined ? { env: { ...(raw.env as Record<string, string>) } } : {}),
      ...(raw.cwd !== undefined ? { cwd: raw.cwd as string } : {}),
      ...(raw.onStderr !== undefined ? { onStderr: raw.onStderr as (text: string) => void } : {}),
    };
  }
  for (const key of STDIO_KEYS) {
    if (raw[key] !== undefined)
      fail(key, "applies to command (stdio) servers only; this server has a url.");
  }
  let url: URL | undefined;
  try {
    url = new URL(raw.url instanceof URL ? raw.url.href : String(raw.url));
  } catch {
    url = undefined;
  }
  if (
    url === undefined ||
    (typeof raw.url !== "string" && !(raw.url instanceof URL)) ||
    (url.protocol !== "http:" && url.protocol !== "https:")
  ) {
    const given = raw.url instanceof URL ? raw.url.href : raw.url;
    // H21: a URL is printed without user info, query or fragment; an invalid one not at all.
    fail(
      "url",
      `must be an http: or https: URL of the server's MCP endpoint, for example "http://127.0.0.1:3000/mcp", received ${typeof given === "string" ? JSON.stringify(safeEndpoint(given)) : describeValue(given)}.`,
    );
  }
  const printable = safeEndpoint((url as URL).href);
  if ((url as URL).hash.length > 1) {
    fail(
      "url",
      `has a fragment ("#..."), which is never sent to a server and may hold a credential (#access_token=...): ${printable}. Remove the fragment; pass a secret in headers.`,
    );
  }
  const secrets = describeUrlSecrets(url as URL);
  if (secrets.length > 0) {
    fail(
      "url",
      `holds a credential (${secrets.join(" and ")}), which would end up in errors and logs: ${printable}. Pass the secret in headers instead, for example headers: { Authorization: "Bearer <token>" }, and remove it from the URL.`,
    );
  }
  if (raw.headers !== undefined && !isStringRecord(raw.headers)) {
    fail("headers", `must be an object of string values, received ${describeValue(raw.headers)}.`);
  }
  return {
    ...common,
    redactor: SecretRedactor.forHeaders(raw.headers as Record<string, string> | undefined),
    transport: "http",
    url: url as URL,
    ...(raw.headers !== undefined
      ? { headers: { ...(raw.headers as Record<string, string>) } }
      : {}),
  };
}

function resolveCommon(
  raw: Record<string, unknown>,
  name: string,
  fail: (option: string, message: string) => never,
) {
  const names = (key: "include" | "exclude"): ReadonlySet<string> | undefined => {
    const value = raw[key];
    if (value === undefined) return undefined;
    if (!Array.isArray(value) || value.some((entry) => typeof entry !== "string")) {
      fail(
        key,
        `must be an array of tool names (as the server names them), received ${describeValue(value)}.`,
      );
    }
    return new Set(value as string[]);
  };
  const include = names("include");
  const exclude = names("exclude");
  let prefix = `${name}__`;
  if (raw.prefix === false) prefix = "";
  else if (typeof raw.prefix === "string") prefix = raw.prefix;
  else if (raw.prefix !== undefined) {
    fail("prefix", `must be a string or false, received ${describeValue(raw.prefix)}.`);
  }
  const safe = raw.isConcurrencySafe;
  if (safe !== undefined && typeof safe !== "boolean" && typeof safe !== "function") {
    fail(
      "isConcurrencySafe",
      `must be a boolean or a function (tool, input) => boolean, received ${describeValue(safe)}.`,
    );
  }
  const approval = raw.needsApproval;
  if (approval !== undefined && approval !== true && typeof approval !== "function") {
    const valid =
      approval !== null &&
      typeof approval === "object" &&
      !Array.isArray(approval) &&
      Object.values(approval).every((value) => value === true || typeof value === "function");
    if (!valid) {
      fail(
        "needsApproval",
        `must be true, a function (tool, input, context) => boolean, or an object from tool names to true or (input, context) => boolean, received ${describeValue(approval)}.`,
      );
    }
  }
  for (const key of ["timeoutMs", "maxCallDurationMs", "connectTimeoutMs"] as const) {
    const value = raw[key];
    if (
      value !== undefined &&
      (typeof value !== "number" || !Number.isFinite(value) || value <= 0 || value > MAX_TIMER_MS)
    ) {
      fail(
        key,
        `must be a number of milliseconds > 0 and at most ${MAX_TIMER_MS} (a timer's longest delay), received ${describeValue(value)}.`,
      );
    }
  }
  const maxBytes = raw.maxResponseBytes;
  if (
    maxBytes !== undefined &&
    (typeof maxBytes !== "number" || !Number.isSafeInteger(maxBytes) || maxBytes <= 0)
  ) {
    fail(
      "maxResponseBytes",
      `must be a whole number of bytes > 0, for example 33554432 (32 MiB), received ${describeValue(maxBytes)}.`,
    );
  }
  checkFunction(raw, "onWarning", fail);
  checkFunction(raw, "onProgress", fail);
  return {
    name,
    prefix,
    ...(include !== undefined ? { include } : {}),
    ...(exclude !== undefined ? { exclude } : {}),
    ...(safe !== undefined ? { isConcurrencySafe: safe as McpConcurrencySafe } : {}),
    ...(approval !== undefined ? { needsApproval: approval as McpNeedsApproval } : {}),
    ...(raw.timeoutMs !== undefined ? { timeoutMs: raw.timeoutMs as number } : {}),
    maxCallDurationMs:
      (raw.maxCallDurationMs as number | undefined) ?? DEFAULT_MAX_CALL_DURATION_MS,
    connectTimeoutMs: (raw.connectTimeoutMs as number | undefined) ?? DEFAULT_CONNECT_TIMEOUT_MS,
    maxResponseBytes: (maxBytes as number | undefined) ?? DEFAULT_MAX_RESPONSE_BYTES,
    ...(raw.onWarning !== undefined
      ? { onWarning: raw.onWarning as (warning: McpWarning) => void }
      : {}),
    ...(raw.onProgress !== undefined
      ? { onProgress: raw.onProgress as (event: McpProgressEvent) => void }
      : {}),
  };
}

function checkFunction(
  raw: Record<string, unknown>,
  key: string,
  fail: (option: string, message: string) => never,
): void {
  if (raw[key] !== undefined && typeof raw[key] !== "function") {
    fail(key, `must be a function, received ${describeValue(raw[key])}.`);
  }
}

function isStringRecord(value: unknown): boolean {
  return (
    value !== null &&
    typeof value === "object" &&
    !Array.isArray(value) &&
    Object.values(value).every((entry) => typeof entry === "string")
  );
}
