import { lookup as dnsLookup } from "node:dns/promises";
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import TurndownService from "turndown";
import { z } from "zod/v4";
import {
  createToolDefinition,
  InvalidOptionError,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { assertKnownOptions, describeValue } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { isPublicAddress } from "./public-address.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";

/** One address a host name resolves to. */
export interface ResolvedAddress {
  /** The IPv4 or IPv6 address. */
  readonly address: string;
  /** 4 or 6. */
  readonly family: number;
}

/** Resolves a host name to its addresses: `dns.promises.lookup(host, { all: true })` by default. */
export type WebFetchResolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The caps of the WebFetch tool. */
export interface WebFetchToolCaps {
  /** The most bytes of a response body read; the rest is cut, and the result says so. Default 1,000,000. */
  readonly maxBytes?: number | undefined;
  /** The most characters of text returned (after HTML becomes Markdown). Default 100,000. */
  readonly maxCharacters?: number | undefined;
  /** The time limit of one fetch, redirects included, in milliseconds. Default 30,000. */
  readonly timeoutMs?: number | undefined;
  /** The most redirects followed. Default 5. */
  readonly maxRedirects?: number | undefined;
}

/** Options of {@link webFetchTool}. */
export interface WebFetchToolOptions extends WebFetchToolCaps {
  /**
   * Host names (or IP addresses) fetched even when they resolve to an address that is not
   * public: `["localhost", "intranet.example.com", "127.0.0.1"]`. Matched exactly, without
   * case. Default none.
   */
  readonly allowHosts?: readonly string[] | undefined;
  /** Fetch any address, private, loopback and link-local included (T42 off). Default `false`. */
  readonly allowPrivateNetwork?: boolean | undefined;
  /** How host names are resolved. Default `dns.promises.lookup` (the system's resolver). */
  readonly resolve?: WebFetchResolver | undefined;
  /** The `user-agent` header. Default `"Lattice-WebFetch/1 (+https://github.com/agent-lattice/lattice)"`. */
  readonly userAgent?: string | undefined;
}

const WEB_FETCH_CAPS = {
  maxBytes: { fallback: 1_000_000 },
  maxCharacters: { fallback: 100_000 },
  timeoutMs: { fallback: 30_000 },
  maxRedirects: { fallback: 5, max: 20 },
} satisfies CapSpecs<keyof WebFetchToolCaps>;

/** The keys of {@link WebFetchToolCaps}, for strict option checks. */
export const WEB_FETCH_CAP_KEYS: readonly string[] = Object.keys(WEB_FETCH_CAPS);
/** The keys of {@link WebFetchToolOptions}. */
export const WEB_FETCH_OPTION_KEYS: readonly string[] = [
  ...WEB_FETCH_CAP_KEYS,
  "allowHosts",
  "allowPrivateNetwork",
  "resolve",
  "userAgent",
];

const DEFAULT_USER_AGENT = "Lattice-WebFetch/1 (+https://github.com/agent-lattice/lattice)";

/** The validated input of the WebFetch tool. */
export interface WebFetchToolInput {
  /** The `http:` or `https:` URL to fetch. */
  readonly url: string;
}

const webFetchSchema = z.object({
  url: z
    .string()
    .min(1)
    .max(8_192)
    .describe("The http: or https: URL to fetch, for example https://example.com/docs/page."),
}) satisfies z.ZodType<WebFetchToolInput>;

/** The checked options of WebFetch. Internal. */
export interface ResolvedWebFetchOptions {
  readonly caps: ResolvedCaps<typeof WEB_FETCH_CAPS>;
  readonly allowHosts: ReadonlySet<string>;
  readonly allowPrivateNetwork: boolean;
  readonly resolve: WebFetchResolver;
  readonly userAgent: string;
}

/** Checks WebFetch's options. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveWebFetchOptions(
  options: WebFetchToolOptions | undefined,
  prefix: string,
  nest?: string,
): ResolvedWebFetchOptions {
  const given = options ?? {};
  const name = (option: string) => (nest === undefined ? option : `${nest}.${option}`);
  const caps = resolveCaps(
    WEB_FETCH_CAPS,
    {
      maxBytes: given.maxBytes,
      maxCharacters: given.maxCharacters,
      timeoutMs: given.timeoutMs,
      maxRedirects: given.maxRedirects,
    },
    prefix,
    nest,
  );
  const hosts = given.allowHosts ?? [];
  if (!Array.isArray(hosts) || hosts.some((host) => typeof host !== "string" || host === "")) {
    throw new InvalidOptionError(
      prefix,
      name("allowHosts"),
      `must be an array of host names or IP addresses, received ${describeValue(hosts)}.`,
    );
  }
  if (given.allowPrivateNetwork !== undefined && typeof given.allowPrivateNetwork !== "boolean") {
    throw new InvalidOptionError(
      prefix,
      name("allowPrivateNetwork"),
      `must be a boolean, received ${describeValue(given.allowPrivateNetwork)}.`,
    );
  }
  if (given.resolve !== undefined && typeof given.resolve !== "function") {
    throw new InvalidOptionError(
      prefix,
      name("resolve"),
      `must be a function (hostname) => Promise<{ address, family }[]>, received ${describeValue(given.resolve)}.`,
    );
  }
  if (given.userAgent !== undefined && typeof given.userAgent !== "string") {
    throw new InvalidOptionError(
      prefix,
      name("userAgent"),
      `must be a string, received ${describeValue(given.userAgent)}.`,
    );
  }
  return {
    caps,
    allowHosts: new Set(hosts.map((host) => host.toLowerCase().replace(/^\[|\]$/g, ""))),
    allowPrivateNetwork: given.allowPrivateNetwork === true,
    resolve: given.resolve ?? ((hostname) => dnsLookup(hostname, { all: true, verbatim: true })),
    userAgent: given.userAgent ?? DEFAULT_USER_AGENT,
  };
}

/**
 * The built-in WebFetch tool (T41, T42): GETs an `http:` or `https:` URL and returns what it
 * says — HTML as Markdown (through `turndown`), other text as it is, an image as an image
 * block — headed by the final URL and the content type. Input `{ url }`; concurrency-safe;
 * kind `"builtin"`. The body is read up to `maxBytes`, the text cut at `maxCharacters`, the
 * whole fetch bounded by `timeoutMs` and `maxRedirects`; the call's signal aborts it.
 *
 * No server-side request forgery: for the URL and for every redirect, the host is resolved
 * once, every address it resolves to is checked, and the connection is made to the checked
 * address (the HTTP client's `lookup` is pinned to it: a second, rebinding answer is never
 * asked for). Loopback, private, link-local (cloud metadata), multicast and reserved
 * addresses, IPv4 and IPv6, IPv4-mapped IPv6 included, are refused unless the host is in
 * `allowHosts` or `allowPrivateNetwork` is `true`. Schemes other than `http:` and `https:`
 * (`file:`, `data:`, `ftp:`, ...) and URLs with credentials are refused. Every refusal is an
 * `is_error` result that says what was refused and why.
 *
 * @param options - {@link WebFetchToolOptions}.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a bad option.
 */
export function webFetchTool(options: WebFetchToolOptions = {}): ToolDefinition<WebFetchToolInput> {
  const prefix = "webFetchTool():";
  assertKnownOptions(options, WEB_FETCH_OPTION_KEYS, prefix);
  return buildWebFetchTool(resolveWebFetchOptions(options, prefix));
}

/** Builds the WebFetch tool on checked options. Internal. */
export function buildWebFetchTool(
  options: ResolvedWebFetchOptions,
): ToolDefinition<WebFetchToolInput> {
  return createToolDefinition({
    name: "WebFetch",
    description: [
      "Fetches a web page or file over http(s) and returns its content: HTML as Markdown, other text as is, images as images.",
      "Use it to read documentation, articles or API responses at a URL you know. Private and local network addresses are refused.",
    ].join("\n"),
    schema: webFetchSchema,
    kind: "builtin",
    isConcurrencySafe: () => true,
    handler: (input, context) => webFetch(options, input, context),
  });
}

async function webFetch(
  options: ResolvedWebFetchOptions,
  input: WebFetchToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  const deadline = AbortSignal.timeout(options.caps.timeoutMs);
  const signal = AbortSignal.any([context.signal, deadline]);
  // Why the fetch stopped, when the signal fired: the deadline, or the call's abort.
  const stopped = (): BuiltinToolError =>
    context.signal.aborted
      ? new BuiltinToolError("aborted", "WebFetch: aborted.")
      : new BuiltinToolError(
          "fetch_timed_out",
          `WebFetch: ${input.url} did not finish within ${options.caps.timeoutMs} ms.`,
        );
  // Every step settles when the signal fires, whatever a server or a resolver does (a
  // resolver that never answers, a connection that closes without a response).
  const aborted = new Promise<never>((_resolve, reject) => {
    const fire = () => reject(stopped());
    if (signal.aborted) fire();
    else signal.addEventListener("abort", fire, { once: true });
  });
  aborted.catch(() => undefined);
  let url = parseUrl(input.url, input.url);
  for (let redirects = 0; ; redirects++) {
    const address = await Promise.race([checkedAddress(options, url, input.url), aborted]);
    const response = await Promise.race([
      get(options, url, address, signal).catch((error: unknown) => {
        if (signal.aborted) throw stopped();
        throw new BuiltinToolError(
          "fetch_failed",
          `WebFetch: could not fetch ${url.href}: ${(error as Error).message}.`,
        );
      }),
      aborted,
    ]);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (status >= 300 && status < 400 && location !== undefined) {
      // Its body is not wanted: close the connection rather than drain it.
      response.destroy();
      if (redirects >= options.caps.maxRedirects) {
        throw new BuiltinToolError(
          "too_many_redirects",
          `WebFetch: ${input.url} redirected more than ${options.caps.maxRedirects} times (last to ${shorten(location)}).`,
        );
      }
      url = parseUrl(location, input.url, url);
      continue;
    }
    return await Promise.race([readResponse(options, url, response, signal, stopped), aborted]);
  }
}

/** A text from a server, cut for a message. */
function shorten(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function parseUrl(text: string, asked: string, base?: URL): URL {
  let url: URL;
  try {
    url = new URL(text, base);
  } catch {
    throw new BuiltinToolError(
      "invalid_url",
      base === undefined
        ? `WebFetch: ${JSON.stringify(shorten(text))} is not a URL.`
        : `WebFetch: ${asked} redirected to ${JSON.stringify(shorten(text))}, which is not a URL.`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new BuiltinToolError(
      "url_refused",
      `WebFetch: ${url.protocol} URLs are refused${base === undefined ? "" : ` (${asked} redirected to ${shorten(url.href)})`}: only http: and https: are fetched.`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new BuiltinToolError("url_refused", "WebFetch: URLs with credentials are refused.");
  }
  return url;
}

/** Resolves the URL's host once and checks every address (T42); returns the one to connect to. */
async function checkedAddress(
  options: ResolvedWebFetchOptions,
  url: URL,
  asked: string,
): Promise<ResolvedAddress> {
  const host = url.hostname.replace(/^\[|\]$/g, "").toLowerCase();
  const allowed = options.allowPrivateNetwork || options.allowHosts.has(host);
  let addresses: readonly ResolvedAddress[];
  const literal = isIP(host);
  if (literal !== 0) addresses = [{ address: host, family: literal }];
  else {
    try {
      addresses = await options.resolve(host);
    } catch (error) {
      throw new BuiltinToolError(
        "fetch_failed",
        `WebFetch: the host ${host} could not be resolved (${(error as Error).message}).`,
      );
    }
    if (addresses.length === 0) {
      throw new BuiltinToolError("fetch_failed", `WebFetch: the host ${host} has no address.`);
    }
  }
  if (!allowed) {
    const refused = addresses.find((candidate) => !isPublicAddress(candidate.address));
    if (refused !== undefined) {
      const via = url.href === asked ? "" : ` (${asked} redirected to ${shorten(url.href)})`;
      // The address itself is not said: the model (or a page's instructions to it) must not
      // learn the private network's layout from refusals.
      throw new BuiltinToolError(
        "address_refused",
        `WebFetch: ${host} ${literal === 0 ? "resolves to" : "is"} a private, local or reserved address, which is refused${via}. Fetch a public URL; to reach this host on purpose, add it to the tool's allowHosts.`,
      );
    }
  }
  return addresses[0] as ResolvedAddress;
}

/** One GET, connected to `address` whatever the host name resolves to now (no second lookup). */
function get(
  options: ResolvedWebFetchOptions,
  url: URL,
  address: ResolvedAddress,
  signal: AbortSignal,
): Promise<IncomingMessage> {
  const pinned: LookupFunction = (_hostname, lookupOptions, callback) => {
    if ((lookupOptions as { all?: boolean }).all === true) {
      (callback as unknown as (error: null, addresses: ResolvedAddress[]) => void)(null, [address]);
    } else callback(null, address.address, address.family);
  };
  const request = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const outgoing = request(
      url,
      {
        method: "GET",
        lookup: pinned,
        // A connection of its own: a pooled socket was opened for an address checked by
        // another call.
        agent: false,
        signal,
        headers: {
          "user-agent": options.userAgent,
          accept:
            "text/html, text/markdown, text/plain, application/json, image/*;q=0.8, */*;q=0.5",
          "accept-encoding": "identity",
        },
      },
      resolve,
    );
    outgoing.once("error", reject);
    // A connection that ends without a response (a server that switched protocols, one that
    // hung up) must settle the call too.
    outgoing.once("upgrade", (_response, socket) => {
      socket.destroy();
      reject(new Error("the server switched protocols"));
    });
    outgoing.once("close", () =>
      reject(new Error("the server closed the connection without an answer")),
    );
    outgoing.end();
  });
}

async function readResponse(
  options: ResolvedWebFetchOptions,
  url: URL,
  response: IncomingMessage,
  signal: AbortSignal,
  stopped: () => BuiltinToolError,
): Promise<ToolHandlerResult> {
  const status = response.statusCode ?? 0;
  const encoding = String(response.headers["content-encoding"] ?? "identity").toLowerCase();
  if (encoding !== "identity") {
    response.destroy();
    throw new BuiltinToolError(
      "binary_content",
      `WebFetch: ${url.href} came compressed (${shorten(encoding)}) though WebFetch asked for it uncompressed; it is not read.`,
    );
  }
  const type = String(response.headers["content-type"] ?? "application/octet-stream");
  const mediaType = type.split(";")[0]?.trim().toLowerCase() ?? "";
  const chunks: Buffer[] = [];
  let length = 0;
  let cut = false;
  try {
    for await (const chunk of response) {
      const buffer = chunk as Buffer;
      if (length + buffer.length > options.caps.maxBytes) {
        chunks.push(buffer.subarray(0, options.caps.maxBytes - length));
        length = options.caps.maxBytes;
        cut = true;
        response.destroy();
        break;
      }
      chunks.push(buffer);
      length += buffer.length;
    }
  } catch (error) {
    if (signal.aborted) throw stopped();
    throw new BuiltinToolError(
      "fetch_failed",
      `WebFetch: reading ${url.href} failed: ${(error as Error).message}.`,
    );
  }
  // A body that stopped early (the deadline, an abort, a server that hung up) is not a page.
  if (!cut && (signal.aborted || !response.complete)) {
    if (signal.aborted) throw stopped();
    throw new BuiltinToolError(
      "fetch_failed",
      `WebFetch: ${url.href} ended before its whole body came.`,
    );
  }
  const body = Buffer.concat(chunks, length);
  const heading = `URL: ${url.href}\nStatus: ${status}\nContent-Type: ${type}${cut ? `\nCut at ${options.caps.maxBytes} bytes.` : ""}\n\n`;
  if (mediaType.startsWith("image/") && /^image\/(png|jpeg|gif|webp)$/.test(mediaType) && !cut) {
    return {
      content: [
        { type: "text", text: heading.trimEnd() },
        {
          type: "image",
          source: { type: "base64", media_type: mediaType, data: body.toString("base64") },
        },
      ],
      isError: status >= 400,
    };
  }
  const textual =
    mediaType.startsWith("text/") ||
    /^application\/([\w.+-]*\+)?(json|xml|javascript|x-ndjson)$/.test(mediaType) ||
    mediaType === "application/xhtml+xml";
  if (!textual) {
    throw new BuiltinToolError(
      "binary_content",
      `WebFetch: ${url.href} is ${mediaType || "of no content type"}, which WebFetch does not read (it reads text, HTML and images).`,
    );
  }
  let text = new TextDecoder("utf-8").decode(body);
  if (mediaType === "text/html" || mediaType === "application/xhtml+xml") text = toMarkdown(text);
  let tail = "";
  if (text.length > options.caps.maxCharacters) {
    text = text.slice(0, options.caps.maxCharacters);
    tail = `\n\n[… cut at ${options.caps.maxCharacters} characters]`;
  }
  return { content: `${heading}${text}${tail}`, isError: status >= 400 };
}

/**
 * How deep HTML may nest for turndown: its time grows with the square of the depth and it
 * recurses, so a page nested deeper (rare in real pages, easy for a hostile one) would block
 * the process for minutes. Deeper pages are shown as plain text.
 */
const MAX_HTML_DEPTH = 400;
const VOID_ELEMENTS = new Set(
  "area base br col embed hr img input link meta param source track wbr".split(" "),
);

/** HTML as Markdown, without scripts, styles and other parts that are not text. */
function toMarkdown(html: string): string {
  if (htmlDepth(html) > MAX_HTML_DEPTH) {
    const text = html
      .replace(/<(script|style|noscript|template)\b[\s\S]*?<\/\1\s*>/gi, " ")
      .replace(/<[^>]*>/g, " ")
      .replace(/\s+/g, " ")
      .trim();
    return `(The page nests its HTML more than ${MAX_HTML_DEPTH} levels deep: shown as plain text.)\n\n${text}`;
  }
  const turndown = new TurndownService({ headingStyle: "atx", codeBlockStyle: "fenced" });
  turndown.remove(["script", "style", "noscript", "iframe", "svg", "template", "head"] as never);
  return turndown.turndown(html).trim();
}

/** The deepest nesting of elements in an HTML text, counted from its tags in one pass. */
function htmlDepth(html: string): number {
  let depth = 0;
  let deepest = 0;
  for (const match of html.matchAll(/<(\/?)([a-zA-Z][\w:-]*)[^>]*?(\/?)>/g)) {
    const name = (match[2] as string).toLowerCase();
    if (match[1] === "/") depth = Math.max(0, depth - 1);
    else if (match[3] !== "/" && !VOID_ELEMENTS.has(name)) {
      depth++;
      if (depth > deepest) deepest = depth;
    }
  }
  return deepest;
}
