import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  agentTool,
  createAgent,
  defineAgent,
  endRun,
  memorySessionStore,
  type SessionEntry,
  type SessionStore,
  type StepLease,
} from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-lease",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

/** One gated call at a time: each waits until the test opens its gate. */
function gatedTool(started: string[]) {
  const gates = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const gate = (key: string) => {
    if (!waiting.has(key)) {
      waiting.set(key, new Promise<void>((resolve) => gates.set(key, resolve)));
    }
    return waiting.get(key)!;
  };
  const definition = tool(
    "step",
    "One step of a sequence",
    z.object({ item: z.string() }),
    async ({ item }, ctx) => {
      const who = (ctx.context as { who: string }).who;
      started.push(`${who} ${item}`);
      await gate(`${who} ${item}`);
      return { content: `${item} by ${who}` };
    },
  );
  const open = (key: string): void => {
    void gate(key);
    gates.get(key)!();
  };
  return { definition, open };
}

const threeCalls = {
  content: [1, 2, 3].map((n) => ({
    type: "tool_use" as const,
    id: `c${n}`,
    name: "step",
    input: { item: `call ${n}` },
  })),
};

async function until(condition: () => boolean): Promise<void> {
  for (let tries = 0; !condition(); tries++) {
    if (tries > 2_000) throw new Error("timed out");
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function errorOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

/** A session whose run waits at its batch of three sequential calls (step 1). */
async function atBatch(store: SessionStore, tools: AgentOptions["tools"]) {
  server.enqueue(threeCalls, { content: [{ type: "text", text: "done" }] });
  const agent = createAgent(agentOptions({ tools, sessionStore: store }));
  const first = await agent.step("s", { prompt: "go", runId: "r", lease: lease(1) });
  expect(first).toMatchObject({ status: "continue", nextStep: 1 });
  return agent;
}

/** A memory store, and `spy` over it recording the fence of each append (`undefined`: none). */
function fencesSent() {
  const store = memorySessionStore();
  const appends: (number | undefined)[] = [];
  const spy: SessionStore = {
    ...store,
    append: (sessionId, version, entries, options) => {
      appends.push(options?.fence);
      return store.append(sessionId, version, entries, options);
    },
  };
  return { store, spy, appends };
}

function lease(fence: number, held = () => true): StepLease {
  return { fence, held };
}

const results = (entries: readonly SessionEntry[]) =>
  entries
    .filter((entry) => entry.type === "tool_result")
    .map((entry) => JSON.stringify(entry.block).match(/call \d by \w+/)?.[0]);

describe("agent.step() under a lease (H28)", () => {
  it("H28: once held() answers false the step starts no further call and appends nothing, and rejects with SessionFencedError", async () => {
    const started: string[] = [];
    const gated = gatedTool(started);
    const store = memorySessionStore();
    const agent = await atBatch(store, [gated.definition]);
    const before = await store.load("s");
    let held = true;
    const step = agent.step("s", {
      expectedStep: 1,
      runId: "r",
      context: { who: "stale" },
      lease: lease(2, () => held),
    });
    await until(() => started.length === 1);
    // The process was frozen past its lease: call 1 ends after the lease's deadline.
    held = false;
    gated.open("stale call 1");
    const error = await errorOf(step);
    expect(error).toMatchObject({ name: "SessionFencedError", code: "session_fenced", fence: 2 });
    expect(error.message).toContain("ran out");
    expect(started).toEqual(["stale call 1"]);
    expect((await store.load("s")).version).toBe(before.version);
  });

  it("H28: a step raises the session's fence before it runs anything, so the step of an older lease can log nothing more and starts no further call; the new holder runs each call once", async () => {
    const started: string[] = [];
    const gated = gatedTool(started);
    const store = memorySessionStore();
    const agent = await atBatch(store, [gated.definition]);
    // The first holder (fence 2) starts call 1 and stalls; its clock says it still holds.
    const stale = agent.step("s", {
      expectedStep: 1,
      runId: "r",
      context: { who: "stale" },
      lease: lease(2),
    });
    await until(() => started.length === 1);
    // The lease passes to another worker (fence 3), which takes the same step over.
    const successor = agent.step("s", {
      expectedStep: 1,
      runId: "r",
      context: { who: "new" },
      lease: lease(3),
    });
    await until(() => started.length === 2);
    // The stale holder's call 1 ends first: its result is refused, and it stops there.
    gated.open("stale call 1");
    const error = await errorOf(stale);
    expect(error).toMatchObject({ code: "session_fenced", fence: 2, currentFence: 3 });
    for (const key of ["new call 1", "new call 2", "new call 3"]) {
      await until(() => started.includes(key));
      gated.open(key);
    }
    expect(await successor).toMatchObject({ status: "continue", step: 1, nextStep: 2 });
    expect(started).toEqual(["stale call 1", "new call 1", "new call 2", "new call 3"]);
    expect(results((await store.load("s")).entries)).toEqual([
      "call 1 by new",
      "call 2 by new",
      "call 3 by new",
    ]);
    // The run goes on under the new lease, and ends.
    const last = await agent.step("s", { expectedStep: 2, runId: "r", lease: lease(3) });
    expect(last).toMatchObject({ status: "ended", result: { subtype: "success" } });
  });

  it("H28: a model call is not started once the lease lapsed, and a step without a lease appends unfenced as before", async () => {
    const { spy, appends } = fencesSent();
    const agent = createAgent(agentOptions({ sessionStore: spy }));
    const lapsed = await errorOf(
      agent.step("s", { prompt: "go", runId: "r", lease: lease(5, () => false) }),
    );
    expect(lapsed).toMatchObject({ code: "session_fenced" });
    expect(server.requests).toHaveLength(0);
    expect(appends).toEqual([]);
    server.enqueue({ content: [{ type: "text", text: "hi" }] });
    await agent.step("t", { prompt: "go", runId: "r2" });
    expect(appends.length).toBeGreaterThan(0);
    expect(new Set(appends)).toEqual(new Set([undefined]));
  });

  it("H28: StepOptions.lease is checked", async () => {
    const agent = createAgent(agentOptions({ sessionStore: memorySessionStore() }));
    for (const bad of [{ fence: -1, held: () => true }, { fence: 1 }, { fence: 1.5, held() {} }]) {
      await expect(agent.step("s", { prompt: "go", lease: bad as StepLease })).rejects.toThrow(
        'StepOptions: option "lease" must be { fence, held }',
      );
    }
  });
});

describe("what a step under a lease starts, down to its agent tools' runs (H28)", () => {
  it("H28: an agent tool's child run starts no model request and no tool call once the parent step's lease lapsed", async () => {
    const started: string[] = [];
    let held = true;
    const work = tool("work", "Does one thing", z.object({ n: z.number() }), ({ n }) => {
      started.push(`work ${n}`);
      // The process is frozen past its lease during the child's first call.
      if (n === 1) held = false;
      return { content: `did ${n}` };
    });
    const helper = defineAgent({ name: "helper", description: "Helps.", tools: [work] });
    server.enqueue(
      // The parent's reply: one call of the agent tool.
      { content: [{ type: "tool_use", id: "p1", name: "helper", input: { task: "go" } }] },
      // The child's replies: a call of work, then another, then its answer.
      { content: [{ type: "tool_use", id: "k1", name: "work", input: { n: 1 } }] },
      { content: [{ type: "tool_use", id: "k2", name: "work", input: { n: 2 } }] },
      { content: [{ type: "text", text: "helped" }] },
    );
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [agentTool(helper)], sessionStore: store }));
    const first = await agent.step("s", { prompt: "go", runId: "r", lease: lease(1) });
    expect(first).toMatchObject({ status: "continue", nextStep: 1 });
    const error = await errorOf(
      agent.step("s", { expectedStep: 1, runId: "r", lease: lease(2, () => held) }),
    );
    expect(error).toMatchObject({ name: "SessionFencedError", code: "session_fenced", fence: 2 });
    // The parent's model request and the child's first: none after the lease lapsed.
    expect(server.requests).toHaveLength(2);
    expect(started).toEqual(["work 1"]);
  });

  it("H28: a model request that failed is not retried once the lease lapsed during the retry's wait (a process frozen while it waited)", async () => {
    let heldUntil = Number.POSITIVE_INFINITY;
    server.enqueue(
      { status: 529, headers: { "retry-after-ms": "200" } },
      {
        content: [{ type: "text", text: "late" }],
      },
    );
    const agent = createAgent(
      agentOptions({
        sessionStore: memorySessionStore(),
        onTrace: (event) => {
          if (event.type !== "model_retry") return;
          // The lease lapses 50 ms into the 200 ms wait, and the process is frozen from then
          // until after the wait: the retry's timer and the lease's deadline are both due.
          heldUntil = performance.now() + 50;
          setTimeout(() => {
            const until = performance.now() + 300;
            while (performance.now() < until) {
              // frozen
            }
          }, 60);
        },
      }),
    );
    const error = await errorOf(
      agent.step("s", {
        prompt: "go",
        runId: "r",
        lease: lease(3, () => performance.now() < heldUntil),
      }),
    );
    expect(error).toMatchObject({ code: "session_fenced", fence: 3 });
    expect(server.requests).toHaveLength(1);
  });

  it("H28: endRun() with a lease appends its end with the lease's fence, and refuses a lapsed lease or a lower fence without appending", async () => {
    const { store, spy, appends } = fencesSent();
    server.enqueue(threeCalls);
    const agent = createAgent(
      agentOptions({ tools: [gatedTool([]).definition], sessionStore: spy }),
    );
    await agent.step("s", { prompt: "go", runId: "r", lease: lease(7) });
    const before = (await store.load("s")).version;
    appends.length = 0;
    const lapsed = await errorOf(
      endRun({ store: spy, sessionId: "s", errors: ["poison"], lease: lease(8, () => false) }),
    );
    expect(lapsed).toMatchObject({ code: "session_fenced", fence: 8 });
    const lower = await errorOf(
      endRun({ store: spy, sessionId: "s", errors: ["poison"], lease: lease(6) }),
    );
    expect(lower).toMatchObject({ code: "session_fenced", fence: 6, currentFence: 7 });
    expect((await store.load("s")).version).toBe(before);
    const ended = await endRun({ store: spy, sessionId: "s", errors: ["poison"], lease: lease(8) });
    expect(ended).toMatchObject({ subtype: "error_during_execution", errors: ["poison"] });
    expect(appends).toEqual([6, 8]);
  });
});
