import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { sqliteSessionStore } from "./index.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-store-sqlite-processes-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const packageRoot = fileURLToPath(new URL("..", import.meta.url));
const isConflict = (error: unknown) => (error as { code?: unknown }).code === "session_conflict";
const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

/** A second process running src/fixtures/append-child.ts, with its stdout as lines. */
interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  readonly lines: string[];
  /** Resolves when a line matching `pattern` has come (or rejects when the child exits first). */
  waitFor(pattern: RegExp): Promise<void>;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startChild(args: string[]): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=@lattice/source", "--import", "tsx", "src/fixtures/append-child.ts", ...args],
    { cwd: packageRoot, stdio: ["pipe", "pipe", "pipe"] },
  );
  const lines: string[] = [];
  const waiters: { pattern: RegExp; resolve: () => void }[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    lines.push(line);
    for (const waiter of [...waiters]) {
      if (waiter.pattern.test(line)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    process: child,
    lines,
    exited,
    waitFor: (pattern) =>
      lines.some((line) => pattern.test(line))
        ? Promise.resolve()
        : new Promise<void>((resolve, reject) => {
            waiters.push({ pattern, resolve });
            void exited.then(({ code, signal }) =>
              reject(new Error(`child exited (${code ?? signal}) before ${pattern}: ${stderr}`)),
            );
          }),
  };
}

describe("sqliteSessionStore() across processes", () => {
  it("R8: two processes appending at the same expectedVersion: exactly one wins each time, the other gets SessionConflictError", async () => {
    const path = join(folder, "race.db");
    const rounds = 500;
    const store = sqliteSessionStore({ path });
    const child = startChild(["race", path, "race", String(rounds)]);
    await child.waitFor(/^ready$/);
    child.process.stdin.write("go\n");
    const parentWon = new Set<number>();
    let parentLost = 0;
    for (let round = 0; round < rounds; round++) {
      try {
        await store.append(`race-${round}`, 0, [{ v: 1, writer: "parent", round }]);
        parentWon.add(round);
      } catch (error) {
        if (!isConflict(error)) throw error;
        parentLost++;
      }
      await nextTurn();
    }
    await child.waitFor(/^done$/);
    expect((await child.exited).code).toBe(0);
    const childWon = new Set(
      child.lines.filter((line) => line.startsWith("won ")).map((line) => Number(line.slice(4))),
    );
    expect(child.lines.filter((line) => /^(won|lost) /.test(line))).toHaveLength(rounds);
    for (let round = 0; round < rounds; round++) {
      const { entries, version } = await store.load(`race-${round}`);
      expect(version).toBe(1);
      const winner = parentWon.has(round) ? "parent" : "child";
      expect(parentWon.has(round) !== childWon.has(round), `round ${round}: one winner`).toBe(true);
      expect(entries).toEqual([{ v: 1, writer: winner, round }]);
    }
    expect(parentWon.size + childWon.size).toBe(rounds);
    expect(parentLost).toBe(childWon.size);
    await store.close();
  });

  it("R8: two processes that reload and retry on conflict lose nothing and never interleave a batch", async () => {
    const path = join(folder, "retry.db");
    const count = 300;
    const store = sqliteSessionStore({ path });
    const child = startChild(["retry", path, "shared", String(count)]);
    await child.waitFor(/^ready$/);
    child.process.stdin.write("go\n");
    const parentVersions = new Map<number, number>();
    for (let n = 0; n < count; n++) {
      const batch = [0, 1].map((part) => ({ v: 1, writer: "parent", n, part }));
      for (;;) {
        const { version } = await store.load("shared");
        try {
          parentVersions.set(n, await store.append("shared", version, batch));
          break;
        } catch (error) {
          if (!isConflict(error)) throw error;
        }
        await nextTurn();
      }
      await nextTurn();
    }
    await child.waitFor(/^done$/);
    expect((await child.exited).code).toBe(0);
    const childVersions = new Map(
      child.lines
        .filter((line) => line.startsWith("appended "))
        .map((line) => line.split(" ").slice(1).map(Number) as [number, number]),
    );
    const { entries, version } = await store.load("shared");
    expect(version).toBe(4 * count);
    expect(entries).toHaveLength(4 * count);
    const next = { parent: 0, child: 0 };
    for (let start = 0; start < entries.length; start += 2) {
      const [first, second] = entries.slice(start, start + 2) as {
        writer: "parent" | "child";
        n: number;
        part: number;
      }[];
      expect(first).toMatchObject({ writer: first!.writer, n: next[first!.writer], part: 0 });
      expect(second).toMatchObject({ writer: first!.writer, n: first!.n, part: 1 });
      const reported = (first!.writer === "parent" ? parentVersions : childVersions).get(first!.n);
      expect(reported, `the version returned for ${first!.writer} ${first!.n}`).toBe(start + 2);
      next[first!.writer]++;
    }
    expect(next).toEqual({ parent: count, child: count });
    await store.close();
  });

  it.each(["normal", "full"] as const)(
    'R11: an append that has returned survives a SIGKILL of its process (synchronous: "%s")',
    async (synchronous) => {
      const path = join(folder, `crash-${synchronous}.db`);
      const child = startChild(["crash", path, "crash", synchronous]);
      await child.waitFor(/^ready$/);
      child.process.stdin.write("go\n");
      await child.waitFor(/^appended 199 /);
      child.process.kill("SIGKILL");
      expect((await child.exited).signal).toBe("SIGKILL");
      const reported = child.lines
        .filter((line) => line.startsWith("appended "))
        .map((line) => line.split(" ").slice(1).map(Number) as [number, number]);
      expect(reported.length).toBeGreaterThanOrEqual(200);
      const store = sqliteSessionStore({ path });
      const { entries, version } = await store.load("crash");
      expect(version).toBeGreaterThanOrEqual(reported.at(-1)![1]);
      for (const [n, returned] of reported) {
        expect(entries[returned - 1], `append ${n}, returned version ${returned}`).toMatchObject({
          n,
        });
      }
      // The store goes on from where the killed process stopped.
      expect(await store.append("crash", version, [{ v: 1, after: "crash" }])).toBe(version + 1);
      await store.close();
    },
  );
});
