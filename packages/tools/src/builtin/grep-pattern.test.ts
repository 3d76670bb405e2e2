import { RE2JS } from "re2js";
import { describe, expect, it } from "vitest";
import { estimateProgramSize, LinePattern } from "./grep-pattern.js";
import { LongLineSearcher } from "./long-line-searcher.js";

/** A deterministic pseudo-random source. */
function generator(seed: number): (limit: number) => number {
  let state = seed;
  return (limit) => {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    return (state >> 8) % limit;
  };
}

/** The lines RE2 itself matches, one line at a time: what LinePattern must find. */
function expected(pattern: string, ignoreCase: boolean, text: string): string[] {
  const compiled = RE2JS.compile(pattern, ignoreCase ? RE2JS.CASE_INSENSITIVE : 0);
  const lines = text.split(/\r?\n/);
  if (lines.at(-1) === "") lines.pop();
  return lines.flatMap((line, index) => (compiled.test(line) ? [`${index}:${line}`] : []));
}

async function found(pattern: string, ignoreCase: boolean, text: string): Promise<string[]> {
  const compiled = new LinePattern(pattern, ignoreCase);
  const lines: string[] = [];
  try {
    for await (const match of compiled.matchingLines(text, new AbortController().signal)) {
      lines.push(`${match.index}:${match.line}`);
    }
  } finally {
    compiled.close();
  }
  return lines;
}

describe("LinePattern finds exactly the lines RE2 matches one by one", () => {
  it("literal, alternation, prefix and chunked paths agree with RE2 on random texts", async () => {
    const next = generator(3);
    const pieces = ["a", "b", "c", "ab", "foo", "bar", " ", "\n", "\r\n", "\n", "(", ".", "x"];
    const more = ["Foo", "ſ", "K", "k", "\t", "\r"];
    const alphabet = [...pieces, ...more];
    const patterns = [
      "a",
      "ab|c",
      "^a",
      "a$",
      "^$",
      "foo",
      "Foo",
      "fo+",
      "foo\\(",
      "\\bfoo\\b",
      "a.c",
      "(a|b)+c",
      "^\\s*a",
      "\\Aab",
      "ab\\z",
      "(?-m)^a",
      "(?m)^a$",
      "[^a]",
      "x{2,}",
      "a\\sb",
      "foo|bar|",
      "s",
      "k",
      "(?i)foo",
      "a\\.",
      "^(a+)+$",
      "ab?c",
      "oo b",
      "foo[a-z]*\\(",
    ];
    for (let round = 0; round < 120; round++) {
      let text = "";
      const length = next(400);
      for (let index = 0; index < length; index++) text += alphabet[next(alphabet.length)];
      for (const pattern of patterns) {
        for (const ignoreCase of [false, true]) {
          const context = `${JSON.stringify(pattern)} -i=${ignoreCase} in ${JSON.stringify(text)}`;
          expect(await found(pattern, ignoreCase, text), context).toEqual(
            expected(pattern, ignoreCase, text),
          );
        }
      }
    }
  });

  it("lines longer than a call's budget (searched on the worker) and chunk edges agree too", async () => {
    const next = generator(11);
    const patterns = ["(a|b){1,500}c", "x{1,1000}END", "^b+$", "END"];
    for (let round = 0; round < 6; round++) {
      const lines: string[] = [];
      for (let index = 0; index < 40; index++) {
        const long = next(4) === 0;
        let line = "";
        const length = long ? 1000 + next(4000) : next(60);
        for (let char = 0; char < length; char++) line += "abx"[next(3)];
        if (next(5) === 0) line += next(2) === 0 ? "c" : "END";
        lines.push(line);
      }
      const text = `${lines.join(next(2) === 0 ? "\n" : "\r\n")}\n`;
      for (const pattern of patterns) {
        expect(await found(pattern, false, text), pattern).toEqual(expected(pattern, false, text));
      }
    }
  }, 30_000);

  it("estimates the size of counted repetitions before compiling", () => {
    expect(estimateProgramSize("abc")).toBeLessThan(10);
    expect(estimateProgramSize("[a-z]{1000}")).toBeGreaterThanOrEqual(1000);
    expect(estimateProgramSize("(\\w{100}){100}")).toBeGreaterThanOrEqual(10_000);
    // The estimate is not below what RE2 really compiles.
    for (const pattern of ["x{1,1000}END", "(a|b){1,500}c", "(.{1,100}a){1,10}c", "\\pL{50}"]) {
      const real = RE2JS.compile(pattern).re2().numberOfInstructions() as number;
      expect(estimateProgramSize(pattern), pattern).toBeGreaterThanOrEqual(real / 2);
    }
  });

  it("H3: an abort ends the worker's search of a long line at once", async () => {
    const next = generator(5);
    let line = "c";
    for (let index = 0; index < 1_000_000; index++) line += "ab"[next(2)];
    const searcher = new LongLineSearcher("(.{1,100}a){1,10}c", 0);
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 200);
    const started = performance.now();
    // Seconds of work for RE2; the abort terminates the worker.
    const matched = await searcher.test(line, controller.signal);
    expect(matched).toBeUndefined();
    expect(performance.now() - started).toBeLessThan(1000);
    searcher.close();
  });
});
