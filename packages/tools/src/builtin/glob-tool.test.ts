import { mkdir, utimes, writeFile } from "node:fs/promises";
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
