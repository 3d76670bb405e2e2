import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnknownOptionError } from "../index.js";
import { readTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
  const lines = Array.from({ length: 50 }, (_, index) => `line ${index + 1}`).join("\n");
  await writeFile(path.join(fixture.cwd, "fifty.txt"), `${lines}\n`);
  await writeFile(path.join(fixture.cwd, "empty.txt"), "");
  await writeFile(path.join(fixture.cwd, "crlf.txt"), "one\r\ntwo\r\nthree");
  await writeFile(path.join(fixture.cwd, "binary.bin"), Buffer.from([0x89, 0x50, 0x00, 0x01]));
  await writeFile(path.join(fixture.cwd, "long.txt"), `${"x".repeat(5000)}\nshort\n`);
  await mkdir(path.join(fixture.cwd, "dir"));
});
afterAll(() => fixture.cleanUp());

describe("Read", () => {
  it("returns the file numbered like cat -n", async () => {
    const result = await call(readTool({ cwd: fixture.cwd }), { file_path: "a.txt" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("     1\talpha\n     2\tbeta\n     3\tgamma");
  });

  it("reads from a 1-based offset, limit lines, and says how to read on", async () => {
    const read = readTool({ cwd: fixture.cwd });
    const result = await call(read, { file_path: "fifty.txt", offset: 10, limit: 3 });
    expect(text(result)).toBe(
      "    10\tline 10\n    11\tline 11\n    12\tline 12\n[Showing lines 10-12; the file has more lines. Call Read with offset 13 to read on.]",
    );
    const last = await call(read, { file_path: "fifty.txt", offset: 49, limit: 5 });
    expect(text(last)).toBe("    49\tline 49\n    50\tline 50");
    const exact = await call(read, { file_path: "fifty.txt", offset: 48, limit: 3 });
    expect(text(exact)).not.toContain("more lines");
  });

  it("caps lines at maxLines by default and notes the cut", async () => {
    const result = await call(readTool({ cwd: fixture.cwd, maxLines: 20 }), {
      file_path: "fifty.txt",
    });
    const lines = text(result).split("\n");
    expect(lines).toHaveLength(21);
    expect(lines[19]).toBe("    20\tline 20");
    expect(lines[20]).toContain("Call Read with offset 21 to read on.");
  });

  it("caps bytes and says where to read on", async () => {
    const result = await call(readTool({ cwd: fixture.cwd, maxBytes: 100 }), {
      file_path: "fifty.txt",
    });
    const output = text(result);
    const shown = output.split("\n").filter((line) => /^\s+\d+\t/.test(line));
    expect(shown.join("\n").length).toBeLessThanOrEqual(100);
    expect(shown.length).toBeGreaterThan(0);
    expect(output).toContain(
      `[Output cut at 100 bytes after line ${shown.length}. Call Read with offset ${shown.length + 1} to read on.]`,
    );
  });

  it("cuts long lines and says so", async () => {
    const result = await call(readTool({ cwd: fixture.cwd, maxLineLength: 100 }), {
      file_path: "long.txt",
    });
    const output = text(result);
    expect(output).toContain(`     1\t${"x".repeat(100)}… [line cut at 100 characters]`);
    expect(output).toContain("     2\tshort");
    expect(output).toContain("[1 line was longer than 100 characters and cut.");
    expect(output).not.toContain("x".repeat(101));
  });

  it("handles CRLF and a last line without newline", async () => {
    const result = await call(readTool({ cwd: fixture.cwd }), { file_path: "crlf.txt" });
    expect(text(result)).toBe("     1\tone\n     2\ttwo\n     3\tthree");
  });

  it("says when a file is empty", async () => {
    const result = await call(readTool({ cwd: fixture.cwd }), { file_path: "empty.txt" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("(empty.txt is empty.)");
  });

  it("errors: missing file, directory, binary, offset past the end", async () => {
    const read = readTool({ cwd: fixture.cwd });
    const missing = await call(read, { file_path: "nope.txt" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('Read: "nope.txt" does not exist.');
    const directory = await call(read, { file_path: "dir" });
    expect(directory.isError).toBe(true);
    expect(text(directory)).toContain("is a directory, not a file. Use LS");
    const binary = await call(read, { file_path: "binary.bin" });
    expect(binary.isError).toBe(true);
    expect(text(binary)).toContain("binary file");
    const past = await call(read, { file_path: "a.txt", offset: 10 });
    expect(past.isError).toBe(true);
    expect(text(past)).toContain('"a.txt" has only 3 lines, so offset 10 is past its end');
  });

  it("T3: invalid input never reaches the handler", async () => {
    const read = readTool({ cwd: fixture.cwd });
    const result = await call(read, { file_path: "a.txt", limit: 0 });
    expect(result.isError).toBe(true);
    expect(text(result)).toContain('Invalid input for tool "Read"');
    expect(text(result)).toContain("limit");
    expect((await call(read, {})).isError).toBe(true);
  });

  it("T31: readTool() refuses unknown options", () => {
    expect(() => readTool({ cwd: fixture.cwd, maxLine: 3 } as never)).toThrow(UnknownOptionError);
    expect(() => readTool({ cwd: fixture.cwd, maxLine: 3 } as never)).toThrow(/^readTool\(\):/);
  });
});

describe("Read and cancellation", () => {
  it("T22: an aborted signal ends the call as an is_error result", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call(
      readTool({ cwd: fixture.cwd }),
      { file_path: "a.txt" },
      controller.signal,
    );
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("Read was cancelled before it finished.");
  });
});
