import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bashTool } from "./index.js";
import { call, createFixture, type Fixture, text } from "./test-fixture.js";

let fixture: Fixture;
beforeAll(async () => {
  fixture = await createFixture();
});
afterAll(() => fixture.cleanUp());

/** Whether a process is gone: no such pid, or a zombie waiting to be reaped. */
function isDead(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * Whether a process has become `sleep` in a session of its own: `setsid` has run and exec'd.
 * `$!` is written before that happens, so a test that aborts at once would race it.
 */
function isSessionLeaderSleep(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const [, , , session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return name === "sleep" && Number(session) === pid;
  } catch {
    return false;
  }
}

async function readPid(name: string): Promise<number> {
  let pid = Number.NaN;
  await waitFor(async () => {
    pid = Number.parseInt(await readFile(path.join(fixture.cwd, name), "utf8").catch(() => ""), 10);
    return Number.isInteger(pid);
  });
  return pid;
}

describe("Bash", () => {
  it("runs in cwd and returns combined output with the exit code", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      command: "pwd; echo out; echo err >&2; cat a.txt | wc -l",
    });
    expect(result.isError).toBe(false);
    const output = text(result);
    expect(output).toContain(fixture.cwd);
    expect(output).toContain("out\n");
    expect(output).toContain("err\n");
    // stdout and stderr are two pipes: their lines interleave in arrival order.
    expect(output).toMatch(/(^|\n)\s*3\n/);
    expect(output.endsWith("\n\nExit code: 0")).toBe(true);
  });

  it("a non-zero exit is an is_error result carrying the output and the code", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      command: "echo failing >&2; exit 3",
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("failing\n\nExit code: 3");
  });

  it("says when there is no output; stdin is closed", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), { command: "cat" });
    expect(result.isError).toBe(false);
    expect(text(result)).toBe("(no output)\n\nExit code: 0");
  });

  it("caps output, keeping the start and the end, and says so", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd, maxOutputChars: 100 }), {
      command: "for i in $(seq 1 1000); do echo line$i; done",
    });
    const output = text(result);
    expect(output.startsWith("line1\nline2\n")).toBe(true);
    expect(output).toContain("line1000\n\nExit code: 0");
    expect(output).toMatch(/\[\.\.\. output cut: \d+ characters omitted from the middle/);
    expect(output.length).toBeLessThan(400);
  });

  it("T22: on timeout, kills the whole process group, grandchildren included", async () => {
    const started = Date.now();
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      // 1.5 s: time enough for the shell to write the pid file even on a loaded machine.
      command: "echo started; sleep 30 & echo $! > timeout-child.pid; sleep 30",
      timeout: 1500,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("started");
    expect(text(result)).toContain("Command timed out after 1500 ms");
    const child = await readPid("timeout-child.pid");
    await waitFor(() => isDead(child), 2000);
  });

  it("T22: on abort, kills the whole process group, grandchildren included", async () => {
    const controller = new AbortController();
    const running = call(
      bashTool({ cwd: fixture.cwd }),
      { command: "sleep 30 & echo $! > abort-child.pid; sleep 30" },
      controller.signal,
    );
    const child = await readPid("abort-child.pid");
    expect(isDead(child)).toBe(false);
    controller.abort();
    const result = await running;
    expect(result.isError).toBe(true);
    expect(text(result)).toContain("Command cancelled");
    await waitFor(() => isDead(child), 2000);
  });

  it("sends SIGKILL to processes that ignore SIGTERM, after a grace period", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      // 1.5 s: the shell must have set its trap before the timeout, or SIGTERM alone kills it.
      command: "trap '' TERM; sleep 30 & echo $! > stubborn.pid; wait",
      timeout: 1500,
    });
    expect(result.isError).toBe(true);
    const child = await readPid("stubborn.pid");
    await waitFor(() => isDead(child), 2000);
  });

  it("H12: on timeout, names a process that left the group with setsid as possibly still running", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      // The shell waits until the child is sleep in a session of its own (`$!` is written
      // before setsid runs), so the timeout cannot find it still in the group.
      command: `setsid sleep 30 & p=$!; echo $p > setsid-child.pid; until awk -v p=$p '$2 == "(sleep)" && $6 == p { ok = 1 } END { exit !ok }' /proc/$p/stat 2>/dev/null; do sleep 0.01; done; sleep 30`,
      timeout: 2000,
    });
    const survivor = await readPid("setsid-child.pid");
    try {
      const output = text(result);
      expect(result.isError).toBe(true);
      expect(output).toContain("Command timed out after 2000 ms");
      expect(output).toContain(
        `1 process left the process group and may still be running: pid ${survivor} (sleep).`,
      );
      expect(output).not.toContain("every process it started were killed");
      expect(isDead(survivor)).toBe(false);
    } finally {
      process.kill(survivor, "SIGKILL");
    }
  });

  it("H12: on abort, finds an escaped process through the process tree even when it closed the pipes", async () => {
    const controller = new AbortController();
    const running = call(
      bashTool({ cwd: fixture.cwd }),
      { command: "setsid sleep 30 >/dev/null 2>&1 & echo $! > quiet-child.pid; sleep 30" },
      controller.signal,
    );
    const survivor = await readPid("quiet-child.pid");
    try {
      await waitFor(() => isSessionLeaderSleep(survivor));
      controller.abort();
      const output = text(await running);
      expect(output).toContain("Command cancelled");
      expect(output).toContain(
        `1 process left the process group and may still be running: pid ${survivor} (sleep).`,
      );
      expect(isDead(survivor)).toBe(false);
    } finally {
      process.kill(survivor, "SIGKILL");
    }
  });

  it("H12: when every process stayed in the group, says that none was found running", async () => {
    const result = await call(bashTool({ cwd: fixture.cwd }), {
      command: "sleep 30 & sleep 30",
      timeout: 300,
    });
    expect(text(result)).toContain(
      "its process group (the shell and every process that stayed in it) was killed. No process that it started was found still running.",
    );
  });

  it("does not start when the signal is already aborted", async () => {
    const controller = new AbortController();
    controller.abort();
    const result = await call(
      bashTool({ cwd: fixture.cwd }),
      { command: "touch should-not-exist" },
      controller.signal,
    );
    expect(result.isError).toBe(true);
    await expect(readFile(path.join(fixture.cwd, "should-not-exist"))).rejects.toThrow(/ENOENT/);
  });

  it("refuses a timeout over 600000 ms and uses defaultTimeoutMs otherwise", async () => {
    const tooLong = await call(bashTool({ cwd: fixture.cwd }), {
      command: "true",
      timeout: 600_001,
    });
    expect(tooLong.isError).toBe(true);
    expect(text(tooLong)).toContain("timeout");
    const quick = await call(bashTool({ cwd: fixture.cwd, defaultTimeoutMs: 200 }), {
      command: "sleep 5",
    });
    expect(text(quick)).toContain("Command timed out after 200 ms");
  });

  it("is documented as not a sandbox", () => {
    const description = bashTool({ cwd: fixture.cwd }).description;
    expect(description).toContain("bash -c");
    const source = readFileSync(path.join(import.meta.dirname, "bash-tool.ts"), "utf8");
    expect(source).toContain("**Bash is not a sandbox.**");
  });
});
