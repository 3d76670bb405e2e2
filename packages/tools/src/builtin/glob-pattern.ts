import { RE2JS } from "re2js";
import { BuiltinToolError } from "./builtin-tool-error.js";

/** The longest glob pattern Glob and Grep accept, in characters. */
export const MAX_GLOB_LENGTH = 500;

/** The most alternatives one brace range (`{1..100}`) may expand to. */
const MAX_RANGE_ITEMS = 1000;

/** A glob pattern compiled by {@link compileGlob}. Internal. */
export interface GlobMatcher {
  /** Whether a path relative to the searched directory (`/`-separated) matches. */
  matches(relativePath: string): boolean;
  /**
   * Whether a directory (relative path, `/`-separated, `""` for the searched directory itself)
   * may hold a match somewhere below it; false lets a walk skip it.
   */
  mayContain(relativeDirectory: string): boolean;
}

/**
 * Compiles a glob pattern to a linear-time matcher: the glob is translated to RE2 syntax and
 * compiled with `re2js`, so no glob can make a match backtrack (a native `RegExp` from a glob
 * such as `*a*a*a*a*a*a*a*a*a*a*b` takes minutes on a 60-character name). Internal.
 *
 * Syntax (as picomatch with `dot: true`): `*` and `?` match within one path segment, dot files
 * included; `**` as a whole segment matches any number of segments (zero included); `[abc]`,
 * `[a-z]`, `[!a]` / `[^a]` and POSIX classes like `[[:alpha:]]`; braces `{a,b}` (nested, and
 * ranges `{1..5}`, `{a..e}`); extglobs `@(a|b)`, `?(a|b)`, `+(a|b)`, `*(a|b)`, and a bare
 * group `(a|b)`; `\` escapes the next character; leading `./` is ignored. A brace or bracket
 * that is never closed is a literal character.
 *
 * @throws {@link BuiltinToolError} `"invalid_pattern"` for a pattern over
 *   {@link MAX_GLOB_LENGTH} characters, a negated extglob `!(...)`, or a class RE2 rejects.
 */
export function compileGlob(pattern: string, toolName: string): GlobMatcher {
  if (pattern.length > MAX_GLOB_LENGTH) {
    throw new BuiltinToolError(
      "invalid_pattern",
      `${toolName}: the glob pattern is ${pattern.length} characters long; at most ${MAX_GLOB_LENGTH} are accepted. Use a shorter pattern, or several calls.`,
    );
  }
  let glob = pattern;
  while (glob.startsWith("./")) glob = glob.slice(2);
  const translator = new GlobTranslator(glob, toolName);
  const source = translator.translate();
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(`^(?:${source})$`, RE2JS.DOTALL);
  } catch (error) {
    throw new BuiltinToolError(
      "invalid_pattern",
      `${toolName}: the glob ${JSON.stringify(pattern)} is not valid (${(error as Error).message}). Check its [...] classes and escape special characters with a backslash.`,
      { cause: error },
    );
  }
  const base = literalBase(glob);
  const maxDepth = translator.unboundedDepth ? Number.POSITIVE_INFINITY : translator.segments;
  return {
    matches: (relativePath) => compiled.test(relativePath),
    mayContain: (relativeDirectory) => {
      if (relativeDirectory === "") return true;
      const parts = relativeDirectory.split("/");
      // A file under this directory has more segments than the directory itself.
      if (parts.length + 1 > maxDepth) return false;
      const shared = Math.min(parts.length, base.length);
      for (let index = 0; index < shared; index++) {
        if (parts[index] !== base[index]) return false;
      }
      return true;
    },
  };
}

/** The leading directory segments of a glob that hold no special character. */
function literalBase(glob: string): string[] {
  const segments = glob.split("/");
  segments.pop();
  const base: string[] = [];
  for (const segment of segments) {
    if (segment === "" || /[*?[\]{}()!@+\\]/.test(segment)) break;
    base.push(segment);
  }
  return base;
}

const REGEX_SPECIAL = /[\\.+*?()|[\]{}^$]/;

function quote(char: string): string {
  return REGEX_SPECIAL.test(char) ? `\\${char}` : char;
}

