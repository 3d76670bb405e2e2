/**
 * Durable approvals across processes (R15, R16): a run interrupted in one process is resumed in
 * another that opens the same SQLite file; two processes resuming the same interrupt run its
 * tools once. The processes are src/fixtures/approval-child.ts; the model is a scripted server
 * in this process, reached by URL.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { PendingApproval } from "@lattice/core";
import {
  createScriptedModelServer,
  type ScriptedModelServer,
  type ScriptedTurn,
} from "@lattice/providers/testing";
import { afterAll, afterEach, beforeEach, describe, expect, it } from "vitest";
import { sqliteSessionStore } from "./index.js";

const folder = mkdtempSync(join(tmpdir(), "lattice-approvals-processes-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));
const packageRoot = fileURLToPath(new URL("..", import.meta.url));

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const batch: ScriptedTurn = {
  content: [
    { type: "tool_use", id: "call_prod", name: "deploy", input: { target: "prod" } },
    { type: "tool_use", id: "call_staging", name: "deploy", input: { target: "staging" } },
    { type: "tool_use", id: "call_status", name: "status", input: {} },
  ],
};
const final: ScriptedTurn = { content: [{ type: "text", text: "Deployed to prod." }] };
const DENIAL =
  'Tool call "deploy" (call_staging) was denied by the person asked to approve it: staging is frozen';

/** A line the child printed: `{ event, ... }`. */
type ChildEvent = { readonly event: string } & Record<string, unknown>;

interface Child {
  readonly process: ChildProcessWithoutNullStreams;
  /** Resolves with the first event named `event` (rejects when the child exits first). */
  next(event: string | readonly string[]): Promise<ChildEvent>;
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startChild(args: readonly string[]): Child {
  const child = spawn(
    process.execPath,
    ["--conditions=@lattice/source", "--import", "tsx", "src/fixtures/approval-child.ts", ...args],
    { cwd: packageRoot, stdio: ["pipe", "pipe", "pipe"] },
  );
  const events: ChildEvent[] = [];
  const waiters: { names: readonly string[]; resolve: (event: ChildEvent) => void }[] = [];
  let stderr = "";
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createInterface({ input: child.stdout }).on("line", (line) => {
    const event = JSON.parse(line) as ChildEvent;
    const waiter = waiters.find((candidate) => candidate.names.includes(event.event));
    if (waiter === undefined) events.push(event);
    else {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve(event);
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal })),
  );
  return {
    process: child,
    exited,
    next(event) {
      const names = typeof event === "string" ? [event] : event;
      const index = events.findIndex((candidate) => names.includes(candidate.event));
      if (index >= 0) return Promise.resolve(events.splice(index, 1)[0]!);
      return new Promise<ChildEvent>((resolve, reject) => {
        waiters.push({ names, resolve });
        void exited.then(({ code, signal }) =>
          reject(
            new Error(
              `child exited (${code ?? signal}) before "${names.join('" or "')}": ${stderr}`,
            ),
          ),
        );
      });
    },
  };
}

/** Process A: runs until the interrupt, prints it and exits 0. Returns the interrupted result. */
async function interruptInChild(path: string, record: string): Promise<ChildEvent> {
  server.enqueue(batch);
  const child = startChild(["run", path, server.anthropicBaseURL, record]);
  const result = await child.next("result");
  expect(await child.exited).toEqual({ code: 0, signal: null });
  expect(result.subtype).toBe("interrupted");
  const pending = result.pendingApprovals as PendingApproval[];
  expect(
    pending.map(({ toolUseId, toolName, kind, input }) => ({ toolUseId, toolName, kind, input })),
  ).toEqual([
    { toolUseId: "call_prod", toolName: "deploy", kind: "tool", input: { target: "prod" } },
    { toolUseId: "call_staging", toolName: "deploy", kind: "tool", input: { target: "staging" } },
  ]);
  // Nothing of the batch ran: not the calls that need approval, not the one that does not.
  expect(readFileSync(record, "utf8")).toBe("");
  return result;
}

/** Approve the prod deploy, deny the staging one. */
function decisionsFor(interrupted: ChildEvent): string {
  const pending = interrupted.pendingApprovals as PendingApproval[];
  const byCall = new Map(pending.map((approval) => [approval.toolUseId, approval.approvalId]));
  return JSON.stringify({
    [byCall.get("call_prod")!]: { approved: true },
    [byCall.get("call_staging")!]: { approved: false, reason: "staging is frozen" },
  });
}

/** The record's lines as [pid, tool, input]. */
function executions(record: string): string[][] {
  return readFileSync(record, "utf8")
    .split("\n")
    .filter((line) => line !== "")
    .map((line) => {
      const [pid, name, ...input] = line.split(" ");
      return [pid!, name!, input.join(" ")];
    });
}

