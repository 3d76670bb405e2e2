import {
  collectSecrets,
  isSensitiveHeader,
  redactError,
  redactSecrets,
} from "@lattice/providers/internal";
import type { ToolHandlerResult } from "@lattice/tools";

/**
 * Values shorter than this are not treated as secrets: a short value (`main`, `true`, `/tmp`)
 * would redact parts of ordinary words.
 */
const MIN_SECRET_LENGTH = 8;

/**
 * Environment variable names whose values are credentials (redacted from a server's stderr):
 * one of these words as a whole segment of the name, segments being separated by `_`, `-` or
 * `.` (`GITHUB_TOKEN`, `OPENAI_API_KEY`, `NODE_AUTH_TOKEN`, `DB_PASSWORD`; not `SESSION_DIR`,
 * `PATH_KEYS` or `AUTHOR`).
 */
const SECRET_ENV_NAME =
  /(?:^|[_.-])(?:TOKEN|SECRET|PASSWORD|PASSWD|API_?KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL|AUTH)(?:[_.-]|$)/i;

/**
 * Replaces the credentials a source was given with `[redacted]` in everything it reports
 * (H21): error messages and causes, the tool results the model reads, tools' descriptions,
 * progress messages and warnings. A server that echoes a header (a 401 body, a tool error
 * quoting the bearer token) never puts the secret into a run's errors, trace or session log.
 *
 * Each secret is also recognised percent-encoded (`encodeURIComponent`), JSON-escaped and
 * base64-encoded (standard and URL-safe, with or without padding); a `Basic` credential also
 * as its decoded `user:password` and its password.
 */
export class SecretRedactor {
  /** The secrets and their encodings, longest first (a secret that contains another is replaced whole). */
  readonly #secrets: readonly string[];

  /**
   * @param secrets - The values to hide; those under 8 characters are left.
   */
  constructor(secrets: Iterable<string>) {
    const kept = new Set<string>();
    for (const secret of secrets) {
      const trimmed = secret.trim();
      if (trimmed.length < MIN_SECRET_LENGTH) continue;
      for (const form of encodedForms(trimmed)) kept.add(form);
    }
    this.#secrets = [...kept].sort((a, b) => b.length - a.length);
  }

  /**
   * The secrets of an HTTP source: the values of its credential headers (`Authorization`,
   * `X-Api-Key`, `Cookie`, ...: a name holding `auth`, `key`, `token`, `secret`, `cookie`,
   * `password`, `signature` or `credential`), also without their scheme (`Bearer abc` → `abc`),
   * and a `Basic` credential's decoded `user:password` and password. Other headers
   * (`X-Tenant`, `Accept`) are not secrets.
   *
   * @param headers - The source's `headers`.
   */
  static forHeaders(headers: Readonly<Record<string, string>> | undefined): SecretRedactor {
    const given = headers ?? {};
    const secrets = [...collectSecrets(undefined, given)];
    for (const [name, value] of Object.entries(given)) {
      const basic = /^\s*Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(value);
      if (!isSensitiveHeader(name) || basic?.[1] === undefined) continue;
      const decoded = Buffer.from(basic[1], "base64").toString("utf8");
      const colon = decoded.indexOf(":");
      if (colon === -1 || decoded.includes("\uFFFD")) continue;
      secrets.push(decoded, decoded.slice(colon + 1));
    }
    return new SecretRedactor(secrets);
  }

  /**
   * The secrets of a stdio source: the values of its `env` variables whose names hold `TOKEN`,
   * `SECRET`, `PASSWORD`, `PASSWD`, `API_KEY`, `APIKEY`, `ACCESS_KEY`, `PRIVATE_KEY`,
   * `CREDENTIAL` or `AUTH` as a whole segment (`GITHUB_TOKEN`, `DB_PASSWORD`; not
   * `SESSION_DIR`).
   *
   * @param env - The source's `env`.
   */
  static forEnv(env: Readonly<Record<string, string>> | undefined): SecretRedactor {
    return new SecretRedactor(
      Object.entries(env ?? {})
        .filter(([name]) => SECRET_ENV_NAME.test(name))
        .map(([, value]) => value),
    );
  }

  /** Whether there is anything to hide. */
  get empty(): boolean {
    return this.#secrets.length === 0;
  }

