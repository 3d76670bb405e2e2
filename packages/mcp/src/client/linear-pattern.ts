import { RE2JS } from "re2js";

/** The longest `pattern` run on the linear-time engine, in characters; longer ones are unchecked. */
export const MAX_PATTERN_LENGTH = 4_000;

/**
 * The largest compiled pattern, in RE2 instructions (`[a-z]{1000}` is about 1,000), as Grep
 * allows: matching costs at most input length times this. Larger ones are unchecked. (What
 * compiling may cost is bounded before, by the caller's budget: see {@link InspectedPattern}.)
 */
const MAX_PROGRAM_SIZE = 20_000;

/** The largest repetition count RE2 takes, also for nested repetitions multiplied (`(a{10}){100}`). */
const MAX_REPEAT = 1_000;

/**
 * What one RE2 instruction of a Unicode property class (`\p{L}`, `\P{Lu}`) costs to compile, in
 * units of an ordinary instruction: about 20-30 µs against 1-3 µs.
 */
const PROPERTY_CLASS_COST = 16;

/** What JavaScript's `.` matches (no `s` flag in JSON Schema): anything but a line terminator. */
const DOT = "[^\\n\\r\\u2028\\u2029]";

/**
 * What JavaScript's `\s` matches beyond RE2's (`[\t\n\f\r ]`): `\v` and the Unicode spaces.
 * Written out so a linear pattern never refuses what the JavaScript one would accept.
 */
const EXTRA_SPACES =
  "\\x{0B}\\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}";

/**
 * Why a pattern cannot run on the linear-time engine:
 * - `invalid: true`: not a valid ECMA-262 regular expression (the schema is invalid);
 * - `invalid: false`: valid, but RE2 cannot run it (a lookaround, a backreference) or it is
 *   too large; the caller leaves it unchecked.
 */
export interface UnusablePattern {
  readonly ok: false;
  readonly invalid: boolean;
  readonly reason: string;
}

/**
 * A JSON Schema `pattern` compiled for the linear-time engine (`test` runs on RE2, `re2js`,
 * in time linear in the input, whatever the pattern), or why it cannot be.
 */
export type LinearPattern =
  | { readonly ok: true; readonly test: (text: string) => boolean; readonly size: number }
  | UnusablePattern;

/**
 * What can be told of a pattern without compiling it, in time linear in its length: its RE2
 * syntax and what compiling it would cost, or why RE2 cannot run it. The cost is an upper
 * bound of RE2's instruction count, with each instruction of a Unicode property class
 * (`\p{L}`) counted 16 times, as it takes about that much longer to compile (20-30 µs against
 * 1-3 µs): compiling is what takes time, so the caller budgets with `cost` before it compiles
 * anything (H19).
 */
export type InspectedPattern =
  | { readonly ok: true; readonly re2: string; readonly cost: number }
  | UnusablePattern;

/**
 * Checks a JSON Schema `pattern` (ECMA-262 syntax, Unicode mode, as Ajv reads it) without
 * compiling it for RE2: see {@link InspectedPattern}.
 *
 * @param pattern - The pattern as the schema gives it.
 */
export function inspectLinearPattern(pattern: string): InspectedPattern {
  if (pattern.length > MAX_PATTERN_LENGTH) {
    return {
      ok: false,
      invalid: false,
      reason: `it is ${pattern.length} characters long, over ${MAX_PATTERN_LENGTH}`,
    };
  }
  try {
    // Only the syntax is checked: a RegExp compiles lazily, and nothing is matched with it.
    new RegExp(pattern, "u");
  } catch (error) {
    return { ok: false, invalid: true, reason: (error as Error).message };
  }
  return scanPattern(pattern);
}

/**
 * Compiles a JSON Schema `pattern` for RE2, the engine Grep uses (H19): no pattern can
 * backtrack, so no input can hold the event loop. The translation keeps the pattern's meaning
 * (`\uXXXX`, surrogate pairs, JavaScript's wider `\s`, a `.` that matches no line terminator):
 * what the pattern accepts is accepted, what it refuses is refused.
 *
 * @param pattern - The pattern as the schema gives it.
 */
export function compileLinearPattern(pattern: string): LinearPattern {
  const inspected = inspectLinearPattern(pattern);
  if (!inspected.ok) return inspected;
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(inspected.re2);
  } catch (error) {
    return {
      ok: false,
      invalid: false,
      reason: (error as Error).message.replace(/^error parsing regexp: /, ""),
    };
  }
  const size = compiled.re2().numberOfInstructions() as number;
  if (size > MAX_PROGRAM_SIZE) {
    return {
      ok: false,
      invalid: false,
      reason: `it compiles to ${size} instructions, over ${MAX_PROGRAM_SIZE}`,
    };
  }
  return { ok: true, test: (text) => compiled.test(text), size };
}

/** One group being scanned: its costs so far (see {@link InspectedPattern}). */
interface Group {
  /** The alternatives closed so far, with one instruction per `|`. */
  closed: number;
  /** The open alternative. */
  open: number;
  /** The last atom's cost and the repetition nested in it, for a quantifier after it. */
  lastCost: number;
  lastRepeat: number;
  /** The largest product of nested repetition counts inside the group. */
  repeat: number;
  /** A capturing group costs two instructions. */
  readonly capture: boolean;
}

