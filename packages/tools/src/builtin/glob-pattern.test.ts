import { describe, expect, it } from "vitest";
import { compileGlob } from "./glob-pattern.js";

/** [glob, path, matches]: picomatch syntax with `dot: true`, as Glob and Grep took it before. */
const CASES: readonly (readonly [string, string, boolean])[] = [
  ["a/**", "a/x/y", true],
  ["a/**", "a", true],
  ["**", "a/b", true],
  ["**/b", "b", true],
  ["a/**/b", "a/b", true],
  ["a/**/b", "a/x/y/b", true],
  ["a**b", "axb", true],
  ["a**b", "ax/yb", false],
  ["*", "a/b", false],
  ["*", ".x", true],
  ["**/*.ts", ".config.ts", true],
  ["lib/**/*.ts", "lib/new.ts", true],
  ["*.{ts,js}", "x.js", true],
  ["a{b,c{d,e}}", "acd", true],
  ["{a,b/c}", "b/c", true],
  ["{a}", "{a}", true],
  ["{a}", "a", false],
  ["x{1..3}", "x2", true],
  ["{a..c}", "b", true],
  ["x{,a}", "xa", true],
  ["x{a,}", "x", true],
  ["@(a|b)", "a", true],
  ["+(a|b)", "abab", true],
  ["?(a)x", "x", true],
  ["(a|b)", "a", true],
  ["a|b", "a", false],
  ["[^a]", "a", false],
  ["[!a]", "b", true],
  ["[a-c]", "b", true],
  ["[[:alpha:]]", "q", true],
  ["[]", "[]", true],
  ["[a", "[a", true],
  ["./a", "a", true],
  ["\\*", "*", true],
  ["\\*", "a", false],
  ["?", "/", false],
  ["src/[a-z]*.ts", "src/abc.ts", true],
  ["src/[a-z]*.ts", "src/Abc.ts", false],
  ["**/node_modules/**", "x/node_modules/y", true],
];

describe("compileGlob", () => {
  it("matches as picomatch does (dot: true)", () => {
    for (const [glob, path, matches] of CASES) {
      expect(compileGlob(glob, "Glob").matches(path), `${glob} on ${path}`).toBe(matches);
    }
  });

  it("knows which directories can hold a match", () => {
    const glob = compileGlob("src/*/x.ts", "Glob");
    expect(glob.mayContain("")).toBe(true);
    expect(glob.mayContain("src")).toBe(true);
    expect(glob.mayContain("src/a")).toBe(true);
    expect(glob.mayContain("src/a/b")).toBe(false);
    expect(glob.mayContain("lib")).toBe(false);
    const deep = compileGlob("src/**/x.ts", "Glob");
    expect(deep.mayContain("src/a/b/c")).toBe(true);
    expect(deep.mayContain("lib")).toBe(false);
  });

  it("H3: compiles a glob that makes a backtracking matcher take minutes to a linear-time one", () => {
    const started = performance.now();
    const glob = compileGlob("*a*a*a*a*a*a*a*a*a*a*b", "Glob");
    expect(glob.matches("a".repeat(255))).toBe(false);
    expect(performance.now() - started).toBeLessThan(100);
  });
});
