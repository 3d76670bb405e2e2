import { RE2JS } from "re2js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { LongLineSearcher } from "./long-line-searcher.js";

/** The longest regular expression Grep accepts, in characters. */
export const MAX_GREP_PATTERN_LENGTH = 4000;

/**
 * The largest compiled program Grep accepts, in RE2 instructions (`[a-z]{1000}` is about
 * 1,000). Compiling is linear in this size; 20,000 compiles in tens of milliseconds.
 */
const MAX_PROGRAM_SIZE = 20_000;

/**
 * The most work one call of the engine may do on the main thread, in characters times
 * program instructions: RE2's slowest path costs at most about 10 ns per unit on this kind of
 * machine, so one call stays under about 20 ms. Longer lines go to a worker thread.
 */
const WORK_PER_CALL = 2_000_000;

/** The most characters of whole lines one engine call checks before lines are tested one by one. */
const CHUNK_CHARS = 16_384;

/** How long the search runs before it lets the event loop turn (and checks for an abort). */
const YIELD_AFTER_MS = 10;

/** A line that matched: its 0-based index in the file and its text (without `\r\n`). */
export interface MatchingLine {
  readonly index: number;
  readonly line: string;
}

/**
 * Grep's pattern, compiled to the linear-time RE2 engine (`re2js`, a pure-JavaScript port of
 * RE2): no pattern can backtrack, and the search yields to the event loop every few
 * milliseconds, so a model's pattern never stalls the process (H3). Internal: one per call;
 * {@link LinePattern.close} ends its worker, if it started one.
 */
export class LinePattern {
  /** Lines too long for the main thread that the worker could not search within its time limit. */
  unsearchedLines = 0;
  /** Whether one line matches. */
  readonly #test: (line: string) => boolean;
  /**
   * Whether some line of a run of whole lines may match (a necessary condition), or
   * undefined when no such check is exact for this pattern.
   */
  readonly #chunkTest: ((lines: string) => boolean) | undefined;
  /** The most characters one chunk check may cover (its cost bound). */
  readonly #chunkLimit: number;
  /** Whether the chunk check is wrong for texts with "\r\n" line breaks. */
  readonly #chunkUnlessCarriageReturn: boolean;
  /**
   * Whether to choose, chunk by chunk, the cheaper of checking the chunk first and testing
   * its lines directly (by the time each took, per character, so far): a pass of RE2's DFA
   * over a chunk costs more than testing the lines one by one when RE2's own literal
   * prefilter rules most lines out. Both ways give the same answer.
   */
  readonly #adaptive: boolean;
  #chunks = 0;
  /** Milliseconds per character, chunk checked first / lines tested directly; -1: unknown. */
  #checkedCost = -1;
  #directCost = -1;
  /** The longest line tested on the main thread; longer ones go to the worker. */
  readonly #maxCallChars: number;
  readonly #longLines: LongLineSearcher | undefined;
  #lastYield = performance.now();

