import { spawn } from "node:child_process";
import { chmod, link, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { type AnyToolDefinition, InvalidOptionError } from "../index.js";
import {
  bashTool,
  builtinTools,
  editTool,
  globTool,
  grepTool,
  lsTool,
  readTool,
  writeTool,
} from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

const OUTSIDE_CONTENT = "OUTSIDE-LINKED-CONTENT\n";

let fixture: Fixture;
let outsideFile: string;
let linked: string;
const make = (allowHardLinks?: boolean): Record<string, AnyToolDefinition> =>
  Object.fromEntries(
    builtinTools({
      tools: ["Read", "Grep", "Write", "Edit"],
      cwd: fixture.cwd,
      ...(allowHardLinks === undefined ? {} : { allowHardLinks }),
    }).map((tool) => [tool.name, tool]),
  );

beforeAll(async () => {
  fixture = await createFixture();
  outsideFile = path.join(fixture.outside, "linked.txt");
  linked = path.join(fixture.cwd, "hard.txt");
});
beforeEach(async () => {
  // A hard link inside the workspace to a file outside it.
  await rm(linked, { force: true });
  await writeFile(outsideFile, OUTSIDE_CONTENT);
  await link(outsideFile, linked);
});
afterAll(() => fixture.cleanUp());

async function outsideUnchanged(): Promise<void> {
  expect(await readFile(outsideFile, "utf8")).toBe(OUTSIDE_CONTENT);
}

async function noTemporaryFiles(directory: string): Promise<void> {
  expect((await readdir(directory)).filter((name) => name.startsWith(".lattice-"))).toEqual([]);
}

describe("H10: hard links", () => {
  it("H10: Write replaces a hard-linked file and never writes through to the file outside", async () => {
    const result = await call(make().Write!, { file_path: "hard.txt", content: "new\n" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("Overwrote hard.txt (4 bytes).");
    expect(await readFile(linked, "utf8")).toBe("new\n");
    expect((await stat(linked)).nlink).toBe(1);
    await outsideUnchanged();
    await noTemporaryFiles(fixture.cwd);
  });

  it("H10: Edit refuses a hard-linked file unless allowHardLinks; allowed, it replaces the link and the outside file keeps its content", async () => {
    const input = { file_path: "hard.txt", old_string: "LINKED", new_string: "EDITED" };
    const refused = await call(make().Edit!, input);
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('Edit refused "hard.txt": it has 2 hard links');
    expect(text(refused)).toContain("Ask the user to enable allowHardLinks");
    expect(await readFile(linked, "utf8")).toBe(OUTSIDE_CONTENT);

    const allowed = await call(make(true).Edit!, input);
    expect(allowed.isError).toBe(false);
    expect(await readFile(linked, "utf8")).toBe("OUTSIDE-EDITED-CONTENT\n");
    await outsideUnchanged();
    await noTemporaryFiles(fixture.cwd);
  });

  it("H10: Read refuses a file with more than one hard link unless allowHardLinks, saying why and what to do", async () => {
    const refused = await call(make().Read!, { file_path: "hard.txt" });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(
      'Read refused "hard.txt": it has 2 hard links, so it may be the same file as one outside the working directory, and Read does not read such files. Ask the user to enable allowHardLinks, or to copy the file (a copy has one link).',
    );
    expect(text(refused)).not.toContain("OUTSIDE-LINKED");
    const allowed = await call(make(true).Read!, { file_path: "hard.txt" });
    expect(text(allowed)).toBe("     1\tOUTSIDE-LINKED-CONTENT");
  });

  it("H10: Grep skips files with more than one hard link, with a note, unless allowHardLinks", async () => {
    const skipped = await call(make().Grep!, { pattern: "LINKED" });
    expect(skipped.isError).toBe(false);
    expect(text(skipped)).toBe(
      "No matches found.\n[1 file has more than one hard link and was not searched: such a file may be the same as one outside the working directory. Ask the user to enable allowHardLinks to search it.]",
    );
    const allowed = await call(make(true).Grep!, { pattern: "LINKED" });
    expect(text(allowed)).toBe("hard.txt");
  });
});

describe("H10: atomic replacement", () => {
  it("H10: Write and Edit keep the replaced file's mode and leave no temporary file behind", async () => {
    const file = path.join(fixture.cwd, "private.txt");
    await writeFile(file, "one\n");
    await chmod(file, 0o640);
    const tools = make();
    expect((await call(tools.Write!, { file_path: "private.txt", content: "two\n" })).isError).toBe(
      false,
    );
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    const edited = await call(tools.Edit!, {
      file_path: "private.txt",
      old_string: "two",
      new_string: "three",
    });
    expect(edited.isError).toBe(false);
    expect(await readFile(file, "utf8")).toBe("three\n");
    expect((await stat(file)).mode & 0o777).toBe(0o640);
    await noTemporaryFiles(fixture.cwd);
  });

  // Root may write any file, in place or not; the check only matters for other users.
  it.skipIf(process.getuid?.() === 0)(
    "H10: Write and Edit refuse a read-only file, as writing it in place would, and leave it unchanged",
    async () => {
      const file = path.join(fixture.cwd, "read-only.txt");
      await writeFile(file, "keep\n");
      await chmod(file, 0o444);
      const tools = make();
      const written = await call(tools.Write!, { file_path: "read-only.txt", content: "x" });
      expect(written.isError).toBe(true);
      expect(text(written)).toContain("permission denied");
      const edited = await call(tools.Edit!, {
        file_path: "read-only.txt",
        old_string: "keep",
        new_string: "x",
      });
      expect(edited.isError).toBe(true);
      expect(await readFile(file, "utf8")).toBe("keep\n");
    },
  );

  it("H10: a reader in another process sees the old or the new content of a Write, never a mix", async () => {
    const file = path.join(fixture.cwd, "big.txt");
    const size = 512 * 1024;
    await writeFile(file, "a".repeat(size));
    const reader = spawn(
      process.execPath,
      [
        "-e",
        `
const fs = require("fs");
let torn = 0, reads = 0, stop = false;
process.stdin.on("data", () => { stop = true; });
(function loop() {
  for (let i = 0; i < 50; i++) {
    let content;
    try { content = fs.readFileSync(${JSON.stringify(file)}, "latin1"); } catch { continue; }
    reads++;
    if (content.length !== ${size} || (content !== "a".repeat(${size}) && content !== "b".repeat(${size}))) torn++;
  }
  if (stop) { process.stdout.write(JSON.stringify({ torn, reads })); process.exit(0); }
  setImmediate(loop);
})();`,
      ],
      { stdio: ["pipe", "pipe", "inherit"] },
    );
    let output = "";
    reader.stdout.on("data", (chunk: Buffer) => {
      output += chunk.toString();
    });
    const done = new Promise((resolve) => reader.once("exit", resolve));
    const write = make().Write!;
    try {
      for (let index = 0; index < 150; index++) {
        const content = (index % 2 === 0 ? "b" : "a").repeat(size);
        expect((await call(write, { file_path: "big.txt", content })).isError).toBe(false);
      }
    } finally {
      reader.stdin.end("stop");
      await done;
    }
    const { torn, reads } = JSON.parse(output) as { torn: number; reads: number };
    expect(reads).toBeGreaterThan(0);
    expect(torn).toBe(0);
  });
});

describe("H10: the allowHardLinks option", () => {
  it("H10: every factory and builtinTools() accept allowHardLinks and check it is a boolean", () => {
    const cwd = fixture.cwd;
    const factories = [readTool, lsTool, globTool, grepTool, writeTool, editTool, bashTool];
    for (const factory of factories) {
      expect(() => factory({ cwd, allowHardLinks: true })).not.toThrow();
      expect(() => factory({ cwd, allowHardLinks: "yes" } as never)).toThrow(InvalidOptionError);
    }
    expect(() => builtinTools({ tools: ["Read"], cwd, allowHardLinks: false })).not.toThrow();
    expect(() => builtinTools({ tools: ["Read"], cwd, allowHardLinks: 1 } as never)).toThrow(
      'builtinTools(): option "allowHardLinks" must be true or false, received 1. Omit it for the default (false).',
    );
  });
});
