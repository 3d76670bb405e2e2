import { mkdir, symlink, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { globTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
  const files: Record<string, number> = {
    "lib/old.ts": 1_000_000,
    "lib/new.ts": 3_000_000,
    "lib/mid.ts": 2_000_000,
    "lib/readme.md": 2_500_000,
    "node_modules/dep/index.ts": 4_000_000,
    ".git/hooks/x.ts": 4_000_000,
    ".config.ts": 500_000,
  };
  for (const [name, seconds] of Object.entries(files)) {
    const file = path.join(fixture.cwd, name);
    await mkdir(path.dirname(file), { recursive: true });
    await writeFile(file, "x\n");
    await utimes(file, seconds, seconds);
  }
});
afterAll(() => fixture.cleanUp());

describe("Glob", () => {
  it("finds files relative to cwd, newest first, skipping node_modules and .git", async () => {
    const result = await call(globTool({ cwd: fixture.cwd }), { pattern: "lib/**/*.ts" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("lib/new.ts\nlib/mid.ts\nlib/old.ts");
    const all = text(await call(globTool({ cwd: fixture.cwd }), { pattern: "**/*.ts" }));
    expect(all).not.toContain("node_modules");
    expect(all).not.toContain(".git/");
    expect(all).toContain(".config.ts");
  });

  it("searches node_modules when the pattern names it", async () => {
    const result = await call(globTool({ cwd: fixture.cwd }), {
      pattern: "node_modules/**/*.ts",
    });
    expect(text(result)).toBe("node_modules/dep/index.ts");
  });

  it("searches inside path, and accepts an absolute pattern inside it", async () => {
    const glob = globTool({ cwd: fixture.cwd });
    expect(text(await call(glob, { pattern: "*.md", path: "lib" }))).toBe("lib/readme.md");
    const absolute = await call(glob, { pattern: path.join(fixture.cwd, "lib", "*.md") });
    expect(text(absolute)).toBe("lib/readme.md");
  });

  it("caps results with a note", async () => {
    const result = await call(globTool({ cwd: fixture.cwd, maxResults: 2 }), {
      pattern: "lib/*",
    });
    expect(text(result)).toBe(
      "lib/new.ts\nlib/readme.md\n[Showing the 2 most recently modified of 4 matching files. Narrow the pattern or path to see the others.]",
    );
  });

  it("says when nothing matches, and errors on a file or missing path", async () => {
    const glob = globTool({ cwd: fixture.cwd });
    const none = await call(glob, { pattern: "**/*.rs" });
    expect(none.isError).toBe(false);
    expect(text(none)).toBe('No files match "**/*.rs" in ..');
    const file = await call(glob, { pattern: "*", path: "a.txt" });
    expect(file.isError).toBe(true);
    expect(text(file)).toContain("is a file, not a directory");
    const missing = await call(glob, { pattern: "*", path: "nope" });
    expect(text(missing)).toContain('"nope" does not exist');
  });
});

describe("Glob and cancellation", () => {
  it("T22: an aborted signal ends the call as an is_error result", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call(
      globTool({ cwd: fixture.cwd }),
      { pattern: "**/*" },
      controller.signal,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("Glob was cancelled before it finished.");
  });
});

describe("Glob's walk", () => {
  it("H3: a pattern that would backtrack for minutes is matched in linear time", async () => {
    await mkdir(path.join(fixture.cwd, "redos"), { recursive: true });
    await writeFile(path.join(fixture.cwd, "redos", "a".repeat(40)), "x\n");
    let last = performance.now();
    let largestGap = 0;
    const ticker = setInterval(() => {
      largestGap = Math.max(largestGap, performance.now() - last);
      last = performance.now();
    }, 10);
    const result = await call(globTool({ cwd: fixture.cwd }), {
      pattern: "redos/*a*a*a*a*a*a*a*a*a*a*b",
    });
    clearInterval(ticker);
    largestGap = Math.max(largestGap, performance.now() - last);
    expect(text(result)).toBe('No files match "redos/*a*a*a*a*a*a*a*a*a*a*b" in ..');
    expect(largestGap).toBeLessThan(200);
  });

  it("follows a symlink cycle once and never loops", async () => {
    await mkdir(path.join(fixture.cwd, "cycle", "inner"), { recursive: true });
    await writeFile(path.join(fixture.cwd, "cycle", "inner", "leaf.ts"), "x\n");
    await symlink("..", path.join(fixture.cwd, "cycle", "inner", "up"));
    const result = await call(globTool({ cwd: fixture.cwd }), { pattern: "cycle/**/*.ts" });
    expect(text(result)).toBe("cycle/inner/leaf.ts");
  });

  it("refuses a negated extglob and an overlong pattern, saying what to do", async () => {
    const negated = await call(globTool({ cwd: fixture.cwd }), { pattern: "!(*.ts)" });
    expect(negated.isError).toBe(true);
    expect(text(negated)).toContain('negated extglobs such as "!(...)" are not supported');
    const long = await call(globTool({ cwd: fixture.cwd }), { pattern: `${"*".repeat(501)}` });
    expect(text(long)).toContain("at most 500 are accepted");
  });

  it("stops after maxVisited entries, with a note", async () => {
    const result = await call(globTool({ cwd: fixture.cwd, maxVisited: 3 }), { pattern: "**/*" });
    expect(text(result)).toContain(
      "[Stopped after reading 3 directory entries: there may be more matching files. Narrow the pattern or path.]",
    );
  });
});
