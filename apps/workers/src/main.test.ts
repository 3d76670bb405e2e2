import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { redisSessionStore } from "@lattice/store-redis";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from "vitest";
import { parseWorkersArgs } from "./args.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
}, 60_000);
afterAll(async () => {
  await redis?.stop();
});

/** One finished process of the app. */
interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the app in a new process, offline, to its end. */
function app(...args: string[]): Promise<Exit> {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.DEEPSEEK_API_KEY;
  delete env.ANTHROPIC_API_KEY;
  const child = spawn(
    process.execPath,
    ["--conditions=@lattice/source", "--import", "tsx", "src/main.ts", ...args],
    { cwd: appDir, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  onTestFinished(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    stdout += chunk;
  });
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** The sessions of the runs the app reported as finished, from its `✓` lines. */
function finishedSessions(stdout: string): string[] {
  return [...stdout.matchAll(/^✓ (ticket-\d+-[0-9a-f]{4}) /gm)].map((match) => match[1]!);
}

/** Checks each run's log in the Redis store: three tool results, one each, and a success. */
async function expectFinishedLogs(sessions: readonly string[]): Promise<void> {
  const store = redisSessionStore({ url: redis.url });
  try {
    for (const sessionId of sessions) {
      const { entries } = await store.load(sessionId);
      const results = entries.filter((entry) => entry.type === "tool_result");
      expect(results.map((entry) => entry.toolName).sort()).toEqual([
        "check_service",
        "lookup_customer",
        "read_ticket",
      ]);
      expect(new Set(results.map((entry) => entry.toolUseId)).size).toBe(3);
      expect(entries.at(-1)).toMatchObject({ type: "run_finished", subtype: "success" });
    }
  } finally {
    await store.close();
  }
}

describe("one terminal: workers and a producer on a local Redis", () => {
  it("D13: start runs three worker processes that take the runs' steps, and every run finishes", async () => {
    const run = await app(
      "start",
      ...["--redis", redis.url, "--queue", "all-finish", "--runs", "6", "--tool-ms", "100"],
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Queue "all-finish" on redis:\/\/127\.0\.0\.1:\d+; run logs in/m);
    for (const worker of ["worker-1", "worker-2", "worker-3"]) {
      expect(run.stdout).toMatch(new RegExp(`^\\[${worker}\\] pid \\d+: takes steps`, "m"));
    }
    expect(run.stdout).toMatch(/^\[worker-\d\] ticket-1-[0-9a-f]{4} step 1: read_ticket started$/m);
    expect(run.stdout).toContain("6 of 6 runs succeeded");
    expect(run.stdout).toContain("Tool calls: 18 in all; 18 ran once.");
    const sessions = finishedSessions(run.stdout);
    expect(sessions).toHaveLength(6);
    await expectFinishedLogs(sessions);
  });

  it("D5, D13: start --kill-one SIGKILLs a worker in the middle of a tool call, and every run still finishes", async () => {
    const run = await app(
      "start",
      "--kill-one",
      ...["--redis", redis.url, "--queue", "kill-one", "--runs", "6"],
      ...["--tool-ms", "300", "--lock-ms", "1000"],
    );
    expect(run.code, run.stderr).toBe(0);
    const victim = /^✂ --kill-one: SIGKILL to (worker-\d) \(pid \d+\) in the middle of /m.exec(
      run.stdout,
    )?.[1];
    expect(victim, run.stdout).toBeDefined();
    expect(run.stdout).toContain("6 of 6 runs succeeded");
    // Calls cut by the kill ran again on another worker; those already logged did not.
    expect(run.stdout).toMatch(
      /ran again because the worker running them died before their result was logged \(at-least-once\):/,
    );
    expect(run.stdout).toMatch(new RegExp(`: on ${victim} \\(cut\\), then worker-\\d$`, "m"));
    expect(run.stdout).toMatch(
      new RegExp(
        `^When ${victim} died, \\d+ calls had their result in the run log: none of them ran again\\.$`,
        "m",
      ),
    );
    expect(run.stdout).toMatch(new RegExp(`${victim}→worker-\\d`));
    const sessions = finishedSessions(run.stdout);
    expect(sessions).toHaveLength(6);
    await expectFinishedLogs(sessions);
  });
});

describe("the command line", () => {
  it("reads the commands and refuses what does not fit", () => {
    expect(parseWorkersArgs([])).toMatchObject({
      kind: "start",
      runs: 6,
      workers: 3,
      killOne: false,
      redisUrl: "redis://127.0.0.1:6390",
      store: { kind: "redis", url: undefined },
    });
    expect(
      parseWorkersArgs(["worker", "--name", "w1", "--store", "postgres://db/x"]),
    ).toMatchObject({
      kind: "worker",
      name: "w1",
      store: { kind: "postgres", connectionString: "postgres://db/x" },
    });
    expect(parseWorkersArgs(["produce", "--store", "sqlite:runs.sqlite"])).toMatchObject({
      kind: "produce",
      store: { kind: "sqlite" },
    });
    expect(parseWorkersArgs(["produce", "--kill-one"])).toMatchObject({ kind: "error" });
    expect(parseWorkersArgs(["start", "--runs", "0"])).toMatchObject({ kind: "error" });
    expect(parseWorkersArgs(["start", "--kill-one", "--workers", "1"])).toMatchObject({
      kind: "error",
    });
    expect(parseWorkersArgs(["start", "--store", "mongodb://x"])).toMatchObject({ kind: "error" });
  });
});
