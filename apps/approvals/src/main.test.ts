import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import type { RunLogEntry } from "agent-lattice";
import { describe, type ExpectStatic, it, onTestFinished } from "vitest";
import type { ActionRecord } from "./fleet.js";
import { toolResultEntries } from "./session-log.js";

const appDir = fileURLToPath(new URL("..", import.meta.url));
const WAIT_MS = 10_000;

/** One finished process of the app. */
interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly pid: number;
}

/** A temporary database, actions log and fleet for one test, and its processes. */
class Fixture {
  readonly dir = mkdtempSync(join(tmpdir(), "lattice-approvals-"));
  readonly db = join(this.dir, "data", "ops.sqlite");
  readonly actionsLog = join(this.dir, "actions.jsonl");
  readonly #running = new Set<ReturnType<typeof spawn>>();

  constructor() {
    onTestFinished(() => {
      for (const child of this.#running) child.kill("SIGKILL");
      rmSync(this.dir, { recursive: true, force: true });
    });
  }

  /** Starts the app in a new process on this database, offline, without delays. */
  start(args: readonly string[], workMs = 0) {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      APPROVALS_ACTIONS_LOG: this.actionsLog,
      APPROVALS_WORK_MS: String(workMs),
    };
    delete env.DEEPSEEK_API_KEY;
    delete env.ANTHROPIC_API_KEY;
    const child = spawn(
      process.execPath,
      ["--conditions=@lattice/source", "--import", "tsx", "src/main.ts", "--db", this.db, ...args],
      { cwd: appDir, env, stdio: ["ignore", "pipe", "pipe"] },
    );
    this.#running.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
    });
    const exited = new Promise<Exit>((resolve) => {
      child.on("close", (code) => {
        this.#running.delete(child);
        resolve({ code, stdout, stderr, pid: child.pid! });
      });
    });
    return { child, exited };
  }

  /** Runs the app in a new process to its end. */
  app(...args: string[]): Promise<Exit> {
    return this.start(args).exited;
  }

  /** The side effects the tools carried out, from the actions log. */
  actions(): ActionRecord[] {
    if (!existsSync(this.actionsLog)) return [];
    return readFileSync(this.actionsLog, "utf8")
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as ActionRecord);
  }

  /** The session's run log, read from the database as another process would. */
  async runLog(session: string): Promise<RunLogEntry[]> {
    const store = sqliteSessionStore({ path: this.db });
    try {
      return (await store.load(session)).entries as unknown as RunLogEntry[];
    } finally {
      await store.close();
    }
  }

  /** Starts a run that stops for approval, checks that nothing of its step ran, returns the ids. */
  async runUntilPaused(expect: ExpectStatic, session: string, task: string): Promise<string[]> {
    const run = await this.app("run", "--session", session, task);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^Offline: the scripted model server/);
    expect(run.stdout).toContain(`⏸ Session ${session} waits for approval of`);
    expect(this.actions()).toEqual([]);
    const ids = approvalIds(run.stdout);
    expect(ids.length).toBeGreaterThan(0);
    return ids;
  }
}

/** The approval ids a listing of pending calls shows, in order. */
function approvalIds(stdout: string): string[] {
  return [...stdout.matchAll(/approval id: (appr_\S+)/g)].map((match) => match[1]!);
}