  /**
   * @param pattern - RE2 syntax, matched against each line (without its line break).
   * @param ignoreCase - Match case-insensitively.
   * @throws {@link BuiltinToolError} `"invalid_pattern"` for a pattern RE2 rejects (saying
   *   what is unsupported and what to do), one over {@link MAX_GREP_PATTERN_LENGTH}
   *   characters, or one whose program would be larger than 20,000 instructions.
   */
  constructor(pattern: string, ignoreCase: boolean) {
    if (pattern.length > MAX_GREP_PATTERN_LENGTH) {
      throw new BuiltinToolError(
        "invalid_pattern",
        `Grep: the pattern is ${pattern.length} characters long; at most ${MAX_GREP_PATTERN_LENGTH} are accepted. Search for a shorter, more specific pattern.`,
      );
    }
    const literals = literalAlternatives(pattern);
    if (literals !== undefined && !ignoreCase) {
      // Plain text, or texts joined by "|": String.prototype.includes is exact and fastest.
      const test =
        literals.length === 1
          ? (text: string) => text.includes(literals[0]!)
          : (text: string) => literals.some((literal) => text.includes(literal));
      this.#test = test;
      this.#chunkTest = test;
      this.#chunkLimit = CHUNK_CHARS;
      this.#chunkUnlessCarriageReturn = false;
      this.#adaptive = false;
      this.#maxCallChars = Number.POSITIVE_INFINITY;
      return;
    }
    if (estimateProgramSize(pattern) > MAX_PROGRAM_SIZE) throw tooLarge(pattern);
    const flags = ignoreCase ? RE2JS.CASE_INSENSITIVE : 0;
    let line: RE2JS;
    try {
      line = RE2JS.compile(pattern, flags);
    } catch (error) {
      throw invalidPattern(pattern, error);
    }
    const size = line.re2().numberOfInstructions() as number;
    if (size > MAX_PROGRAM_SIZE) throw tooLarge(pattern);
    const prefix = ignoreCase ? undefined : requiredPrefix(pattern);
    // A text every match starts with rules out most lines at the cost of a native search.
    this.#test =
      prefix === undefined
        ? (text) => line.test(text)
        : (text) => text.includes(prefix) && line.test(text);
    this.#maxCallChars = Math.max(1, Math.floor(WORK_PER_CALL / size));
    this.#longLines = new LongLineSearcher(pattern, flags);
    this.#chunkUnlessCarriageReturn = pattern.includes("$");
    if (literals !== undefined) {
      // Texts to find in any case: a native search for them, with Unicode case folding as
      // RE2's, rules chunks out; RE2 decides each line of the rest. Searching n characters
      // for texts of m characters in all costs at most n * m steps: the chunk is cut to fit.
      const escaped = literals.map((literal) => literal.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&"));
      const native = new RegExp(escaped.join("|"), "iu");
      const length = literals.reduce((sum, literal) => sum + literal.length, 0);
      this.#chunkTest = (lines) => native.test(lines);
      this.#chunkLimit = Math.min(CHUNK_CHARS, Math.max(1, Math.floor(WORK_PER_CALL / length)));
      this.#adaptive = false;
      return;
    }
    if (prefix !== undefined) {
      this.#chunkTest = (lines) => lines.includes(prefix);
      this.#chunkLimit = CHUNK_CHARS;
      this.#adaptive = false;
      return;
    }
    // A run of lines is first checked in one call, with ^ and $ matching at line breaks: a
    // line that matches alone matches there too, so a run without a match is skipped whole.
    // Not when the pattern could tell the run from a line: \A, \z, a flag group that turns
    // multi-line mode off, or $ before a "\r\n" (lines are cut before the "\r").
    if (!/\\[Az]|\(\?[a-zA-Z]*-/.test(pattern)) {
      const chunk = RE2JS.compile(pattern, flags | RE2JS.MULTILINE);
      this.#chunkTest = (lines) => chunk.test(lines);
    }
    this.#chunkLimit = Math.min(CHUNK_CHARS, this.#maxCallChars);
    this.#adaptive = true;
  }

  /**
   * Yields each line of `text` that matches, in order. Lines are split at `\n` (a `\r` before
   * it is dropped); a final line break starts no extra line. Stops quietly when `signal`
   * aborts: the caller checks it.
   */
  async *matchingLines(text: string, signal: AbortSignal): AsyncGenerator<MatchingLine> {
    const chunkTest =
      this.#chunkUnlessCarriageReturn && text.includes("\r") ? undefined : this.#chunkTest;
    let index = 0;
    let start = 0;
    while (start < text.length) {
      if (performance.now() - this.#lastYield > YIELD_AFTER_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        this.#lastYield = performance.now();
        if (signal.aborted) return;
      }
      let end = lineEnd(text, start);
      if (end - start > this.#maxCallChars) {
        // Too long to search here without holding the event loop: a worker does it.
        const line = lineText(text, start, end);
        const matched = await this.#longLines!.test(line, signal);
        this.#lastYield = performance.now();
        if (matched === undefined) {
          if (signal.aborted) return;
          this.unsearchedLines += 1;
        } else if (matched) yield { index, line };
        index += 1;
        start = end + 1;
        continue;
      }
      // Whole lines, up to the chunk's size (at least one line).
      let lines = 1;
      // (A final line break starts no line.)
      while (end + 1 < text.length) {
        const next = lineEnd(text, end + 1);
        if (next - start > this.#chunkLimit) break;
        end = next;
        lines += 1;
      }
      const checked = chunkTest !== undefined && this.#checkFirst();
      const began = performance.now();
      const first = start;
      let recorded = false;
      // The cost of this way, per character, until the first match (then the caller's code
      // runs, and the caller may stop: files_with_matches wants one line a file).
      const record = (): void => {
        if (recorded) return;
        recorded = true;
        this.#record(checked, (performance.now() - began) / ((checked ? end : start) - first + 1));
      };
      if (checked && !chunkTest(text.slice(start, end))) {
        record();
        index += lines;
        start = end + 1;
        continue;
      }
      for (let line = 0; line < lines; line++) {
        const stop = lineEnd(text, start);
        const shown = lineText(text, start, stop);
        const at = index;
        index += 1;
        start = stop + 1;
        if (this.#test(shown)) {
          record();
          yield { index: at, line: shown };
        }
      }
      record();
    }
  }

  /** Ends the worker thread, if one was started. */
  close(): void {
    this.#longLines?.close();
  }

  /** Whether to check the next chunk before testing its lines (see `#adaptive`). */
  #checkFirst(): boolean {
    if (!this.#adaptive) return true;
    this.#chunks += 1;
    // Try each way now and then, so that a change in the text is noticed.
    if (this.#checkedCost < 0 || this.#chunks % 16 === 0) return true;
    if (this.#directCost < 0 || this.#chunks % 16 === 8) return false;
    return this.#checkedCost <= this.#directCost;
  }

  #record(checked: boolean, cost: number): void {
    if (!this.#adaptive) return;
    if (checked)
      this.#checkedCost = this.#checkedCost < 0 ? cost : (this.#checkedCost * 3 + cost) / 4;
    else this.#directCost = this.#directCost < 0 ? cost : (this.#directCost * 3 + cost) / 4;
  }
}

/**
 * The texts of a pattern that is plain text or texts joined by `|` (punctuation may be
 * escaped with `\\`), unescaped; undefined for any other pattern.
 */
function literalAlternatives(pattern: string): string[] | undefined {
  const literals: string[] = [];
  let current = "";
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "\\") {
      const next = pattern[index + 1];
      if (next === undefined || !ESCAPABLE.includes(next)) return undefined;
      current += next;
      index += 1;
    } else if (char === "|") {
      literals.push(current);
      current = "";
    } else if (".+*?()[]{}^$\r\n".includes(char)) {
      return undefined;
    } else {
      current += char;
    }
  }
  literals.push(current);
  return literals;
}

/**
 * The plain text every match of a pattern starts with (after a leading `^`), if the pattern
 * is one concatenation (no `|` outside a group) that starts with at least two plain
 * characters; undefined otherwise. A quantifier after the text takes its last character off.
 */
function requiredPrefix(pattern: string): string | undefined {
  if (hasTopLevelBar(pattern)) return undefined;
  let prefix = "";
  let index = pattern.startsWith("^") ? 1 : 0;
  for (; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "\\") {
      const next = pattern[index + 1];
      if (next === undefined || !ESCAPABLE.includes(next)) break;
      prefix += next;
      index += 1;
    } else if (".+*?()[]{}^$|\r\n".includes(char)) {
      break;
    } else {
      prefix += char;
    }
  }
  const after = pattern[index];
  if (after === "*" || after === "?" || after === "{") prefix = prefix.slice(0, -1);
  return prefix.length >= 2 ? prefix : undefined;
}

/** Whether a pattern has a `|` outside every group and class. */
function hasTopLevelBar(pattern: string): boolean {
  let depth = 0;
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index];
    if (char === "\\") index += 1;
    else if (char === "[") {
      // Skip the class: a "]" first in it is a member.
      index += pattern[index + 1] === "^" ? 2 : 1;
      if (pattern[index] === "]") index += 1;
      while (index < pattern.length && pattern[index] !== "]") {
        if (pattern[index] === "\\") index += 1;
        index += 1;
      }
    } else if (char === "(") depth += 1;
    else if (char === ")") depth -= 1;
    else if (char === "|" && depth <= 0) return true;
  }
  return false;
}