/**
 * The pattern in RE2 syntax and its cost, scanned once. The syntax is `re2js`'s
 * translation of JavaScript's (`\uXXXX` and `\u{...}` become `\x{...}`, `(?<name>` becomes
 * `(?P<name>`, `[^]` any character), after what it does not cover: a surrogate pair written
 * as two escapes becomes its code point, `\s` matches JavaScript's spaces, and `.` no line
 * terminator. Fails for what RE2 cannot run the same way: lookarounds, backreferences, `\S`
 * in a class, repetition counts over 1,000 (nested ones multiplied).
 */
function scanPattern(pattern: string): InspectedPattern {
  const unsupported = (reason: string): UnusablePattern => ({ ok: false, invalid: false, reason });
  const newGroup = (capture: boolean): Group => ({
    closed: 0,
    open: 0,
    lastCost: 0,
    lastRepeat: 1,
    repeat: 1,
    capture,
  });
  const groups: Group[] = [newGroup(false)];
  let group = groups[0] as Group;
  const atom = (cost: number, repeat = 1) => {
    group.open += cost;
    group.lastCost = cost;
    group.lastRepeat = repeat;
    group.repeat = Math.max(group.repeat, repeat);
  };
  let out = "";
  let inClass = false;
  /** What the Unicode property escapes of the open class add to its cost. */
  let classCost = 0;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index] as string;
    const rest = pattern.slice(index, index + 4);
    if (char === "\\") {
      const next = pattern[index + 1] ?? "";
      const pair = /^u(d[89ab][0-9a-f]{2})\\u(d[c-f][0-9a-f]{2})/i.exec(
        pattern.slice(index + 1, index + 13),
      );
      let written = char + next;
      if (pair !== null) {
        const high = Number.parseInt(pair[1] as string, 16);
        const low = Number.parseInt(pair[2] as string, 16);
        const codePoint = (high - 0xd800) * 0x400 + (low - 0xdc00) + 0x10000;
        written = `\\u{${codePoint.toString(16)}}`;
        index += pair[0].length;
      } else if (/[1-9]/.test(next)) {
        return unsupported(`backreferences (\\${next}) are not supported`);
      } else if (next === "k") {
        return unsupported("named backreferences (\\k<name>) are not supported");
      } else if (next === "s") {
        written = inClass ? `\\s${EXTRA_SPACES}` : `[\\s${EXTRA_SPACES}]`;
        index += 1;
      } else if (next === "S") {
        if (inClass) return unsupported("\\S inside a character class");
        written = `[^\\s${EXTRA_SPACES}]`;
        index += 1;
      } else {
        // `\u{...}`, `\p{...}`, `\P{...}` run to their brace; other escapes are two characters.
        const braced = /^[upP]\{[^}]*\}/.exec(pattern.slice(index + 1));
        written = braced !== null ? char + braced[0] : written;
        index += written.length - 1;
      }
      out += written;
      const cost = /^\\[pP]/.test(written) ? PROPERTY_CLASS_COST : 1;
      if (inClass) classCost += cost - 1;
      else atom(cost);
      continue;
    }
    out += char === "." && !inClass ? DOT : char;
    if (inClass) {
      if (char === "]") {
        inClass = false;
        atom(1 + classCost);
      }
      continue;
    }
    switch (char) {
      case "[":
        inClass = true;
        classCost = 0;
        break;
      case "(": {
        if (/^\(\?<?[=!]/.test(rest)) {
          return unsupported(`lookarounds (${/^\(\?<?[=!]/.exec(rest)?.[0]}) are not supported`);
        }
        group = newGroup(!rest.startsWith("(?:"));
        groups.push(group);
        break;
      }
      case ")": {
        const inner = groups.pop() as Group;
        group = groups[groups.length - 1] as Group;
        atom(inner.closed + inner.open + (inner.capture ? 2 : 0), inner.repeat);
        break;
      }
      case "|":
        group.closed += group.open + 1;
        group.open = 0;
        group.lastCost = 0;
        break;
      case "*":
      case "+":
      case "?":
        // A quantifier adds a branch; `?` after a quantifier (lazy) adds nothing.
        if (!/[*+?}]/.test(pattern[index - 1] ?? "")) group.open += 1;
        break;
      case "{": {
        const counts = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index));
        if (counts === null) break;
        const min = Number(counts[1]);
        const max =
          counts[2] === undefined ? min : counts[3] === "" ? undefined : Number(counts[3]);
        const count = max ?? min;
        const product = count * group.lastRepeat;
        if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT || product > MAX_REPEAT) {
          return unsupported(
            `repetition counts over ${MAX_REPEAT} (nested ones multiplied) are not supported`,
          );
        }
        const repeated =
          group.lastCost * Math.max(count, min + 1) + (max === undefined ? 1 : max - min);
        group.open += repeated - group.lastCost;
        group.lastCost = repeated;
        group.repeat = Math.max(group.repeat, product);
        group.lastRepeat = product;
        out += counts[0].slice(1);
        index += counts[0].length - 1;
        break;
      }
      default:
        atom(1);
    }
  }
  const root = groups[0] as Group;
  return { ok: true, re2: RE2JS.translateRegExp(out), cost: root.closed + root.open + 2 };
}
