import { describeValue, InvalidOptionError } from "@lattice/tools";

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

/** Whether the authority part of a URL holds an `@` (even with an empty user name). */
function authorityHasAt(url: string): boolean {
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
