import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { editTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
let file: string;
const original = "one two\nthree two\nfour\n";
beforeAll(async () => {
  fixture = await createFixture();
  file = path.join(fixture.cwd, "edit.txt");
});
beforeEach(() => writeFile(file, original));
afterAll(() => fixture.cleanUp());

const contents = (): Promise<string> => readFile(file, "utf8");

describe("Edit", () => {
  it("replaces a unique exact string", async () => {
    const result = await call(editTool({ cwd: fixture.cwd }), {
      file_path: "edit.txt",
      old_string: "four",
      new_string: "4 $& $1",
    });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("Edited edit.txt: replaced 1 occurrence.");
    expect(await contents()).toBe("one two\nthree two\n4 $& $1\n");
  });

  it("refuses an old_string that is not unique, saying how many matches, unless replace_all", async () => {
    const edit = editTool({ cwd: fixture.cwd });
    const refused = await call(edit, { file_path: "edit.txt", old_string: "two", new_string: "2" });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain(
      "old_string occurs 2 times in edit.txt, so nothing was changed",
    );
    expect(text(refused)).toContain("replace_all: true");
    expect(await contents()).toBe(original);
    const all = await call(edit, {
      file_path: "edit.txt",
      old_string: "two",
      new_string: "2",
      replace_all: true,
    });
    expect(text(all)).toBe("Edited edit.txt: replaced 2 occurrences.");
    expect(await contents()).toBe("one 2\nthree 2\nfour\n");
  });

  it("refuses an old_string that is missing", async () => {
    const result = await call(editTool({ cwd: fixture.cwd }), {
      file_path: "edit.txt",
      old_string: "five",
      new_string: "5",
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("old_string was not found in edit.txt");
    expect(await contents()).toBe(original);
  });

  it("refuses old_string equal to new_string, and an empty old_string", async () => {
    const edit = editTool({ cwd: fixture.cwd });
    const same = await call(edit, {
      file_path: "edit.txt",
      old_string: "four",
      new_string: "four",
    });
    expect(same.isError).toBe(true);
    expect(text(same)).toContain("old_string and new_string are the same");
    const empty = await call(edit, { file_path: "edit.txt", old_string: "", new_string: "x" });
    expect(empty.isError).toBe(true);
    expect(text(empty)).toContain(
      "old_string must not be empty; to create or replace a whole file, use Write",
    );
    expect(await contents()).toBe(original);
  });

  it("errors on a missing file or a directory", async () => {
    const edit = editTool({ cwd: fixture.cwd });
    const missing = await call(edit, { file_path: "nope.txt", old_string: "a", new_string: "b" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('"nope.txt" does not exist');
    const directory = await call(edit, { file_path: "src", old_string: "a", new_string: "b" });
    expect(text(directory)).toContain("is a directory");
  });
});
