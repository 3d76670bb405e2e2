import { memorySessionStore, RUN_LOG_VERSION, type SessionEntry } from "@lattice/core";
import { describe, expect, it } from "vitest";
import { decisionsLogged } from "./decisions-logged.js";

const usage = { inputTokens: 1, outputTokens: 1 };
const started = (runId: string): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "run_started",
  runId,
  time: "2025-01-01T00:00:00.000Z",
  message: { role: "user", content: `prompt of ${runId}` },
});
const calls = (runId: string, ids: readonly string[]): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "reply",
  runId,
  turn: 1,
  message: {
    role: "assistant",
    content: ids.map((id) => ({ type: "tool_use", id, name: "echo", input: {} })),
  },
  stopReason: "tool_use",
  usage,
});
const interrupt = (runId: string, ids: readonly string[]): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "interrupt",
  runId,
  approvals: ids.map((id) => ({
    approvalId: `appr_${id}`,
    toolUseId: id,
    toolName: "echo",
    kind: "tool",
    input: {},
  })),
});
const decided = (runId: string, ids: readonly string[]): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "decisions",
  runId,
  decisions: Object.fromEntries(ids.map((id) => [`appr_${id}`, { approved: true }])),
});
const result = (runId: string, id: string): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "tool_result",
  runId,
  toolUseId: id,
  toolName: "echo",
  status: "completed",
  block: { type: "tool_result", tool_use_id: id, content: "ok" },
});
const finished = (runId: string): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "run_finished",
  runId,
  subtype: "success",
  result: "done",
  errors: [],
  numTurns: 1,
  usage,
});

async function storeWith(entries: readonly SessionEntry[]) {
  const store = memorySessionStore();
  await store.append("s1", 0, entries);
  return store;
}

const approve = (...ids: string[]) =>
  Object.fromEntries(ids.map((id) => [`appr_${id}`, { approved: true }]));

describe("decisionsLogged: a resume delivered again finds its decisions in the folded log (D5, D7)", () => {
  it("D5, D7: true once a decisions entry of the run answered exactly these approval ids, in any order", async () => {
    const store = await storeWith([
      started("r1"),
      calls("r1", ["a", "b"]),
      interrupt("r1", ["a", "b"]),
      decided("r1", ["a", "b"]),
    ]);
    expect(await decisionsLogged(store, "s1", "r1", approve("a", "b"))).toBe(true);
    expect(await decisionsLogged(store, "s1", "r1", approve("b", "a"))).toBe(true);
  });

  it("D5, D7: false for decisions not stored yet, for a part or more of a stored entry's ids, and for another run's", async () => {
    const waiting = await storeWith([started("r1"), calls("r1", ["a"]), interrupt("r1", ["a"])]);
    expect(await decisionsLogged(waiting, "s1", "r1", approve("a"))).toBe(false);
    const store = await storeWith([
      started("r1"),
      calls("r1", ["a", "b"]),
      interrupt("r1", ["a", "b"]),
      decided("r1", ["a", "b"]),
    ]);
    expect(await decisionsLogged(store, "s1", "r1", approve("a"))).toBe(false);
    expect(await decisionsLogged(store, "s1", "r1", approve("a", "b", "c"))).toBe(false);
    expect(await decisionsLogged(store, "s1", "r2", approve("a", "b"))).toBe(false);
    expect(await decisionsLogged(memorySessionStore(), "s1", "r1", approve("a"))).toBe(false);
  });

  it("D7: each decisions entry of a batch that paused twice counts on its own, and a finished run's still count after the next run started", async () => {
    const store = await storeWith([
      started("r1"),
      calls("r1", ["a", "b"]),
      interrupt("r1", ["a"]),
      decided("r1", ["a"]),
      result("r1", "a"),
      interrupt("r1", ["b"]),
      decided("r1", ["b"]),
      result("r1", "b"),
      finished("r1"),
      started("r2"),
    ]);
    expect(await decisionsLogged(store, "s1", "r1", approve("a"))).toBe(true);
    expect(await decisionsLogged(store, "s1", "r1", approve("b"))).toBe(true);
    expect(await decisionsLogged(store, "s1", "r1", approve("a", "b"))).toBe(false);
    expect(await decisionsLogged(store, "s1", "r2", approve("a"))).toBe(false);
  });

  it("H24: a log that cannot be folded is left to the step: the entries before the damage answer, nothing is thrown", async () => {
    const damaged = { v: RUN_LOG_VERSION, type: "reply", runId: "r1" } as SessionEntry;
    const store = await storeWith([
      started("r1"),
      calls("r1", ["a"]),
      interrupt("r1", ["a"]),
      decided("r1", ["a"]),
      damaged,
    ]);
    expect(await decisionsLogged(store, "s1", "r1", approve("a"))).toBe(true);
    const early = await storeWith([started("r1"), damaged, decided("r1", ["a"])]);
    expect(await decisionsLogged(early, "s1", "r1", approve("a"))).toBe(false);
  });
});
