import { readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyToolDefinition } from "../index.js";
import { builtinTools } from "./index.js";
import { call, createFixture, type Fixture, SECRET, text } from "./test-fixture.js";

let fixture: Fixture;
let tools: Record<string, AnyToolDefinition>;
beforeAll(async () => {
  fixture = await createFixture();
  tools = Object.fromEntries(
    builtinTools({
      tools: ["Read", "LS", "Glob", "Grep", "Write", "Edit"],
      cwd: fixture.cwd,
      additionalDirectories: [fixture.extra],
    }).map((tool) => [tool.name, tool]),
  );
});
afterAll(() => fixture.cleanUp());

/** Asserts a refusal: is_error, names the path as given, says "outside", leaks nothing. */
function expectRefused(result: Awaited<ReturnType<typeof call>>, given: string): void {
  expect(result.isError).toBe(true);
  const message = text(result);
  expect(message).toContain(JSON.stringify(given));
  expect(message).toContain("outside the working directory");
  expect(message).not.toContain(SECRET);
  expect(message).not.toContain("secret.txt\n");
}

async function secretUnchanged(): Promise<void> {
  expect(await readFile(path.join(fixture.outside, "secret.txt"), "utf8")).toBe(`${SECRET}\n`);
}

describe("escape attempts are refused without leaking the outside file", () => {
  const escapes = (): Record<string, string> => ({
    "a .. path": "../outside/secret.txt",
    "a .. path through a subdirectory": "src/../../outside/secret.txt",
    "an absolute path outside": path.join(fixture.outside, "secret.txt"),
    "a symlink inside leading to a file outside": "link-out",
    "a path through a directory symlink leading outside": "link-dir-out/secret.txt",
    "the root directory": "/",
  });

  it("Read refuses .., absolute outside, file and directory symlinks out", async () => {
    for (const given of Object.values(escapes())) {
      expectRefused(await call(tools.Read!, { file_path: given }), given);
    }
  });

  it("Edit refuses every escape and leaves the outside file unchanged", async () => {
    for (const given of Object.values(escapes())) {
      const result = await call(tools.Edit!, {
        file_path: given,
        old_string: SECRET,
        new_string: "PWNED",
      });
      expectRefused(result, given);
    }
    await secretUnchanged();
  });

  it("Write refuses every escape, including a dangling symlink out, and creates nothing outside", async () => {
    const targets = {
      ...escapes(),
      "a new file through ..": "../outside/new.txt",
      "a new file in a new directory through ..": "deep/../../outside/dir/new.txt",
      "a dangling symlink leading outside": "dangling-out",
      "a new file under a directory symlink leading outside": "link-dir-out/new.txt",
    };
    for (const given of Object.values(targets)) {
      expectRefused(await call(tools.Write!, { file_path: given, content: "PWNED" }), given);
    }
    await secretUnchanged();
    await expect(readFile(path.join(fixture.outside, "new.txt"))).rejects.toThrow(/ENOENT/);
    await expect(readFile(path.join(fixture.outside, "dir", "new.txt"))).rejects.toThrow(/ENOENT/);
  });

  it("LS refuses .., absolute outside and a directory symlink out", async () => {
    for (const given of ["..", "../outside", fixture.outside, "link-dir-out", "/"]) {
      expectRefused(await call(tools.LS!, { path: given }), given);
    }
  });

  it("Glob refuses a path or pattern that leads out", async () => {
    for (const given of ["..", fixture.outside, "link-dir-out"]) {
      expectRefused(await call(tools.Glob!, { pattern: "**/*", path: given }), given);
    }
    const climbing = await call(tools.Glob!, { pattern: "../outside/*" });
    expect(climbing.isError).toBe(true);
    expect(text(climbing)).toContain('climbs out with ".."');
    const absolute = await call(tools.Glob!, { pattern: `${fixture.outside}/*` });
    expect(absolute.isError).toBe(true);
    expect(text(absolute)).not.toContain(SECRET);
  });

  it("Glob never lists files behind a symlink that leads out", async () => {
    const result = await call(tools.Glob!, { pattern: "**/*" });
    expect(result.isError).toBe(false);
    const listed = text(result).split("\n");
    expect(listed).not.toContain("link-out");
    expect(listed.some((line) => line.startsWith("link-dir-out"))).toBe(false);
    expect(listed.some((line) => line.includes("secret"))).toBe(false);
    // Symlinks that stay inside are followed.
    expect(listed).toEqual(expect.arrayContaining(["a.txt", "link-in", "link-dir-in/main.ts"]));
  });

  it("Grep refuses a path that leads out and never searches through symlinks out", async () => {
    for (const given of ["../outside", "link-out", "link-dir-out", fixture.outside]) {
      expectRefused(await call(tools.Grep!, { pattern: "SECRET", path: given }), given);
    }
    for (const mode of ["files_with_matches", "content", "count"]) {
      const result = await call(tools.Grep!, { pattern: "SECRET", output_mode: mode });
      expect(result.isError).toBe(false);
      expect(text(result)).toBe("No matches found.");
    }
    const climbing = await call(tools.Grep!, { pattern: "SECRET", glob: "../outside/*" });
    expect(climbing.isError).toBe(true);
  });

  it("refuses an outside path that does not exist as outside, not as missing", async () => {
    const given = "../outside/does-not-exist.txt";
    const result = await call(tools.Read!, { file_path: given });
    expectRefused(result, given);
    expect(text(result)).not.toContain("does not exist.");
  });

  it("refuses a symlink created inside after the tools were made", async () => {
    await symlink(path.join(fixture.outside, "secret.txt"), path.join(fixture.cwd, "late-link"));
    expectRefused(await call(tools.Read!, { file_path: "late-link" }), "late-link");
  });
});

