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
 * Replaces every absolute URL in `text` that has credentials, a query or a fragment with its
 * {@link safeEndpoint} form, so that an error message quoting a URL does not print them.
 *
 * @param text - Any text.
 */
export function redactUrls(text: string): string {
  return text.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>`]+/gi, (url) => {
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return url.includes("@") || url.includes("?") ? "[redacted URL]" : url;
    }
    const plain =
      parsed.username === "" &&
      parsed.password === "" &&
      parsed.search === "" &&
      parsed.hash === "";
    return plain && !url.includes("@") ? url : safeEndpoint(url);
  });
}

/** Header names whose values are credentials: never printed, always redacted. */
const SENSITIVE_HEADER = /auth|key|token|secret|cookie|password|signature|credential/i;

/**
 * Whether a header carries a credential (`authorization`, `x-api-key`, `api-key`, `cookie`, …).
 *
 * @param name - The header's name, in any case.
 */
export function isSensitiveHeader(name: string): boolean {
  return SENSITIVE_HEADER.test(name);
}

/**
 * The values to redact from anything a provider prints: the key, and the values of the
 * credential headers among `headers` (also without their `Bearer `/`Basic ` scheme).
 *
 * @param key - The resolved key, if any.
 * @param headers - The request headers.
 */
export function collectSecrets(
  key: string | undefined,
  headers: Readonly<Record<string, string>>,
): readonly string[] {
  const secrets = new Set<string>();
  const add = (value: string): void => {
    const trimmed = value.trim();
    if (trimmed.length >= 4) secrets.add(trimmed);
  };
  if (key !== undefined) add(key);
  for (const name of Object.keys(headers)) {
    if (!isSensitiveHeader(name)) continue;
    const value = String(headers[name]);
    add(value);
    const scheme = /^\s*[A-Za-z][A-Za-z0-9-]*\s+(\S.*)$/.exec(value);
    if (scheme !== null) add(scheme[1]!);
  }
  // Longest first, so that a secret containing another one is replaced whole.
  return [...secrets].sort((a, b) => b.length - a.length);
}

/**
 * {@link redactSecret} for several secrets.
 *
 * @param text - Any text.
 * @param secrets - The values to replace with `[redacted]`.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) out = redactSecret(out, secret);
  return out;
}

/**
 * An error safe to keep as a `cause`: the same error when neither its message, its stack nor
 * its causes contain anything `redact` changes; otherwise a copy (same name and code) whose
 * message, stack and causes are redacted.
 *
 * @param error - Any thrown value.
 * @param redact - Rewrites a text without secrets.
 */
export function redactError(error: unknown, redact: (text: string) => string, depth = 0): unknown {
  if (typeof error === "string") return redact(error);
  if (!(error instanceof Error) || depth > 4) return error;
  const cause = (error as { cause?: unknown }).cause;
  const safeCause = cause === undefined ? undefined : redactError(cause, redact, depth + 1);
  const message = redact(error.message);
  const stack = error.stack === undefined ? undefined : redact(error.stack);
  if (message === error.message && stack === error.stack && safeCause === cause) return error;
  const copy = new Error(message, safeCause === undefined ? undefined : { cause: safeCause });
  copy.name = error.name;
  const code = (error as { code?: unknown }).code;
  if (code !== undefined) Object.defineProperty(copy, "code", { value: code, enumerable: true });
  if (stack === undefined) delete copy.stack;
  else copy.stack = stack;
  return copy;
}