/** Checks the stored log of a run resumed once and finished, and what the model saw. */
async function checkFinishedLog(path: string): Promise<void> {
  const store = sqliteSessionStore({ path });
  try {
    const { entries } = await store.load("approvals");
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
      "interrupt",
      "run_resumed",
      "decisions",
      "tool_result",
      "tool_result",
      "tool_result",
      "reply",
      "run_finished",
    ]);
    const results = entries.filter((entry) => entry.type === "tool_result");
    expect(results.map((entry) => entry.toolUseId).sort()).toEqual([
      "call_prod",
      "call_staging",
      "call_status",
    ]);
  } finally {
    await store.close();
  }
  // The model's second request: the results in tool_use order, the denial with its reason.
  expect(server.requests).toHaveLength(2);
  const messages = (server.requests[1]!.body as { messages: { content: unknown }[] }).messages;
  expect(messages.at(-1)!.content).toEqual([
    {
      type: "tool_result",
      tool_use_id: "call_prod",
      content: [{ type: "text", text: "deployed to prod" }],
    },
    {
      type: "tool_result",
      tool_use_id: "call_staging",
      content: [{ type: "text", text: DENIAL }],
      is_error: true,
    },
    {
      type: "tool_result",
      tool_use_id: "call_status",
      content: [{ type: "text", text: "all green" }],
    },
  ]);
}

describe("approvals across processes", () => {
  it("R15: process A runs until interrupted and exits; process B resumes with decisions from the same SQLite store and finishes", async () => {
    const path = join(folder, "handover.db");
    const record = join(folder, "handover.log");
    writeFileSync(record, "");
    const interrupted = await interruptInChild(path, record);

    server.enqueue(final);
    const resumer = startChild([
      "resume",
      path,
      server.anthropicBaseURL,
      record,
      decisionsFor(interrupted),
      "nogate",
    ]);
    await resumer.next("ready");
    resumer.process.stdin.end("go\n");
    const outcome = await resumer.next(["result", "error"]);
    expect(await resumer.exited).toEqual({ code: 0, signal: null });
    // The resumed run keeps its runId (R15).
    expect(outcome).toEqual({
      event: "result",
      subtype: "success",
      runId: interrupted.runId,
      result: "Deployed to prod.",
    });
    // The approved call and the call that needed no approval ran once, in process B; the
    // denied one never ran.
    const pid = String(resumer.process.pid);
    expect(executions(record)).toEqual([
      [pid, "deploy", '{"target":"prod"}'],
      [pid, "status", "{}"],
    ]);
    await checkFinishedLog(path);
  }, 30_000);

  it("R16: two processes resume the same interrupt at once, both having read it: exactly one succeeds, the other rejects with session_conflict, and each call ran once", async () => {
    const path = join(folder, "race-gated.db");
    const record = join(folder, "race-gated.log");
    writeFileSync(record, "");
    const interrupted = await interruptInChild(path, record);

    server.enqueue(final);
    const args = ["resume", path, server.anthropicBaseURL, record, decisionsFor(interrupted)];
    const children = [startChild([...args, "gate"]), startChild([...args, "gate"])];
    await Promise.all(children.map((child) => child.next("ready")));
    for (const child of children) child.process.stdin.write("go\n");
    // Both have loaded the interrupted session (the same version) before either writes.
    const loaded = await Promise.all(children.map((child) => child.next("loaded")));
    expect(loaded[0]!.version).toBe(loaded[1]!.version);
    for (const child of children) child.process.stdin.end("go\n");
    const outcomes = await Promise.all(children.map((child) => child.next(["result", "error"])));
    for (const child of children) expect(await child.exited).toEqual({ code: 0, signal: null });

    const winners = outcomes.filter((outcome) => outcome.event === "result");
    const losers = outcomes.filter((outcome) => outcome.event === "error");
    expect(winners).toEqual([
      {
        event: "result",
        subtype: "success",
        runId: interrupted.runId,
        result: "Deployed to prod.",
      },
    ]);
    expect(losers).toHaveLength(1);
    expect(losers[0]).toMatchObject({ code: "session_conflict", name: "SessionConflictError" });
    const pid = String(children[outcomes.indexOf(winners[0]!)]!.process.pid);
    expect(executions(record)).toEqual([
      [pid, "deploy", '{"target":"prod"}'],
      [pid, "status", "{}"],
    ]);
    await checkFinishedLog(path);
  }, 30_000);

  it("R16: two processes resume the same interrupt as fast as they can: exactly one succeeds, the other is refused (session_conflict, or approval_unknown / not_interrupted if it read the session after the winner's decisions), and each call ran once", async () => {
    const path = join(folder, "race-free.db");
    const record = join(folder, "race-free.log");
    writeFileSync(record, "");
    const interrupted = await interruptInChild(path, record);

    server.enqueue(final);
    const args = ["resume", path, server.anthropicBaseURL, record, decisionsFor(interrupted)];
    const children = [startChild([...args, "nogate"]), startChild([...args, "nogate"])];
    await Promise.all(children.map((child) => child.next("ready")));
    for (const child of children) child.process.stdin.end("go\n");
    const outcomes = await Promise.all(children.map((child) => child.next(["result", "error"])));
    for (const child of children) expect(await child.exited).toEqual({ code: 0, signal: null });

    const winners = outcomes.filter((outcome) => outcome.event === "result");
    const losers = outcomes.filter((outcome) => outcome.event === "error");
    expect(winners).toEqual([
      {
        event: "result",
        subtype: "success",
        runId: interrupted.runId,
        result: "Deployed to prod.",
      },
    ]);
    expect(losers).toHaveLength(1);
    expect(["session_conflict", "approval_unknown", "not_interrupted"]).toContain(losers[0]!.code);
    const pid = String(children[outcomes.indexOf(winners[0]!)]!.process.pid);
    expect(executions(record)).toEqual([
      [pid, "deploy", '{"target":"prod"}'],
      [pid, "status", "{}"],
    ]);
    await checkFinishedLog(path);
  }, 30_000);
});
