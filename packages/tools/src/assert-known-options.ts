import { InvalidOptionError, UnknownOptionError } from "./errors.js";

/**
 * Checks an options object strictly (T31–T33): every own key must be one of `knownKeys`.
 *
 * This is the one check every options object in the SDK goes through (`AgentOptions`,
 * `ToolOptions`, `AgentToolOptions`, `DelegateToolOptions`, nested settings), so an unknown
 * key fails the same way everywhere, at assembly time. A key whose value is `undefined` is
 * still a key: spreading host fields into an options object fails loudly.
 *
 * @param options - The object as the user gave it; `undefined` passes.
 * @param knownKeys - The keys this options object accepts.
 * @param prefix - Who owns the options, printed first: `AgentOptions:`, `tool("search"):`.
 * @throws {@link UnknownOptionError} on the first unknown key, with the message
 *   `<prefix> unknown option "<key>". Check for a typo, or upgrade the SDK if this option was added in a newer version.`
 * @throws {@link InvalidOptionError} when `options` is not a plain object.
 */
export function assertKnownOptions(
  options: unknown,
  knownKeys: ReadonlySet<string> | readonly string[],
  prefix: string,
): void {
  if (options === undefined) return;
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      prefix,
      "options",
      `must be an object, received ${describeValue(options)}. Pass an object literal or omit the argument.`,
    );
  }
  const known: ReadonlySet<string> = knownKeys instanceof Set ? knownKeys : new Set(knownKeys);
  for (const key of Object.keys(options)) {
    if (!known.has(key)) throw new UnknownOptionError(prefix, key);
  }
}

/**
 * A short, safe description of a value for error messages: its JSON form when small, else its
 * type. Never prints more than 60 characters.
 *
 * @param value - Any value.
 */
export function describeValue(value: unknown): string {
  if (value === undefined) return "undefined";
  if (typeof value === "function") return "a function";
  if (typeof value === "bigint") return `${value}n`;
  if (typeof value === "symbol") return value.toString();
  if (typeof value === "number" && !Number.isFinite(value)) return String(value);
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return typeof value;
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}