  /**
   * The text with every secret replaced by `[redacted]`.
   *
   * @param text - Any text.
   */
  text(text: string): string {
    return this.empty ? text : redactSecrets(text, this.#secrets);
  }

  /**
   * The end of a text, redacted, for a rolling buffer such as a server's stderr: about the
   * last `chars` characters of `text` with every secret replaced, including one that begins
   * before them (it is replaced whole, never shown in part). Keep at least
   * {@link SecretRedactor.overlap} more characters than `chars` in the buffer.
   *
   * @param text - The buffer.
   * @param chars - How many of its last characters to show.
   */
  tail(text: string, chars: number): string {
    let from = Math.max(0, text.length - chars);
    for (let changed = true; changed && from > 0; ) {
      changed = false;
      for (const secret of this.#secrets) {
        // A secret that crosses `from` begins at most its length - 1 characters before it.
        const base = Math.max(0, from - secret.length + 1);
        const at = text.slice(base, from + secret.length - 1).indexOf(secret);
        if (at !== -1 && base + at < from) {
          from = base + at;
          changed = true;
        }
      }
    }
    return this.text(text.slice(from));
  }

  /** How many characters a rolling buffer must keep beyond what it shows (see {@link SecretRedactor.tail}). */
  get overlap(): number {
    return 2 * (this.#secrets[0]?.length ?? 0);
  }

  /**
   * An error safe to keep as a `cause`, through `redactError` of `@lattice/providers`: the same
   * error when nothing in it holds a secret, otherwise a copy whose message, stack and causes
   * are redacted. An SDK error whose `data` (the server's own words) holds a secret is passed
   * on as a copy without `data`.
   *
   * @param error - Any thrown value.
   */
  error(error: unknown): unknown {
    if (this.empty) return error;
    return redactError(this.#withoutSecretData(error, 0), (text) => this.text(text));
  }

  /**
   * A tool result with every secret redacted from its text blocks and from the strings of its
   * `structuredContent`, at any depth (its keys, images and other data are left as they are).
   *
   * @param result - The mapped result of a call.
   */
  result(result: ToolHandlerResult): ToolHandlerResult {
    if (this.empty) return result;
    const content =
      typeof result.content === "string"
        ? this.text(result.content)
        : result.content.map((block) =>
            block.type === "text" ? { ...block, text: this.text(block.text) } : block,
          );
    return {
      ...result,
      content,
      ...(result.structuredContent !== undefined
        ? { structuredContent: this.json(result.structuredContent) }
        : {}),
    };
  }

  /**
   * A JSON value with every secret redacted from its strings, at any depth; object keys are
   * kept. The same value when none holds a secret.
   *
   * @param value - A JSON value (a tool's `structuredContent`, a schema).
   */
  json<T>(value: T): T {
    const text = safeJson(value);
    if (text === undefined || this.text(text) === text) return value;
    return JSON.parse(text, (_key, item: unknown) =>
      typeof item === "string" ? this.text(item) : item,
    ) as T;
  }

  /** The error, or a copy of it (same class) without a `data` that holds a secret, at any cause. */
  #withoutSecretData(error: unknown, depth: number): unknown {
    // redactError follows causes 4 deep.
    if (!(error instanceof Error) || depth > 4) return error;
    const cause = (error as { cause?: unknown }).cause;
    const safeCause = cause === undefined ? undefined : this.#withoutSecretData(cause, depth + 1);
    const data = safeJson((error as { data?: unknown }).data);
    const leaks = data !== undefined && this.text(data) !== data;
    if (!leaks && safeCause === cause) return error;
    const copy = Object.create(Object.getPrototypeOf(error)) as Error;
    for (const key of Reflect.ownKeys(error)) {
      if (key === "data" && leaks) continue;
      const descriptor = Object.getOwnPropertyDescriptor(error, key) as PropertyDescriptor;
      Object.defineProperty(
        copy,
        key,
        key === "cause" ? { ...descriptor, value: safeCause } : descriptor,
      );
    }
    return copy;
  }
}

/** A secret as it is written, and as an echo of it may be encoded. */
function encodedForms(secret: string): string[] {
  const base64 = Buffer.from(secret, "utf8").toString("base64");
  const forms = [
    secret,
    JSON.stringify(secret).slice(1, -1),
    base64,
    base64.replace(/=+$/, ""),
    Buffer.from(secret, "utf8").toString("base64url"),
  ];
  try {
    forms.push(encodeURIComponent(secret));
  } catch {
    // A lone surrogate has no percent-encoding.
  }
  return forms;
}

function safeJson(value: unknown): string | undefined {
  if (value === undefined) return undefined;
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
