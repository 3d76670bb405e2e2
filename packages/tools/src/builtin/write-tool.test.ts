import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
});
afterAll(() => fixture.cleanUp());

describe("Write", () => {
  it("creates a file and its missing parent directories inside cwd", async () => {
    const result = await call(writeTool({ cwd: fixture.cwd }), {
      file_path: "new/dir/file.txt",
      content: "héllo\n",
    });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("Created new/dir/file.txt (7 bytes).");
    expect(await readFile(path.join(fixture.cwd, "new/dir/file.txt"), "utf8")).toBe("héllo\n");
  });

  it("overwrites an existing file, by absolute path inside cwd", async () => {
    const file = path.join(fixture.cwd, "a.txt");
    const result = await call(writeTool({ cwd: fixture.cwd }), { file_path: file, content: "" });
    expect(text(result)).toBe(`Overwrote ${file} (0 bytes).`);
    expect(await readFile(file, "utf8")).toBe("");
  });

  it("refuses to write over a directory", async () => {
    const result = await call(writeTool({ cwd: fixture.cwd }), { file_path: "src", content: "x" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Write: "src" is a directory; it was left as it is.');
  });

  it("T3: refuses input without content", async () => {
    const result = await call(writeTool({ cwd: fixture.cwd }), { file_path: "x.txt" });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("content");
  });
});
