/**
 * A URL safe to print: without user name, password, query or fragment (a query may hold a key,
 * as in `?key=…`).
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
 * `text` with every absolute URL that has credentials, a query or a fragment replaced by its
 * {@link safeEndpoint} form, so an error message quoting a request URL prints no key.
 *
 * @param text - Any text.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (url) =>
    /[@?#]/.test(url) ? safeEndpoint(url) : url,
  );
}