describe("paths that stay inside are allowed", () => {
  it("allows absolute paths inside cwd", async () => {
    const result = await call(tools.Read!, { file_path: path.join(fixture.cwd, "a.txt") });
    expect(result.isError).toBe(false);
    expect(text(result)).toContain("alpha");
  });

  it("allows a symlink from inside to inside, for every file tool", async () => {
    expect(text(await call(tools.Read!, { file_path: "link-in" }))).toContain("beta");
    expect(text(await call(tools.LS!, { path: "link-dir-in" }))).toBe("main.ts");
    // A symlinked search directory is searched where it really is.
    expect(text(await call(tools.Grep!, { pattern: "answer", path: "link-dir-in" }))).toBe(
      "src/main.ts",
    );
    expect(text(await call(tools.Glob!, { pattern: "*.ts", path: "link-dir-in" }))).toBe(
      "src/main.ts",
    );
    await writeFile(path.join(fixture.cwd, "target.txt"), "one\n");
    await symlink("target.txt", path.join(fixture.cwd, "link-to-target"));
    const edited = await call(tools.Edit!, {
      file_path: "link-to-target",
      old_string: "one",
      new_string: "two",
    });
    expect(edited.isError).toBe(false);
    expect(await readFile(path.join(fixture.cwd, "target.txt"), "utf8")).toBe("two\n");
    const written = await call(tools.Write!, { file_path: "link-to-target", content: "three\n" });
    expect(written.isError).toBe(false);
    expect(await readFile(path.join(fixture.cwd, "target.txt"), "utf8")).toBe("three\n");
  });

  it("allows .. that stays inside", async () => {
    const result = await call(tools.Read!, { file_path: "src/../a.txt" });
    expect(result.isError).toBe(false);
    expect(text(result)).toContain("gamma");
  });

  it("allows additional directories", async () => {
    const notes = path.join(fixture.extra, "notes.md");
    expect(text(await call(tools.Read!, { file_path: notes }))).toContain("extra notes");
    expect(text(await call(tools.Read!, { file_path: "../extra/notes.md" }))).toContain(
      "extra notes",
    );
    expect(text(await call(tools.LS!, { path: fixture.extra }))).toBe("notes.md");
    expect(text(await call(tools.Grep!, { pattern: "extra", path: fixture.extra }))).toBe(notes);
    expect(text(await call(tools.Glob!, { pattern: "*.md", path: fixture.extra }))).toBe(notes);
  });

  it("does not let additional directories widen Bash-free tools beyond them", async () => {
    const only = builtinTools({ tools: ["Read"], cwd: fixture.cwd })[0]!;
    const given = path.join(fixture.extra, "notes.md");
    expectRefused(await call(only, { file_path: given }), given);
  });
});