/** Translates one glob to RE2 syntax, recording how deep a match can lie. */
class GlobTranslator {
  /** True when a match may have any number of segments (`**`, or `/` inside a group). */
  unboundedDepth = false;
  /** The number of segments of a match, when bounded. */
  segments = 1;
  readonly #glob: string;
  readonly #toolName: string;
  #index = 0;
  #groupDepth = 0;

  constructor(glob: string, toolName: string) {
    this.#glob = glob;
    this.#toolName = toolName;
  }

  translate(): string {
    return this.#sequence("");
  }

  /** Translates until one of `stops` (at this nesting level) or the end; leaves the stop unread. */
  #sequence(stops: string): string {
    const glob = this.#glob;
    let out = "";
    while (this.#index < glob.length) {
      const char = glob[this.#index]!;
      if (stops.includes(char)) break;
      out += this.#token(char, stops);
    }
    return out;
  }

  #token(char: string, stops: string): string {
    const glob = this.#glob;
    const start = this.#index;
    const next = glob[start + 1];
    if (char === "\\") {
      this.#index += next === undefined ? 1 : 2;
      if (next === "/") this.#countSlash();
      return quote(next ?? "\\");
    }
    if (char === "/") {
      this.#index += 1;
      this.#countSlash();
      // "a/**" at the end: the directory itself or anything below it.
      if (glob.startsWith("**", this.#index) && this.#isEnd(this.#index + 2, stops)) {
        this.#index += 2;
        this.unboundedDepth = true;
        return "(?:/.*)?";
      }
      return "/";
    }
    if (char === "*") {
      if (next === "(" && this.#closing(start + 1, "(", ")") !== -1) return this.#extglob("*");
      let end = start;
      while (glob[end] === "*") end += 1;
      this.#index = end;
      if (end - start >= 2 && this.#isSegmentStart(start)) {
        if (glob[end] === "/") {
          this.#index = end + 1;
          this.unboundedDepth = true;
          return "(?:[^/]*/)*";
        }
        if (this.#isEnd(end, stops)) {
          this.unboundedDepth = true;
          return ".*";
        }
      }
      return "[^/]*";
    }
    if (char === "?") {
      if (next === "(" && this.#closing(start + 1, "(", ")") !== -1) return this.#extglob("?");
      this.#index += 1;
      return "[^/]";
    }
    if ((char === "@" || char === "+" || char === "!") && next === "(") {
      if (this.#closing(start + 1, "(", ")") !== -1) return this.#extglob(char);
    }
    if (char === "(" && this.#closing(start, "(", ")") !== -1) return this.#extglob("@", true);
    if (char === "[") {
      const klass = this.#bracket(start);
      if (klass !== undefined) return klass;
    }
    if (char === "{") {
      const brace = this.#brace(start);
      if (brace !== undefined) return brace;
    }
    this.#index += 1;
    return quote(char);
  }

  #countSlash(): void {
    if (this.#groupDepth > 0) this.unboundedDepth = true;
    else this.segments += 1;
  }

  #isSegmentStart(position: number): boolean {
    if (position === 0) return true;
    return "/{,(|".includes(this.#glob[position - 1]!);
  }

  #isEnd(position: number, stops: string): boolean {
    const char = this.#glob[position];
    return char === undefined || (stops !== "" && stops.includes(char));
  }

  /** The index of the bracket closing the one at `open`, or -1; skips escapes and classes. */
  #closing(open: number, opener: string, closer: string): number {
    const glob = this.#glob;
    let depth = 0;
    for (let index = open; index < glob.length; index++) {
      const char = glob[index];
      if (char === "\\") index += 1;
      else if (char === opener) depth += 1;
      else if (char === closer) {
        depth -= 1;
        if (depth === 0) return index;
      }
    }
    return -1;
  }

  /** `@(a|b)` and friends; `operator` is the leading character. The index is at it. */
  #extglob(operator: string, bare = false): string {
    if (operator === "!") {
      throw new BuiltinToolError(
        "invalid_pattern",
        `${this.#toolName}: negated extglobs such as "!(...)" are not supported. Name what you want instead, for example "*.{ts,tsx}".`,
      );
    }
    this.#index += bare ? 1 : 2;
    const alternatives = this.#alternatives("|)");
    const group = `(?:${alternatives.join("|")})`;
    switch (operator) {
      case "?":
        return `${group}?`;
      case "+":
        return `${group}+`;
      case "*":
        return `${group}*`;
      default:
        return group;
    }
  }

  /** Reads alternatives separated by `stops[0]` until `stops[1]`, consuming the closer. */
  #alternatives(stops: string): string[] {
    const [separator, closer] = [stops[0]!, stops[1]!];
    const alternatives: string[] = [];
    this.#groupDepth += 1;
    for (;;) {
      alternatives.push(this.#sequence(stops));
      const char = this.#glob[this.#index];
      this.#index += 1;
      if (char === separator) continue;
      if (char === closer || char === undefined) break;
    }
    this.#groupDepth -= 1;
    return alternatives;
  }

  /** `{a,b}` or a range `{1..3}`; undefined (nothing consumed) when it is a literal brace. */
  #brace(open: number): string | undefined {
    const close = this.#closing(open, "{", "}");
    if (close === -1) return undefined;
    const inner = this.#glob.slice(open + 1, close);
    const range = braceRange(inner);
    if (range !== undefined) {
      this.#index = close + 1;
      return `(?:${range.map((item) => [...item].map(quote).join("")).join("|")})`;
    }
    if (!hasTopLevelComma(inner)) return undefined;
    this.#index = open + 1;
    return `(?:${this.#alternatives(",}").join("|")})`;
  }