describe("the walkthrough, one process per command", () => {
  it("run pauses on the deploy; approve in a new process runs it once and the run succeeds", async ({
    expect,
  }) => {
    const ops = new Fixture();
    const run = await ops.app("run", "--session", "t1", "deploy web v1.5.0 to production");
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      '  → check_status {"service":"web","environment":"production"}\n' +
        '  → deploy {"service":"web","environment":"production","version":"v1.5.0"}\n',
    );
    expect(run.stdout).toContain(
      "⏸ Session t1 waits for approval of 1 call.\n" +
        "  Nothing of this step has run yet (check_status waits with it)",
    );
    const [id] = approvalIds(run.stdout);
    // The exact command to approve it, with this database.
    expect(run.stdout).toContain(`--db ${ops.db} approve t1 ${id}\n`);
    expect(run.stdout).toContain(`--db ${ops.db} deny t1 ${id} --reason "<why>"\n`);
    expect(ops.actions()).toEqual([]);

    const approve = await ops.app("approve", "t1", id!);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain(
      "  ← check_status: web/production: v1.4.2 (previous v1.4.1), healthy, 4/4 instances ready\n" +
        "  ← deploy: Deployed web v1.5.0 to production (was v1.4.2). Health check passed: 4/4 instances ready.\n" +
        "assistant> Deployed web v1.5.0 to production: the health check passed.\n" +
        "✓ success: 2 turns,",
    );
    // The deploy ran exactly once, in the approving process.
    expect(ops.actions().map((action) => [action.tool, action.event, action.pid])).toEqual([
      ["deploy", "started", approve.pid],
      ["deploy", "finished", approve.pid],
    ]);
    const decisions = (await ops.runLog("t1")).filter((entry) => entry.type === "decisions");
    expect(decisions).toEqual([
      expect.objectContaining({ decisions: { [id!]: { approved: true } } }),
    ]);

    const pending = await ops.app("pending", "t1");
    expect(pending.stdout).toContain(
      "Nothing waits in session t1: its last run finished (success)",
    );
  });

  it("deny with a reason: the deploy never runs, and the model's answer gives the reason", async ({
    expect,
  }) => {
    const ops = new Fixture();
    const [id] = await ops.runUntilPaused(expect, "t2", "deploy web v1.5.0 to production");
    const deny = await ops.app("deny", "t2", id!, "--reason", "change freeze until Friday");
    expect(deny.code, deny.stderr).toBe(0);
    expect(deny.stdout).toContain(`  ✗ deploy: Tool call "deploy" (toolu_offline_`);
    expect(deny.stdout).toContain(
      'assistant> I did not deploy web v1.5.0 to production: the deploy was denied (reason: "change freeze until Friday"). web/production stays on v1.4.2.\n✓ success:',
    );
    expect(ops.actions()).toEqual([]);
    // What the model got for the call: an is_error result that carries the reason.
    const results = toolResultEntries(await ops.runLog("t2"));
    const deployResult = results.find((entry) => entry.toolName === "deploy");
    expect(deployResult).toMatchObject({ status: "denied", block: { is_error: true } });
    expect(JSON.stringify(deployResult?.block.content)).toContain("change freeze until Friday");
    // check_status, which needed no approval, ran once the step was decided.
    expect(results.find((entry) => entry.toolName === "check_status")?.status).toBe("completed");
  });

  it("approving an unknown id fails clearly, with exit code 1, and nothing runs", async ({
    expect,
  }) => {
    const ops = new Fixture();
    const [id] = await ops.runUntilPaused(expect, "t3", "deploy web v1.5.0 to production");
    const approve = await ops.app("approve", "t3", "appr_doesNotExist");
    expect(approve.code).toBe(1);
    expect(approve.stderr).toBe(
      `approvals: appr_doesNotExist is not pending in session t3 (already decided, or never asked). Pending now: ${id} (deploy). Nothing ran.\n`,
    );
    expect(approve.stdout).toBe("");
    expect(ops.actions()).toEqual([]);
    expect((await ops.runLog("t3")).map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
      "interrupt",
    ]);
    const pending = await ops.app("pending", "t3");
    expect(approvalIds(pending.stdout)).toEqual([id]);
  });
});

describe("more than the walkthrough", () => {
  it("decisions taken one by one wait in the drafts file; the last one resumes the run", async ({
    expect,
  }) => {
    const ops = new Fixture();
    const [web, api] = await ops.runUntilPaused(
      expect,
      "t4",
      "deploy web v1.5.0 and api v2.1.0 to production",
    );
    const first = await ops.app("approve", "t4", web!);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain("The run resumes once the other call is decided too.");
    expect(first.stdout).toContain("decided: approved at");
    expect(ops.actions()).toEqual([]);
    expect((await ops.runLog("t4")).at(-1)?.type).toBe("interrupt");

    const second = await ops.app("deny", "t4", api!, "--reason", "api freeze");
    expect(second.code, second.stderr).toBe(0);
    expect(second.stdout).toContain(
      'assistant> Deployed web v1.5.0 to production: the health check passed. I did not deploy api v2.1.0 to production: the deploy was denied (reason: "api freeze").',
    );
    expect(
      ops.actions().map((action) => [action.event, (action.input as { service: string }).service]),
    ).toEqual([
      ["started", "web"],
      ["finished", "web"],
    ]);
  });

  it("a deploy that fails its health check brings a rollback, which waits for approval again", async ({
    expect,
  }) => {
    const ops = new Fixture();
    await ops.runUntilPaused(expect, "t5", "deploy web v1.6.0-broken to production");
    const approve = await ops.app("approve", "t5", "--all");
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toContain(
      '  → rollback {"service":"web","environment":"production","to_version":"v1.4.2"}\n\n⏸ Session t5 waits for approval of 1 call.',
    );
    const [rollbackId] = approvalIds(approve.stdout);
    const rollback = await ops.app("approve", "t5", rollbackId!);
    expect(rollback.code, rollback.stderr).toBe(0);
    expect(rollback.stdout).toContain("assistant> web/production is back on v1.4.2 and healthy.");
    expect(ops.actions().map((action) => `${action.tool} ${action.event}`)).toEqual([
      "deploy started",
      "deploy finished",
      "rollback started",
      "rollback finished",
    ]);
  });

  it("an approved deploy cut by a killed process runs again on resume (at-least-once)", async ({
    expect,
  }) => {
    const ops = new Fixture();
    await ops.runUntilPaused(expect, "t6", "deploy web v1.5.0 to production");
    const approving = ops.start(["approve", "t6", "--all"], 20_000);
    const deadline = Date.now() + WAIT_MS;
    while (!ops.actions().some((action) => action.event === "started")) {
      if (Date.now() > deadline) throw new Error("the deploy never started");
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    approving.child.kill("SIGKILL");
    await approving.exited;

    const pending = await ops.app("pending", "t6");
    expect(pending.stdout).toContain("its last run has not finished");
    const resume = await ops.app("resume", "t6");
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout).toContain(
      "  ↻ deploy runs (again, if it had started): its result was not logged",
    );
    expect(resume.stdout).toContain("assistant> Deployed web v1.5.0 to production");
    expect(ops.actions().map((action) => action.event)).toEqual(["started", "started", "finished"]);
  });
});
