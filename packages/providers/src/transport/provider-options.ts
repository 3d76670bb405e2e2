import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";

/** What {@link trimBaseURL} says in its messages about one adapter. */
export interface BaseURLHint {
  /** The adapter's default URL, shown as an example. */
  readonly example: string;
  /** The options that carry a key, for example `"apiKey or authToken"`. */
  readonly keyOptions: string;
}

/**
 * Checks a base URL and returns it normalised, without trailing slashes.
 *
 * Refuses anything but an absolute http(s) URL, and a URL with a user name or password, a
 * query or a fragment: the request path is appended to the base URL, so a query or fragment
 * would break it, and credentials in a URL end up in error messages and logs.
 *
 * @param baseURL - The URL as given.
 * @param prefix - The owner, for the error message.
 * @param hint - The example URL and the key options, for the error message.
 * @throws `InvalidOptionError` when it is not usable; the message never contains the URL's
 *   credentials.
 */
export function trimBaseURL(baseURL: string, prefix: string, hint: BaseURLHint): string {
  let parsed: URL | undefined;
  if (typeof baseURL === "string") {
    try {
      parsed = new URL(baseURL);
    } catch {
      parsed = undefined;
    }
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new InvalidOptionError(
      prefix,
      "baseURL",
      `must be an absolute http(s) URL, for example ${hint.example}.`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "" || authorityHasAt(baseURL)) {
    throw new InvalidOptionError(
      prefix,
      "baseURL",
      `must not contain a user name or password ("user:password@"): credentials in a URL end up in logs. Pass the key with ${hint.keyOptions}, or send it in headers.`,
    );
  }
  if (baseURL.includes("?") || baseURL.includes("#")) {
    throw new InvalidOptionError(
      prefix,
      "baseURL",
      `must not contain a query string or a fragment ("?…", "#…"): the request path is appended to baseURL. Pass the key with ${hint.keyOptions}, and other values in headers.`,
    );
  }
  return parsed.href.replace(/\/+$/, "");
}

/**
 * Whether the authority part of a URL holds an `@` (even with an empty user name, which `URL`
 * does not report).
 *
 * @param url - The URL as given.
 */
export function authorityHasAt(url: string): boolean {
  const authority = /^[a-z][a-z0-9+.-]*:[\\/]*([^\\/?#]*)/i.exec(url.trim())?.[1] ?? "";
  return authority.includes("@");
}

/**
 * Checks a retry count option and applies its default.
 *
 * @throws `InvalidOptionError` when it is not an integer ≥ 0.
 */
export function checkRetries(
  value: number | undefined,
  fallback: number,
  name: string,
  prefix: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidOptionError(
      prefix,
      name,
      `must be an integer ≥ 0 (0 for no retries), received ${describeValue(value)}. Omit it for the default (${fallback}).`,
    );
  }
  return value;
}

/**
 * Checks a timeout option in milliseconds and applies its default.
 *
 * @throws `InvalidOptionError` when it is not a positive number (`Infinity`, no timeout, is
 *   allowed).
 */
export function checkTimeout(
  value: number | undefined,
  fallback: number,
  name: string,
  prefix: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value <= 0) {
    throw new InvalidOptionError(
      prefix,
      name,
      `must be a positive number of milliseconds (Infinity for no timeout), received ${describeValue(value)}. Omit it for the default (${fallback}).`,
    );
  }
  return value;
}

/**
 * Checks a boolean option and applies its default.
 *
 * @param value - The option as given.
 * @param fallback - The default, used when `value` is `undefined`.
 * @param name - The option's name, for the error.
 * @param prefix - The owner, for the error message.
 * @param defaultNote - How the default is chosen, for the error (default: the fallback).
 * @throws `InvalidOptionError` when it is neither `true` nor `false`.
 */
export function checkBoolean(
  value: boolean | undefined,
  fallback: boolean,
  name: string,
  prefix: string,
  defaultNote = String(fallback),
): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== "boolean") {
    throw new InvalidOptionError(
      prefix,
      name,
      `must be true or false, received ${describeValue(value)}. Omit it for the default (${defaultNote}).`,
    );
  }
  return value;
}

/** An HTTP header name (RFC 9110 token). */
const HEADER_NAME = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** What fetch accepts in a header value once leading and trailing whitespace is trimmed. */
const HEADER_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

/**
 * Checks the request headers before any request is made: fetch rejects a bad name or value
 * with a message that quotes the value, which could be a key.
 *
 * @param headers - The headers to send.
 * @param keyHeader - The header that carries the resolved key, if any.
 * @param keyOption - The option the key came from, for the error (`"apiKey"`, `"authToken"`).
 * @param keyHint - Where the key was set, for the error.
 * @param prefix - The owner, for the error message.
 * @throws `InvalidOptionError` naming the header (never its value).
 */
export function checkHeaders(
  headers: Readonly<Record<string, string>>,
  keyHeader: string | undefined,
  keyOption: string,
  keyHint: string,
  prefix: string,
): void {
  for (const name of Object.keys(headers)) {
    if (!HEADER_NAME.test(name)) {
      throw new InvalidOptionError(
        prefix,
        "headers",
        `has an invalid header name ${describeValue(name)}: use letters, digits and - only.`,
      );
    }
    if (HEADER_VALUE.test(String(headers[name]).trim())) continue;
    if (name === keyHeader) {
      throw new InvalidOptionError(
        prefix,
        keyOption,
        `contains a line break, a control character or a character outside Latin-1, which cannot be sent in an HTTP header (the key is not printed): check ${keyHint}.`,
      );
    }
    throw new InvalidOptionError(
      prefix,
      "headers",
      `has a value for "${name}" that contains a line break, a control character or a character outside Latin-1, which cannot be sent in an HTTP header (the value is not printed).`,
    );
  }
}
