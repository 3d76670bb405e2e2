/**
 * Replaces every occurrence of `secret` in `text` with `[redacted]`, so that an API echoing a
 * key back in an error message never puts it into an error, a log or a trace.
 *
 * @param text - Any text.
 * @param secret - The key; nothing is replaced when it is absent or shorter than 4 characters.
 */
export function redactSecret(text: string, secret: string | undefined): string {
  if (secret === undefined || secret.length < 4 || !text.includes(secret)) return text;
  return text.split(secret).join("[redacted]");
}

/**
 * A URL safe to print: without user name, password, query or fragment.
 *
 * @param url - The URL.
 */
export function safeEndpoint(url: string): string {
  try {
    const parsed = new URL(url);
    parsed.username = "";
    parsed.password = "";
    parsed.search = "";
    parsed.hash = "";
    return parsed.toString();
  } catch {
    return "(invalid URL)";
  }
}

/**
 * Replaces every absolute URL in `text` with its {@link safeEndpoint} form, so that credentials,
 * queries and fragments in URLs quoted by an error message are not printed.
 *
 * @param text - Any text.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (url) => {
    const safe = safeEndpoint(url);
    return safe === "(invalid URL)" ? "[redacted URL]" : safe;
  });
}
