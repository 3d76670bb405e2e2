import { InvalidOptionError } from "@lattice/tools";

/**
 * Checks a base URL and removes trailing slashes.
 *
 * @param baseURL - The URL as given.
 * @param prefix - The owner, for the error message.
 * @throws `InvalidOptionError` when it is not an http(s) URL.
 */
export function trimBaseURL(baseURL: string, prefix: string): string {
  let parsed: URL | undefined;
  try {
    parsed = new URL(baseURL);
  } catch {
    parsed = undefined;
  }
  if (parsed === undefined || (parsed.protocol !== "http:" && parsed.protocol !== "https:")) {
    throw new InvalidOptionError(
      prefix,
      "baseURL",
      "must be an http(s) URL, for example https://api.anthropic.com.",
    );
  }
  return baseURL.replace(/\/+$/, "");
}

/**
 * Checks a non-negative count option and applies its default.
 *
 * @throws `InvalidOptionError` when it is not a non-negative number.
 */
export function checkCount(
  value: number | undefined,
  fallback: number,
  name: string,
  prefix: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || Number.isNaN(value) || value < 0) {
    throw new InvalidOptionError(prefix, name, "must be a non-negative number.");
  }
  return value;
}
