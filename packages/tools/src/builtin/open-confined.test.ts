import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AnyToolDefinition, ToolResult } from "../index.js";
import { builtinTools } from "./index.js";
import { call, createFixture, type Fixture, SECRET, text } from "./test-fixture.js";

let fixture: Fixture;
let tools: Record<string, AnyToolDefinition>;
beforeAll(async () => {
  fixture = await createFixture();
  tools = Object.fromEntries(
    builtinTools({ tools: ["Read", "Grep", "Write", "Edit"], cwd: fixture.cwd }).map((tool) => [
      tool.name,
      tool,
    ]),
  );
});
afterAll(() => fixture.cleanUp());

/** Starts `node -e script` and resolves once it printed "ready". */
async function startChild(script: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    child.once("error", reject);
    child.stdout?.once("data", () => resolve());
  });
  return child;
}

/**
 * A second process that flips `cwd/flip` between a real directory (holding `secret.txt`
 * with "INSIDE") and a symlink to the outside directory (whose `secret.txt` holds SECRET),
 * holding each state for a few microseconds so that checks and uses fall on both sides.
 */
function flipperScript(cwd: string, outside: string): string {
  return `
const fs = require("fs");
const D = ${JSON.stringify(path.join(cwd, ".flipdir"))};
const FLIP = ${JSON.stringify(path.join(cwd, "flip"))};
const OUT = ${JSON.stringify(outside)};
const hold = () => { const end = process.hrtime.bigint() + 40000n; while (process.hrtime.bigint() < end); };
const clear = () => { try { fs.rmSync(FLIP, { recursive: true, force: true }); } catch {} };
const ensure = () => {
  try { fs.mkdirSync(D); } catch {}
  try { fs.writeFileSync(D + "/secret.txt", "INSIDE\\n", { flag: "wx" }); } catch {}
};
ensure();
process.stdout.write("ready\\n");
for (;;) {
  try { fs.renameSync(D, FLIP); } catch { clear(); ensure(); continue; }
  hold();
  try { fs.renameSync(FLIP, D); } catch {}
  try { fs.symlinkSync(OUT, FLIP); } catch { clear(); continue; }
  hold();
  try { fs.unlinkSync(FLIP); } catch {}
}`;
}