  /** `[...]` as an RE2 class; undefined when never closed (then `[` is a literal). */
  #bracket(open: number): string | undefined {
    const glob = this.#glob;
    let index = open + 1;
    let negated = false;
    if (glob[index] === "!" || glob[index] === "^") {
      negated = true;
      index += 1;
    }
    let body = "";
    let first = true;
    while (index < glob.length) {
      const char = glob[index]!;
      if (char === "]" && !first) {
        this.#index = index + 1;
        // A negated class never matches "/", as "*" and "?" never do.
        return `[${negated ? "^/" : ""}${body}]`;
      }
      first = false;
      if (char === "[" && glob[index + 1] === ":") {
        const end = glob.indexOf(":]", index + 2);
        if (end !== -1) {
          body += glob.slice(index, end + 2);
          index = end + 2;
          continue;
        }
      }
      if (char === "\\" && index + 1 < glob.length) {
        const escaped = glob[index + 1]!;
        body += /[A-Za-z0-9]/.test(escaped) ? escaped : `\\${escaped}`;
        index += 2;
        continue;
      }
      body += char === "[" || char === "\\" || char === "]" ? `\\${char}` : char;
      index += 1;
    }
    return undefined;
  }
}

function hasTopLevelComma(inner: string): boolean {
  let depth = 0;
  for (let index = 0; index < inner.length; index++) {
    const char = inner[index];
    if (char === "\\") index += 1;
    else if (char === "{") depth += 1;
    else if (char === "}") depth -= 1;
    else if (char === "," && depth === 0) return true;
  }
  return false;
}

/** The items of `1..5` or `a..e`, or undefined when `inner` is no range or too long a one. */
function braceRange(inner: string): string[] | undefined {
  const numeric = /^(-?\d+)\.\.(-?\d+)$/.exec(inner);
  const letters = /^([A-Za-z])\.\.([A-Za-z])$/.exec(inner);
  let from: number;
  let to: number;
  if (numeric !== null) {
    from = Number(numeric[1]);
    to = Number(numeric[2]);
  } else if (letters !== null) {
    from = letters[1]!.charCodeAt(0);
    to = letters[2]!.charCodeAt(0);
  } else {
    return undefined;
  }
  if (Math.abs(to - from) + 1 > MAX_RANGE_ITEMS) return undefined;
  const step = from <= to ? 1 : -1;
  const items: string[] = [];
  for (let value = from; value !== to + step; value += step) {
    items.push(numeric !== null ? String(value) : String.fromCharCode(value));
  }
  return items;
}