/** The characters RE2 lets `\\` escape to themselves: ASCII punctuation. */
const ESCAPABLE = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

/** The index of the `\n` ending the line that starts at `start`, or the text's length. */
function lineEnd(text: string, start: number): number {
  const end = text.indexOf("\n", start);
  return end === -1 ? text.length : end;
}

/** A line's text without a `\r` before its `\n`. */
function lineText(text: string, start: number, end: number): string {
  const cut = end < text.length && end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end;
  return text.slice(start, cut);
}

function tooLarge(pattern: string): BuiltinToolError {
  return new BuiltinToolError(
    "invalid_pattern",
    `Grep: the pattern ${JSON.stringify(pattern.length > 200 ? `${pattern.slice(0, 200)}…` : pattern)} is too large once its counted repetitions ({n,m}) are expanded (more than ${MAX_PROGRAM_SIZE} steps). Use smaller counts, such as {1,100}, or + and *.`,
  );
}

function invalidPattern(pattern: string, error: unknown): BuiltinToolError {
  const reason = (error as Error).message.replace(/^error parsing regexp: /, "");
  let advice =
    "Escape special characters such as ( [ { . * + ? with a backslash, or fix the syntax, and call Grep again.";
  if (/\(\?<?[=!]/.test(pattern)) {
    advice =
      "Lookahead and lookbehind ((?=...), (?!...), (?<=...), (?<!...)) are not supported: match the surrounding text itself, or search more broadly and narrow the result with glob or a second Grep.";
  } else if (/\\[1-9]/.test(pattern)) {
    advice =
      "Backreferences (\\1, \\2, ...) are not supported: write the repeated text out, or search more broadly and narrow the result.";
  } else if (/\\u/.test(pattern)) {
    advice = "Write a Unicode code point as \\x{00e9}, not \\u00e9.";
  }
  return new BuiltinToolError(
    "invalid_pattern",
    `Grep: ${JSON.stringify(pattern)} is not a valid RE2 regular expression (${reason}). Grep uses RE2 syntax, like ripgrep. ${advice}`,
    { cause: error },
  );
}

/**
 * An estimate of the compiled size of a pattern, in instructions, from its counted
 * repetitions (`x{1000}` repeats `x`'s instructions 1000 times; nested ones multiply), so an
 * oversized pattern is refused before compiling it would hold the event loop. Generous, not
 * exact: every other character counts as one instruction.
 */
export function estimateProgramSize(pattern: string): number {
  const totals = [0];
  let last = 0;
  const atom = (size: number): void => {
    totals[totals.length - 1]! += size;
    last = size;
  };
  for (let index = 0; index < pattern.length; index++) {
    const char = pattern[index]!;
    if (char === "\\") {
      const next = pattern[index + 1];
      if (next === "Q") {
        const end = pattern.indexOf("\\E", index + 2);
        const stop = end === -1 ? pattern.length : end;
        atom(stop - index - 2);
        index = end === -1 ? pattern.length : end + 1;
      } else if ((next === "p" || next === "P" || next === "x") && pattern[index + 2] === "{") {
        const end = pattern.indexOf("}", index);
        index = end === -1 ? pattern.length : end;
        atom(1);
      } else {
        index += 1;
        atom(1);
      }
    } else if (char === "[") {
      let end = index + 1;
      if (pattern[end] === "^") end += 1;
      if (pattern[end] === "]") end += 1;
      while (end < pattern.length && pattern[end] !== "]") {
        if (pattern[end] === "\\") end += 2;
        else if (pattern[end] === "[" && pattern[end + 1] === ":") {
          const close = pattern.indexOf(":]", end + 2);
          end = close === -1 ? end + 1 : close + 2;
        } else end += 1;
      }
      index = end;
      atom(1);
    } else if (char === "(") {
      totals.push(0);
    } else if (char === ")") {
      const inner = totals.length > 1 ? totals.pop()! : 0;
      atom(inner + 2);
    } else if (char === "{") {
      const repeat = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index, index + 24));
      if (repeat === null) {
        atom(1);
        continue;
      }
      const low = Number(repeat[1]);
      const high = repeat[2] === undefined ? low : repeat[3] === "" ? low + 1 : Number(repeat[3]);
      const times = Math.max(low, high, 1);
      totals[totals.length - 1]! += last * (times - 1) + times;
      last *= times;
      index += repeat[0].length - 1;
    } else if (char === "|") {
      totals[totals.length - 1]! += 1;
      last = 0;
    } else {
      atom(1);
    }
  }
  return totals.reduce((sum, total) => sum + total, 0);
}