/** Settles with the call's result, or "hung" when it takes longer than `ms`. */
function settleWithin(promise: Promise<ToolResult>, ms: number): Promise<ToolResult | "hung"> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<"hung">((resolve) => {
    timer = setTimeout(() => resolve("hung"), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Opens FIFOs for writing so that an open() blocked on them returns (cleanup only). */
function releaseFifoReaders(paths: readonly string[]): void {
  for (const fifo of paths) {
    try {
      closeSync(openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK));
    } catch {
      // No reader waiting, or not a FIFO any more.
    }
  }
}

describe("H9: a workspace changing under the file tools", () => {
  it("H9: a symlink swapped in during Reads and Greps never yields an outside file", async () => {
    const flipper = await startChild(flipperScript(fixture.cwd, fixture.outside));
    try {
      let leaked = 0;
      for (let index = 0; index < 2000; index++) {
        const result = await call(tools.Read!, { file_path: "flip/secret.txt" });
        if (text(result).includes(SECRET)) leaked += 1;
        if (index % 10 === 0) {
          const grep = await call(tools.Grep!, {
            pattern: "SECRET",
            path: "flip",
            output_mode: "content",
          });
          if (text(grep).includes(SECRET)) leaked += 1;
        }
      }
      expect(leaked).toBe(0);
    } finally {
      flipper.kill("SIGKILL");
    }
  });

  it("H9: a symlink swapped in during LS and Glob never lists an outside directory", async () => {
    await writeFile(path.join(fixture.outside, "outside-only-name.txt"), "x");
    const listing = Object.fromEntries(
      builtinTools({ tools: ["LS", "Glob"], cwd: fixture.cwd }).map((tool) => [tool.name, tool]),
    );
    const flipper = await startChild(flipperScript(fixture.cwd, fixture.outside));
    try {
      let leaked = 0;
      for (let index = 0; index < 600; index++) {
        const ls = await call(listing.LS!, { path: "flip" });
        if (text(ls).includes("outside-only-name")) leaked += 1;
        const glob = await call(listing.Glob!, { pattern: "**/*.txt", path: "flip" });
        if (text(glob).includes("outside-only-name")) leaked += 1;
      }
      expect(leaked).toBe(0);
    } finally {
      flipper.kill("SIGKILL");
      await rm(path.join(fixture.outside, "outside-only-name.txt"), { force: true });
    }
  });

  it("H9: a symlink swapped in during Writes and Edits never creates or changes a file outside", async () => {
    const flipper = await startChild(flipperScript(fixture.cwd, fixture.outside));
    try {
      for (let index = 0; index < 400; index++) {
        await call(tools.Write!, { file_path: `flip/new-${index}.txt`, content: "PWNED\n" });
        if (index % 2 === 0) {
          await call(tools.Edit!, {
            file_path: "flip/secret.txt",
            old_string: SECRET,
            new_string: "PWNED",
          });
        }
      }
    } finally {
      flipper.kill("SIGKILL");
    }
    expect(await readdir(fixture.outside)).toEqual(["secret.txt"]);
    expect(await readFile(path.join(fixture.outside, "secret.txt"), "utf8")).toBe(`${SECRET}\n`);
  });
});

describe("H11: FIFOs, sockets and devices", () => {
  it("H11: Read, Edit, Write and Grep on a FIFO finish promptly with a clear error", async () => {
    const fifo = path.join(fixture.cwd, "pipe");
    execFileSync("mkfifo", [fifo]);
    try {
      const calls: [string, unknown][] = [
        ["Read", { file_path: "pipe" }],
        ["Edit", { file_path: "pipe", old_string: "a", new_string: "b" }],
        ["Write", { file_path: "pipe", content: "x" }],
      ];
      for (const [name, input] of calls) {
        const result = await settleWithin(call(tools[name]!, input), 2000);
        expect(result).not.toBe("hung");
        expect((result as ToolResult).isError).toBe(true);
        expect(text(result as ToolResult)).toContain(
          '"pipe" is a FIFO (named pipe), not a regular file',
        );
      }
      const grep = await settleWithin(call(tools.Grep!, { pattern: "x", path: "pipe" }), 2000);
      expect(grep).not.toBe("hung");
      expect(text(grep as ToolResult)).toContain(
        "1 file is a FIFO, socket or device and was not searched.",
      );
    } finally {
      releaseFifoReaders([fifo]);
    }
  });

  it("H11: Grep over a directory holding a FIFO searches the other files and never blocks", async () => {
    const directory = path.join(fixture.cwd, "with-fifo");
    await mkdir(directory);
    await writeFile(path.join(directory, "notes.txt"), "needle\n");
    const fifo = path.join(directory, "zz-pipe");
    execFileSync("mkfifo", [fifo]);
    try {
      const result = await settleWithin(
        call(tools.Grep!, { pattern: "needle", path: "with-fifo" }),
        2000,
      );
      expect(result).not.toBe("hung");
      // The crawl may leave the FIFO out or list it; either way it is never opened.
      expect(text(result as ToolResult).split("\n")[0]).toBe("with-fifo/notes.txt");
    } finally {
      releaseFifoReaders([fifo]);
    }
  });

  it("H11: a socket is refused, saying what it is", async () => {
    const socketPath = path.join(fixture.cwd, "server.sock");
    const server: Server = createServer();
    await new Promise<void>((resolve) => server.listen(socketPath, resolve));
    try {
      const result = await call(tools.Read!, { file_path: "server.sock" });
      expect(result.isError).toBe(true);
      expect(text(result)).toContain('"server.sock" is a socket, not a regular file');
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it("H11: a FIFO swapped in for a regular file never blocks Read, Grep or Edit", async () => {
    const directory = path.join(fixture.cwd, "swap");
    await mkdir(directory);
    const fifo = path.join(directory, ".fifo");
    const regular = path.join(directory, ".regular");
    const swapped = path.join(directory, "swapped");
    execFileSync("mkfifo", [fifo]);
    await writeFile(regular, "regular\n");
    const swapper = await startChild(`
const fs = require("fs");
const P = ${JSON.stringify(fifo)}, R = ${JSON.stringify(regular)}, S = ${JSON.stringify(swapped)};
process.stdout.write("ready\\n");
for (;;) {
  try { fs.renameSync(P, S); } catch {}
  try { fs.renameSync(S, P); } catch {}
  try { fs.renameSync(R, S); } catch {}
  try { fs.renameSync(S, R); } catch {}
}`);
    let hung: string | undefined;
    try {
      // Grep both the file itself and the directory: the crawl lists "swapped" while it is a
      // regular file, and it may be a FIFO by the time Grep opens it.
      const calls: [string, unknown][] = [
        ["Read", { file_path: "swap/swapped" }],
        ["Grep", { pattern: "regular", path: "swap/swapped" }],
        ["Edit", { file_path: "swap/swapped", old_string: "absent", new_string: "x" }],
        ["Grep", { pattern: "regular", path: "swap" }],
      ];
      for (let index = 0; index < 1600 && hung === undefined; index++) {
        const [name, input] = calls[index % calls.length]!;
        const result = await settleWithin(call(tools[name]!, input), 2000);
        if (result === "hung") hung = `${name} call #${index + 1}`;
      }
    } finally {
      swapper.kill("SIGKILL");
      releaseFifoReaders([fifo, swapped]);
    }
    expect(hung).toBeUndefined();
  });
});
