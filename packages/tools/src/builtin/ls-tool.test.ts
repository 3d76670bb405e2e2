import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lsTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
  await mkdir(path.join(fixture.cwd, "empty"));
  await mkdir(path.join(fixture.cwd, "many"));
  for (let index = 0; index < 12; index++) {
    await writeFile(path.join(fixture.cwd, "many", `f${String(index).padStart(2, "0")}`), "");
  }
});
afterAll(() => fixture.cleanUp());

describe("LS", () => {
  it("lists entries sorted by name, directories with a trailing /", async () => {
    const result = await call(lsTool({ cwd: fixture.cwd }), { path: "." });
    expect(result.isError).toBe(false);
    expect(text(result).split("\n")).toEqual([
      "a.txt",
      "dangling-out",
      "empty/",
      "link-dir-in/",
      "link-dir-out",
      "link-in",
      "link-out",
      "many/",
      "src/",
    ]);
  });

  it("accepts an absolute path inside and says when a directory is empty", async () => {
    const ls = lsTool({ cwd: fixture.cwd });
    expect(text(await call(ls, { path: path.join(fixture.cwd, "src") }))).toBe("main.ts");
    expect(text(await call(ls, { path: "empty" }))).toBe("(empty is an empty directory.)");
  });

  it("caps the listing at maxEntries with a note", async () => {
    const result = await call(lsTool({ cwd: fixture.cwd, maxEntries: 5 }), { path: "many" });
    const lines = text(result).split("\n");
    expect(lines.slice(0, 5)).toEqual(["f00", "f01", "f02", "f03", "f04"]);
    expect(lines[5]).toBe(
      "[Listing cut at 5 of 12 entries. Use Glob with a pattern to narrow it.]",
    );
  });

  it("errors: a file, a missing directory", async () => {
    const ls = lsTool({ cwd: fixture.cwd });
    const file = await call(ls, { path: "a.txt" });
    expect(file.isError).toBe(true);
    expect(text(file)).toContain('LS: "a.txt" is a file, not a directory. Use Read');
    const missing = await call(ls, { path: "nope" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('"nope" does not exist');
  });
});
