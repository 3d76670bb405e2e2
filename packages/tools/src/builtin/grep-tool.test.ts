import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { grepTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
  const files: Record<string, string | Buffer> = {
    "g/one.ts": "const Needle = 1;\nconst other = 2;\nneedle again\n",
    "g/two.js": "no match here\n",
    "g/deep/three.ts": "needle\nneedle\nneedle\n",
    "g/binary.dat": Buffer.concat([Buffer.from("needle"), Buffer.from([0, 1, 2])]),
    "g/node_modules/pkg/index.ts": "needle in node_modules\n",
    "g/.git/config": "needle in git\n",
    "g/long.txt": `needle ${"y".repeat(1000)}\n`,
  };
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(fixture.cwd, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, content);
  }
});
afterAll(() => fixture.cleanUp());

describe("Grep", () => {
  it('lists matching files by default ("files_with_matches"), skipping binary, node_modules and .git', async () => {
    const result = await call(grepTool({ cwd: fixture.cwd }), { pattern: "needle", path: "g" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("g/deep/three.ts\ng/long.txt\ng/one.ts");
  });

  it('"content" mode shows path:line:text and cuts long lines', async () => {
    const result = await call(grepTool({ cwd: fixture.cwd, maxLineLength: 20 }), {
      pattern: "needle",
      path: "g",
      output_mode: "content",
    });
    expect(text(result)).toBe(
      [
        "g/deep/three.ts:1:needle",
        "g/deep/three.ts:2:needle",
        "g/deep/three.ts:3:needle",
        `g/long.txt:1:needle ${"y".repeat(13)}… [line cut]`,
        "g/one.ts:3:needle again",
      ].join("\n"),
    );
  });

  it('"count" mode shows path:count; "-i" ignores case', async () => {
    const grep = grepTool({ cwd: fixture.cwd });
    const counted = await call(grep, { pattern: "needle", path: "g", output_mode: "count" });
    expect(text(counted)).toBe("g/deep/three.ts:3\ng/long.txt:1\ng/one.ts:1");
    const insensitive = await call(grep, {
      pattern: "needle",
      path: "g/one.ts",
      output_mode: "count",
      "-i": true,
    });
    expect(text(insensitive)).toBe("g/one.ts:2");
  });

  it("filters files with glob: a name glob at any depth, or a path glob", async () => {
    const grep = grepTool({ cwd: fixture.cwd });
    expect(text(await call(grep, { pattern: "needle", path: "g", glob: "*.ts" }))).toBe(
      "g/deep/three.ts\ng/one.ts",
    );
    expect(text(await call(grep, { pattern: "needle", path: "g", glob: "deep/**" }))).toBe(
      "g/deep/three.ts",
    );
    expect(text(await call(grep, { pattern: "needle", glob: "g/*.{ts,js}" }))).toBe("g/one.ts");
  });

  it("searches node_modules when path or glob names it", async () => {
    const result = await call(grepTool({ cwd: fixture.cwd }), {
      pattern: "needle",
      path: "g/node_modules",
    });
    expect(text(result)).toBe("g/node_modules/pkg/index.ts");
  });

  it("caps results with a note", async () => {
    const result = await call(grepTool({ cwd: fixture.cwd, maxResults: 2 }), {
      pattern: "needle",
      path: "g",
      output_mode: "content",
    });
    expect(text(result)).toBe(
      "g/deep/three.ts:1:needle\ng/deep/three.ts:2:needle\n[Results cut at 2 matching lines; there are more. Narrow the search with path, glob or a more specific pattern.]",
    );
  });

  it("skips files over maxFileBytes and says so", async () => {
    const result = await call(grepTool({ cwd: fixture.cwd, maxFileBytes: 30 }), {
      pattern: "needle",
      path: "g",
    });
    expect(text(result)).toContain("g/deep/three.ts");
    expect(text(result)).toContain("larger than 30 bytes and not searched");
  });

  it("errors: an invalid regular expression, a missing path; no match is not an error", async () => {
    const grep = grepTool({ cwd: fixture.cwd });
    const invalid = await call(grep, { pattern: "foo(" });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toContain('Grep: "foo(" is not a valid RE2 regular expression');
    const missing = await call(grep, { pattern: "x", path: "nope" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('"nope" does not exist');
    const none = await call(grep, { pattern: "zzz-not-there" });
    expect(none.isError).toBe(false);
    expect(text(none)).toBe("No matches found.");
    const badMode = await call(grep, { pattern: "x", output_mode: "lines" });
    expect(badMode.isError).toBe(true);
  });
});

describe("Grep and cancellation", () => {
  it("T22: an aborted signal ends the search as an is_error result, not as 'no matches'", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call(
      grepTool({ cwd: fixture.cwd }),
      { pattern: "needle" },
      controller.signal,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("Grep was cancelled before it finished.");
  });
});

/** Runs `work` while a 10 ms interval ticks; returns its result and the largest gap between ticks. */
async function withTicker<T>(work: () => Promise<T>): Promise<{ value: T; largestGap: number }> {
  let last = performance.now();
  let largestGap = 0;
  const ticker = setInterval(() => {
    const now = performance.now();
    largestGap = Math.max(largestGap, now - last);
    last = now;
  }, 10);
  try {
    const value = await work();
    largestGap = Math.max(largestGap, performance.now() - last);
    return { value, largestGap };
  } finally {
    clearInterval(ticker);
  }
}

/** A deterministic string of `length` characters drawn from `alphabet`. */
function pseudoRandom(length: number, alphabet: string, seed: number): string {
  let state = seed;
  let out = "";
  for (let index = 0; index < length; index++) {
    state = (state * 1103515245 + 12345) & 0x7fffffff;
    out += alphabet[(state >> 8) % alphabet.length];
  }
  return out;
}

describe("Grep's pattern cannot block the event loop (H3)", () => {
  it("H3: a catastrophic pattern does not stall a timer", async () => {
    // A backtracking engine takes seconds on each of these lines (time doubles per "a").
    await writeFile(path.join(fixture.cwd, "redos.txt"), `${"a".repeat(25)}!\n`.repeat(3));
    const { value: result, largestGap } = await withTicker(() =>
      call(grepTool({ cwd: fixture.cwd }), {
        pattern: "^(a+)+$",
        path: "redos.txt",
        output_mode: "count",
      }),
    );
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("No matches found.");
    expect(largestGap).toBeLessThan(200);
  });

  it("H3: an abort during a long search stops it promptly, and timers keep their pace meanwhile", async () => {
    // A large pattern over many lines: seconds of linear work, done in slices.
    const lines = Array.from({ length: 6000 }, (_, index) => `c${pseudoRandom(34, "ab", index)}`);
    await writeFile(path.join(fixture.cwd, "long-search.txt"), `${lines.join("\n")}\n`);
    const controller = new AbortController();
    let abortedAt = 0;
    setTimeout(() => {
      abortedAt = performance.now();
      controller.abort();
    }, 300);
    const { value: result, largestGap } = await withTicker(() =>
      call(
        grepTool({ cwd: fixture.cwd }),
        { pattern: "(.{1,100}a){1,10}c", path: "long-search.txt" },
        controller.signal,
      ),
    );
    const settledAfterAbort = performance.now() - abortedAt;
    expect(abortedAt).toBeGreaterThan(0);
    expect(settledAfterAbort).toBeLessThan(500);
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("Grep was cancelled before it finished.");
    expect(largestGap).toBeLessThan(200);
  });

  it("H3: a line too long to search on the main thread is searched on a worker", async () => {
    // About 2,000 instructions: lines over about 1,000 characters go to the worker.
    const line = `${"y".repeat(20_000)} ${"x".repeat(5)}END`;
    await writeFile(path.join(fixture.cwd, "minified.js"), `short line\n${line}\nlast\n`);
    const { value: result, largestGap } = await withTicker(() =>
      call(grepTool({ cwd: fixture.cwd }), {
        pattern: "x{1,1000}END",
        path: "minified.js",
        output_mode: "count",
      }),
    );
    expect(text(result)).toBe("minified.js:1");
    expect(largestGap).toBeLessThan(200);
  });

  it("H3: RE2 syntax: lookaround and backreferences are refused with what to do instead", async () => {
    const grep = grepTool({ cwd: fixture.cwd });
    const lookahead = await call(grep, { pattern: "foo(?=bar)" });
    expect(lookahead.isError).toBe(true);
    expect(text(lookahead)).toContain("is not a valid RE2 regular expression");
    expect(text(lookahead)).toContain("Lookahead and lookbehind");
    const backreference = await call(grep, { pattern: "(a)\\1" });
    expect(text(backreference)).toContain("Backreferences (\\1, \\2, ...) are not supported");
    const huge = await call(grep, { pattern: "(\\w{1000}){1000}" });
    expect(huge.isError).toBe(true);
    const oversized = await call(grep, { pattern: "[a-z]{1000}".repeat(30) });
    expect(text(oversized)).toContain("is too large once its counted repetitions");
    // The description the model reads says which syntax it is.
    expect(grep.description).toContain("RE2 syntax, like ripgrep");
  });

  it("H3: Grep's glob is matched in linear time too", async () => {
    await writeFile(path.join(fixture.cwd, `${"a".repeat(40)}.txt`), "needle\n");
    const { value: result, largestGap } = await withTicker(() =>
      call(grepTool({ cwd: fixture.cwd }), { pattern: "needle", glob: "*a*a*a*a*a*a*a*a*a*a*b" }),
    );
    expect(text(result)).toBe("No matches found.");
    expect(largestGap).toBeLessThan(200);
  });
});
