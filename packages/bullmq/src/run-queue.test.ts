import {
  type AgentOptions,
  agentTool,
  createAgent,
  defineAgent,
  memorySessionStore,
  type SDKMessage,
  type SessionStore,
} from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  createRunQueue,
  createRunWorker,
  type RunQueue,
  type RunWorker,
  type RunWorkerOptions,
} from "./index.js";
import { RunKeys } from "./keys.js";

let redis: RedisServer;
let model: ScriptedModelServer;
beforeAll(async () => {
  redis = await startRedis();
  model = await createScriptedModelServer({
    // Each run: a text prompt "echo <words>" → one echo call per word, then "done".
    respond: (request) => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] })
        .messages;
      const last = messages[messages.length - 1]!;
      if (typeof last.content === "string") {
        const words = last.content.split(" ").slice(1);
        return {
          content: words.map((word, index) => ({
            type: "tool_use" as const,
            id: `call_${index}_${word}`,
            name: "echo",
            input: { text: word },
          })),
        };
      }
      return { content: [{ type: "text", text: "done" }] };
    },
  });
});
afterAll(async () => {
  await model?.close();
  await redis?.stop();
});

let queues = 0;
const executions: string[] = [];
const echo = tool("echo", "Echo", z.object({ text: z.string() }), async ({ text }) => {
  executions.push(text);
  return { content: `echo: ${text}` };
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-bullmq",
    baseURL: model.anthropicBaseURL,
    model: "scripted",
    tools: [echo],
    ...extra,
  };
}

async function setup(
  extra: {
    workers?: number;
    agents?: Record<string, AgentOptions>;
    worker?: Partial<RunWorkerOptions>;
    connection?: string;
  } = {},
): Promise<{
  queue: RunQueue;
  name: string;
  workers: RunWorker[];
  sessionStore: SessionStore;
  close: () => Promise<void>;
}> {
  const name = `runs-${queues++}`;
  const sessionStore = memorySessionStore();
  const connection = extra.connection ?? redis.url;
  const queue = createRunQueue({ connection, name, stepBackoffMs: 50 });
  const workers = Array.from({ length: extra.workers ?? 1 }, () =>
    createRunWorker({
      connection,
      name,
      agents: extra.agents ?? { echoer: agentOptions() },
      sessionStore,
      lockDurationMs: 2_000,
      stepBackoffMs: 50,
      ...extra.worker,
    }),
  );
  return {
    queue,
    name,
    workers,
    sessionStore,
    close: async () => {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
    },
  };
}

async function errorOf(promise: Promise<unknown>): Promise<Error & Record<string, unknown>> {
  try {
    await promise;
  } catch (error) {
    return error as Error & Record<string, unknown>;
  }
  throw new Error("expected an error");
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let tries = 0; tries < 1000; tries++) {
    if (check()) return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe("@lattice/bullmq", () => {
  it("D3, D4: enqueue returns the ids at once; a worker takes the run step by step; result and events reach the producer", async () => {
    const { queue, close } = await setup();
    try {
      const { runId, sessionId } = await queue.enqueue("echoer", "echo a b", {
        sessionId: "conversation-1",
      });
      expect(sessionId).toBe("conversation-1");
      const result = await queue.result(runId, { timeoutMs: 20_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done", numTurns: 2, runId });
      const messages: SDKMessage[] = [];
      for await (const message of queue.events(runId)) messages.push(message);
      expect(messages.map((message) => message.type)).toEqual([
        "system",
        "assistant",
        "user",
        "assistant",
        "result",
      ]);
    } finally {
      await close();
    }
  });

  it("D7: a run that needs approval parks with no job; another producer resumes it with decisions", async () => {
    const risky = tool(
      "echo",
      "Echo after approval",
      z.object({ text: z.string() }),
      async ({ text }) => {
        executions.push(`approved ${text}`);
        return { content: `echo: ${text}` };
      },
      { needsApproval: true },
    );
    const { queue, name, close } = await setup({
      agents: { echoer: agentOptions({ tools: [risky] }) },
    });
    const other = createRunQueue({ connection: redis.url, name });
    try {
      const { runId, sessionId } = await queue.enqueue("echoer", "echo gated");
      const paused = await queue.result(runId, { timeoutMs: 20_000 });
      expect(paused.subtype).toBe("interrupted");
      const approval = paused.pendingApprovals![0]!;
      expect(executions).not.toContain("approved gated");
      const refused = await errorOf(
        other.resume(sessionId, { decisions: { appr_unknown: { approved: true } } }),
      );
      expect(refused).toMatchObject({ code: "resume_refused" });
      expect(refused.message).toMatch(/approval_unknown/);
      // A refused resume changes nothing: the run still waits, with its interrupted result.
      expect((await other.result(runId, { timeoutMs: 5_000 })).subtype).toBe("interrupted");
      await other.resume(sessionId, {
        decisions: { [approval.approvalId]: { approved: true } },
      });
      const result = await queue.result(runId, { timeoutMs: 20_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done", runId });
      expect(executions.filter((text) => text === "approved gated")).toHaveLength(1);
      // The events of the whole run: the interrupted result, then the resumed run's messages.
      const types: string[] = [];
      for await (const message of other.events(runId)) {
        types.push(message.type === "result" ? `result:${message.subtype}` : message.type);
      }
      expect(types).toEqual([
        "system",
        "assistant",
        "result:interrupted",
        "user",
        "assistant",
        "result:success",
      ]);
    } finally {
      await other.close();
      await close();
    }
  });

  it("D9: abort() stops the run on the worker holding it, the started handler sees its signal; resume() continues it", async () => {
    let attempt = 0;
    const seen: string[] = [];
    const waits = tool("echo", "Waits", z.object({ text: z.string() }), async (_input, ctx) => {
      attempt++;
      if (attempt > 1) return { content: "finished on resume" };
      seen.push("started");
      await new Promise<void>((resolve) => {
        ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      });
      seen.push(`aborted: ${String((ctx.signal.reason as Error)?.message)}`);
      throw ctx.signal.reason;
    });
    const { queue, close } = await setup({ agents: { echoer: agentOptions({ tools: [waits] }) } });
    try {
      const { runId, sessionId } = await queue.enqueue("echoer", "echo slow");
      await until(() => seen.includes("started"), "the handler to start");
      await queue.abort(runId, "the user closed the tab");
      const error = await errorOf(queue.result(runId, { timeoutMs: 20_000 }));
      expect(error).toMatchObject({ name: "AbortError", code: "run_aborted", runId });
      expect(error.message).toMatch(/the user closed the tab/);
      expect(seen[1]).toMatch(/aborted: .*the user closed the tab/);
      // The aborted run is unfinished: a new prompt on its session fails instead of waiting.
      const busy = await queue.enqueue("echoer", "echo z", { sessionId });
      const refused = await errorOf(queue.result(busy.runId, { timeoutMs: 20_000 }));
      expect(refused).toMatchObject({ code: "session_busy" });
      expect(refused.message).toMatch(/was aborted.*queue\.resume/);
      await queue.resume(sessionId);
      const result = await queue.result(runId, { timeoutMs: 20_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done" });
      expect(attempt).toBe(2);
    } finally {
      await close();
    }
  });

  it("D10: runs on one session take turns, one step at a time; a worker runs up to its concurrency of steps at once", async () => {
    let running = 0;
    let most = 0;
    const slow = tool("echo", "Slow", z.object({ text: z.string() }), async ({ text }) => {
      running++;
      most = Math.max(most, running);
      await new Promise((resolve) => setTimeout(resolve, 60));
      running--;
      return { content: text };
    });
    const { queue, sessionStore, close } = await setup({
      workers: 2,
      agents: { echoer: agentOptions({ tools: [slow] }) },
      worker: { concurrency: 4 },
    });
    try {
      const shared = await Promise.all(
        [0, 1, 2].map((n) => queue.enqueue("echoer", `echo s${n}`, { sessionId: "shared" })),
      );
      const results = await Promise.all(
        shared.map(({ runId }) => queue.result(runId, { timeoutMs: 30_000 })),
      );
      expect(results.map((result) => result.subtype)).toEqual(["success", "success", "success"]);
      // The log holds the three runs one after the other, never interleaved (R8), in the
      // order they were enqueued.
      const runIds = (await sessionStore.load("shared")).entries.map((entry) => entry.runId);
      const order = runIds.filter((id, index) => id !== runIds[index - 1]);
      expect(order).toEqual(shared.map(({ runId }) => runId));
      // Steps of one session never overlapped; of different sessions they did.
      expect(most).toBe(1);
      const apart = await Promise.all(
        [0, 1, 2, 3].map((n) => queue.enqueue("echoer", `echo p${n}`)),
      );
      await Promise.all(apart.map(({ runId }) => queue.result(runId, { timeoutMs: 30_000 })));
      expect(most).toBeGreaterThan(1);
    } finally {
      await close();
    }
  });

  it("D3: a run for an agent no worker knows fails with a clear error through result(); the queue keeps flowing", async () => {
    const { queue, close } = await setup();
    try {
      const lost = await queue.enqueue("nobody", "echo x");
      const fine = await queue.enqueue("echoer", "echo y");
      const error = await errorOf(queue.result(lost.runId, { timeoutMs: 20_000 }));
      expect(error).toMatchObject({ code: "unknown_agent", runId: lost.runId });
      expect(error.message).toMatch(/knows its agent "nobody".*tried 5 times.*"echoer"/);
      expect((await queue.result(fine.runId, { timeoutMs: 20_000 })).subtype).toBe("success");
      await expect(queue.result("never-enqueued")).rejects.toMatchObject({
        code: "run_not_found",
      });
      await expect(
        queue.enqueue("echoer", "echo again", { runId: fine.runId }),
      ).rejects.toMatchObject({ code: "run_exists" });
    } finally {
      await close();
    }
  });

  it("D4: a poison step is retried with backoff, then its run ends error_during_execution with the cause; others go on", async () => {
    const attempts: number[] = [];
    const { queue, close } = await setup({
      worker: {
        stepAttempts: 3,
        stepBackoffMs: 20,
        context: ({ step, runId }) => {
          if (runId === "poison-run" && step === 1) {
            attempts.push(Date.now());
            throw new Error("the tenant database is down");
          }
          return undefined;
        },
      },
    });
    try {
      const poisoned = await queue.enqueue("echoer", "echo p", {
        sessionId: "poisoned",
        runId: "poison-run",
      });
      const healthy = await queue.enqueue("echoer", "echo h");
      expect((await queue.result(healthy.runId, { timeoutMs: 20_000 })).subtype).toBe("success");
      const result = await queue.result(poisoned.runId, { timeoutMs: 20_000 });
      expect(result).toMatchObject({ subtype: "error_during_execution", isError: true });
      expect(result.errors.join(" ")).toMatch(/failed 3 time\(s\).*the tenant database is down/);
      expect(attempts).toHaveLength(3);
      // Backoff: the third attempt waited longer than the second.
      expect(attempts[2]! - attempts[1]!).toBeGreaterThanOrEqual(attempts[1]! - attempts[0]!);
      // The session takes a new run afterwards.
      const next = await queue.enqueue("echoer", "echo again", { sessionId: "poisoned" });
      expect((await queue.result(next.runId, { timeoutMs: 20_000 })).subtype).toBe("success");
    } finally {
      await close();
    }
  });

  it("D3: Redis unreachable at start fails with an error naming the URL; options are checked strictly", async () => {
    const queue = createRunQueue({
      connection: "redis://:secret@127.0.0.1:1/2",
      connectTimeoutMs: 300,
    });
    const error = await errorOf(queue.enqueue("echoer", "echo x"));
    expect(error).toMatchObject({ code: "redis_unreachable" });
    expect(error.message).toMatch(/redis:\/\/:\*\*\*@127\.0\.0\.1:1\/2/);
    expect(error.message).not.toMatch(/secret/);
    await queue.close();
    const worker = createRunWorker({
      connection: "redis://127.0.0.1:1",
      connectTimeoutMs: 300,
      agents: { echoer: agentOptions() },
      sessionStore: memorySessionStore(),
    });
    await expect(worker.ready()).rejects.toMatchObject({ code: "redis_unreachable" });
    await worker.close();
    expect(() => createRunQueue({ connection: redis.url, turbo: true } as never)).toThrow(/turbo/);
    expect(() =>
      createRunWorker({ connection: redis.url, agents: {}, sessionStore: memorySessionStore() }),
    ).toThrow(/agents/);
    const own = memorySessionStore();
    expect(() =>
      createRunWorker({
        connection: redis.url,
        agents: { echoer: agentOptions({ sessionStore: own }) },
        sessionStore: memorySessionStore(),
      }),
    ).toThrow(/sessionStore of its own/);
  });

  it("D5: Redis restarted mid-run: workers reconnect and the run finishes", async () => {
    const durable = await startRedis({ persistent: true });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    let started = false;
    const gated = tool("echo", "Waits for the gate", z.object({ text: z.string() }), async () => {
      started = true;
      await gate;
      return { content: "through" };
    });
    const { queue, close } = await setup({
      connection: durable.url,
      agents: { echoer: agentOptions({ tools: [gated] }) },
    });
    try {
      const { runId } = await queue.enqueue("echoer", "echo r");
      await until(() => started, "the handler to start");
      await durable.restart();
      release();
      const result = await queue.result(runId, { timeoutMs: 30_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done" });
    } finally {
      await close();
      await durable.stop();
    }
  });

  it("D6: a batch's calls fan out to other workers as jobs, keeping the cap, unsafe calls alone, tool_use order and one result per call", async () => {
    const log: { call: string; worker: string; phase: "start" | "end" }[] = [];
    let running = 0;
    let most = 0;
    let overlapWithUnsafe = false;
    let unsafeRunning = false;
    const record = async (call: string, worker: string, unsafe: boolean) => {
      if (unsafe && running > 0) overlapWithUnsafe = true;
      if (!unsafe && unsafeRunning) overlapWithUnsafe = true;
      running++;
      if (unsafe) unsafeRunning = true;
      most = Math.max(most, running);
      log.push({ call, worker, phase: "start" });
      await new Promise((resolve) => setTimeout(resolve, 60));
      log.push({ call, worker, phase: "end" });
      running--;
      if (unsafe) unsafeRunning = false;
    };
    const work = tool(
      "work",
      "Safe work",
      z.object({ text: z.string() }),
      async ({ text }, ctx) => {
        await record(text, String((ctx.context as { worker: string }).worker), false);
        return { content: `worked ${text}` };
      },
      { isConcurrencySafe: () => true },
    );
    const write = tool(
      "write",
      "Unsafe work",
      z.object({ text: z.string() }),
      async ({ text }, ctx) => {
        await record(text, String((ctx.context as { worker: string }).worker), true);
        return { content: `wrote ${text}` };
      },
    );
    const batch = ["w1", "w2", "w3", "x", "w4", "w5", "w6"];
    const fanModel = await createScriptedModelServer({
      respond: (request) => {
        const messages = (request.body as { messages: unknown[] }).messages;
        if (messages.length > 1) return { content: [{ type: "text", text: "done" }] };
        return {
          // Ids with ":" in them, as some OpenAI-compatible servers send (a job id may not).
          content: batch.map((text) => ({
            type: "tool_use" as const,
            id: `functions.${text}:0`,
            name: text === "x" ? "write" : "work",
            input: { text },
          })),
        };
      },
    });
    const sessionStore = memorySessionStore();
    const name = `runs-${queues++}`;
    const options = (worker: string) =>
      createRunWorker({
        connection: redis.url,
        name,
        sessionStore,
        agents: {
          fan: {
            apiKey: "sk-test-fan-out",
            baseURL: fanModel.anthropicBaseURL,
            model: "scripted",
            tools: [work, write],
            toolConcurrency: { maxConcurrency: 2 },
          },
        },
        fanOutTools: ["work", "write"],
        concurrency: 2,
        callConcurrency: 1,
        context: () => ({ worker }),
        lockDurationMs: 2_000,
      });
    const workers = [options("A"), options("B"), options("C")];
    const queue = createRunQueue({ connection: redis.url, name });
    try {
      const { runId } = await queue.enqueue("fan", "go");
      const result = await queue.result(runId, { timeoutMs: 30_000 });
      expect(result).toMatchObject({ subtype: "success", result: "done" });
      // Every call ran once, on several workers.
      const starts = log.filter((entry) => entry.phase === "start");
      expect(starts.map((entry) => entry.call).sort()).toEqual([...batch].sort());
      expect(new Set(starts.map((entry) => entry.worker)).size).toBeGreaterThan(1);
      // The cap of 2 held across workers; the unsafe call overlapped nothing.
      expect(most).toBe(2);
      expect(overlapWithUnsafe).toBe(false);
      // Results in tool_use order, one per call.
      const results = result.messages[2]!.content as unknown as { tool_use_id: string }[];
      expect(results.map((block) => block.tool_use_id)).toEqual(
        batch.map((t) => `functions.${t}:0`),
      );
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
      await fanModel.close();
    }
    expect(() =>
      createRunWorker({
        connection: redis.url,
        agents: { echoer: agentOptions() },
        sessionStore: memorySessionStore(),
        fanOutTools: ["nope"],
      }),
    ).toThrow(/"nope", which no agent/);
  });

  it("D8: a handoff posted on one worker runs on another, and its reply reaches the lead's next step (or starts its next run)", async () => {
    const ranOn: Record<string, string> = {};
    const wait = tool(
      "wait",
      "Waits a while",
      z.object({ ms: z.number() }),
      async ({ ms }, ctx) => {
        ranOn.wait = String((ctx.context as { worker: string }).worker);
        await new Promise((resolve) => setTimeout(resolve, ms));
        return { content: "waited" };
      },
      { isConcurrencySafe: () => true },
    );
    const note = tool("note", "Takes a note", z.object({}), async (_input, ctx) => {
      ranOn.note = String((ctx.context as { worker: string }).worker);
      return { content: "noted" };
    });
    const writer = defineAgent({
      name: "writer",
      description: "Writes drafts",
      model: "scripted",
      tools: [note],
    });
    const teamModel = await createScriptedModelServer({
      respond: (request) => {
        const messages = (request.body as { messages: { role: string; content: unknown }[] })
          .messages;
        const text = JSON.stringify(messages);
        const first = messages[0]!.content as string;
        if (first.includes("handed you this task")) {
          // The writer: a note, then its draft.
          return messages.length === 1
            ? { content: [{ type: "tool_use", id: "note_1", name: "note", input: {} }] }
            : { content: [{ type: "text", text: "draft ready" }] };
        }
        if (messages.length === 1) {
          const handoff = {
            type: "tool_use" as const,
            id: "h1",
            name: "writer",
            input: { task: "Draft the report", mode: "handoff" },
          };
          return first === "quick"
            ? { content: [handoff] }
            : {
                content: [
                  handoff,
                  { type: "tool_use", id: "w1", name: "wait", input: { ms: 500 } },
                ],
              };
        }
        if (text.includes('Reply from \\"writer\\"')) {
          return { content: [{ type: "text", text: "final: the writer says draft ready" }] };
        }
        return { content: [{ type: "text", text: "waiting for the writer" }] };
      },
    });
    const sessionStore = memorySessionStore();
    const name = `runs-${queues++}`;
    const endpoint = {
      apiKey: "sk-test-team",
      baseURL: teamModel.anthropicBaseURL,
      model: "scripted",
    };
    const makeWorker = (worker: string) =>
      createRunWorker({
        connection: redis.url,
        name,
        sessionStore,
        agents: {
          lead: { ...endpoint, tools: [agentTool(writer, { modes: ["handoff"] }), wait] },
          writer: { ...endpoint, tools: [note] },
        },
        concurrency: 1,
        context: () => ({ worker }),
        lockDurationMs: 2_000,
      });
    const workers = [makeWorker("A"), makeWorker("B")];
    const queue = createRunQueue({ connection: redis.url, name });
    try {
      // The lead is still running (its wait call) when the reply arrives: its next model call
      // gets it. The handoff ran on the other worker (each takes one step at a time).
      const { runId } = await queue.enqueue("lead", "Write the report", { sessionId: "lead-1" });
      const result = await queue.result(runId, { timeoutMs: 30_000 });
      expect(result.result).toBe("final: the writer says draft ready");
      expect(ranOn.note).toBeDefined();
      expect(ranOn.note).not.toBe(ranOn.wait);
      const entries = (await sessionStore.load("lead-1")).entries;
      expect(entries.some((entry) => entry.type === "mail")).toBe(true);

      // The lead's run ends before the reply: the reply starts the lead's next run.
      const quick = await queue.enqueue("lead", "quick", { sessionId: "lead-2" });
      expect((await queue.result(quick.runId, { timeoutMs: 30_000 })).result).toBe(
        "waiting for the writer",
      );
      for (let tries = 0; tries < 300; tries++) {
        const finished = (await sessionStore.load("lead-2")).entries.filter(
          (entry) => entry.type === "run_finished",
        );
        if (finished.length === 2) {
          expect(finished[1]).toMatchObject({ result: "final: the writer says draft ready" });
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      throw new Error("the reply did not start the lead's next run");
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
      await teamModel.close();
    }
  });

  it("D3: close() ends pending result() and events() calls with `closed`; the run goes on", async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated = tool("echo", "Waits", z.object({ text: z.string() }), async () => {
      await gate;
      return { content: "through" };
    });
    const { queue, name, close } = await setup({
      agents: { echoer: agentOptions({ tools: [gated] }) },
    });
    const other = createRunQueue({ connection: redis.url, name });
    try {
      const { runId } = await queue.enqueue("echoer", "echo w");
      const waiting = errorOf(queue.result(runId));
      const iterating = errorOf(
        (async () => {
          for await (const _message of queue.events(runId)) {
            // Reads until closed.
          }
        })(),
      );
      await new Promise((resolve) => setTimeout(resolve, 100));
      await queue.close();
      expect(await waiting).toMatchObject({ code: "closed" });
      expect(await iterating).toMatchObject({ code: "closed" });
      release();
      expect((await other.result(runId, { timeoutMs: 20_000 })).subtype).toBe("success");
    } finally {
      await other.close();
      await close();
    }
  });
});

// What a worker killed at the wrong instant leaves behind, set up by hand: the run log in the
// store and the queue's records in Redis as the dead worker left them. The next worker must
// finish the job the dead one started, not hang or refuse it.
describe("@lattice/bullmq: what a dead worker leaves behind (D5, D7, D10)", () => {
  const gated = () =>
    tool(
      "echo",
      "Echo after approval",
      z.object({ text: z.string() }),
      async ({ text }) => {
        executions.push(`crash ${text}`);
        return { content: `echo: ${text}` };
      },
      { needsApproval: true },
    );

  /** A queue with no worker yet, its store, and a way to start workers on it. */
  async function bare(tools = [gated()]) {
    const name = `runs-${queues++}`;
    const sessionStore = memorySessionStore();
    const queue = createRunQueue({ connection: redis.url, name, stepBackoffMs: 50 });
    const workers: RunWorker[] = [];
    const options = agentOptions({ tools });
    return {
      name,
      queue,
      sessionStore,
      options,
      /** The same agent in this process, on the same store: it takes steps as a worker would. */
      agent: createAgent({ ...options, sessionStore }),
      startWorker: () => {
        const worker = createRunWorker({
          connection: redis.url,
          name,
          agents: { echoer: options },
          sessionStore,
          lockDurationMs: 2_000,
          stepBackoffMs: 50,
        });
        workers.push(worker);
        return worker;
      },
      close: async () => {
        await Promise.all(workers.map((worker) => worker.close()));
        await queue.close();
      },
    };
  }

  it("D5, D7: the pause was stored but never published: the step taken again publishes the interrupted result, and resume() goes on", async () => {
    const { queue, agent, startWorker, close } = await bare();
    try {
      const sessionId = "paused-unpublished";
      const { runId } = await queue.enqueue("echoer", "echo late", { sessionId });
      // The dead worker's work: the model call, then the batch that paused, both stored.
      await agent.step(sessionId, { prompt: "echo late", runId });
      const paused = await agent.step(sessionId, { runId, expectedStep: 1 });
      if (paused.status !== "ended") throw new Error("expected the pause");
      startWorker();
      const result = await queue.result(runId, { timeoutMs: 15_000 });
      expect(result.subtype).toBe("interrupted");
      expect(result.pendingApprovals).toEqual(paused.result.pendingApprovals);
      const approvalId = result.pendingApprovals![0]!.approvalId;
      await queue.resume(sessionId, { decisions: { [approvalId]: { approved: true } } });
      expect(await queue.result(runId, { timeoutMs: 15_000 })).toMatchObject({
        subtype: "success",
        result: "done",
      });
      expect(executions.filter((text) => text === "crash late")).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it("D5, D7: the decisions were stored but the resume was not acknowledged: the resume again goes on from the log instead of being refused", async () => {
    const { queue, sessionStore, startWorker, close } = await bare();
    try {
      startWorker();
      const sessionId = "decided-unacknowledged";
      const { runId } = await queue.enqueue("echoer", "echo decided", { sessionId });
      const paused = await queue.result(runId, { timeoutMs: 15_000 });
      const approvalId = paused.pendingApprovals![0]!.approvalId;
      const decisions = { [approvalId]: { approved: true } } as const;
      // The dead worker stored the decisions (as agent.step() does) and died before Redis heard.
      const { version } = await sessionStore.load(sessionId);
      const time = new Date().toISOString();
      await sessionStore.append(sessionId, version, [
        { v: 1, type: "run_resumed", runId, time },
        { v: 1, type: "decisions", runId, decisions },
      ]);
      await queue.resume(sessionId, { decisions, timeoutMs: 15_000 });
      expect(await queue.result(runId, { timeoutMs: 15_000 })).toMatchObject({
        subtype: "success",
        result: "done",
      });
      expect(executions.filter((text) => text === "crash decided")).toHaveLength(1);
    } finally {
      await close();
    }
  });

  it("D3, D7: close() ends a resume() still waiting for a worker with `closed`; the resume stays queued and a worker started later runs it", async () => {
    const { name, queue, startWorker, close } = await bare();
    const other = createRunQueue({ connection: redis.url, name });
    try {
      const first = startWorker();
      const sessionId = "resume-closed";
      const { runId } = await queue.enqueue("echoer", "echo after", { sessionId });
      const paused = await queue.result(runId, { timeoutMs: 15_000 });
      const approvalId = paused.pendingApprovals![0]!.approvalId;
      await first.close();
      // No worker is running: the resume waits for one until the queue closes.
      const waiting = errorOf(
        queue.resume(sessionId, { decisions: { [approvalId]: { approved: true } } }),
      );
      await new Promise((resolve) => setTimeout(resolve, 150));
      await queue.close();
      expect(await waiting).toMatchObject({ code: "closed" });
      startWorker();
      // result() gives the interrupted result until a worker has taken the queued resume.
      let result = await other.result(runId, { timeoutMs: 15_000 });
      for (let tries = 0; result.subtype === "interrupted" && tries < 300; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 50));
        result = await other.result(runId, { timeoutMs: 15_000 });
      }
      expect(result).toMatchObject({ subtype: "success", result: "done" });
      expect(executions.filter((text) => text === "crash after")).toHaveLength(1);
    } finally {
      await other.close();
      await close();
    }
  });

  it("D10: a prompt on a session whose unfinished run is not on this queue fails with session_busy at once, instead of waiting for ever", async () => {
    const { queue, agent, startWorker, close } = await bare([echo]);
    try {
      startWorker();
      const sessionId = "busy-elsewhere";
      // A run of the session taken in another process (no queue records), cut after a step.
      await agent.step(sessionId, { prompt: "echo elsewhere" });
      const { runId } = await queue.enqueue("echoer", "echo queued", { sessionId });
      const error = await errorOf(queue.result(runId, { timeoutMs: 10_000 }));
      expect(error).toMatchObject({ code: "session_busy", runId });
      expect(error.message).toMatch(/not running on this queue/);
      expect(error.message).toMatch(/queue\.resume\("busy-elsewhere"\)/);
    } finally {
      await close();
    }
  });

  it("D10: a run recorded without its first job (the producer died in between) does not hold up the runs behind it", async () => {
    const { name, queue, startWorker, close } = await bare([echo]);
    const raw = new Redis(redis.url);
    try {
      const sessionId = "orphaned-head";
      const keys = new RunKeys("lattice", name);
      // What enqueue() had written before its producer stopped: the run and its place in line.
      const long = new Date(Date.now() - 60_000).toISOString();
      await raw
        .multi()
        .hset(keys.run("orphan"), {
          agentName: "echoer",
          sessionId,
          state: "queued",
          enqueuedAt: long,
        })
        .rpush(keys.waiting(sessionId), "orphan")
        .exec();
      startWorker();
      const { runId } = await queue.enqueue("echoer", "echo behind", { sessionId });
      expect(await queue.result(runId, { timeoutMs: 15_000 })).toMatchObject({
        subtype: "success",
        result: "done",
      });
      const error = await errorOf(queue.result("orphan", { timeoutMs: 5_000 }));
      expect(error).toMatchObject({ code: "run_failed", runId: "orphan" });
      expect(error.message).toMatch(/never started/);
    } finally {
      raw.disconnect();
      await close();
    }
  });
});

describe("@lattice/bullmq: many waits and bad connections (issue 21)", () => {
  it("D3: 30 result() calls waiting at once on one queue print no MaxListenersExceededWarning", async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => {
      if (warning.name === "MaxListenersExceededWarning") warnings.push(warning);
    };
    process.on("warning", onWarning);
    const { queue, close } = await setup({ workers: 2 });
    try {
      const runs = await Promise.all(
        Array.from({ length: 30 }, (_, n) => queue.enqueue("echoer", `echo many-${n}`)),
      );
      const results = await Promise.all(
        runs.map(({ runId }) => queue.result(runId, { timeoutMs: 30_000 })),
      );
      expect(results.every((result) => result.subtype === "success")).toBe(true);
      // And 30 more at once on one run that has ended.
      await Promise.all(Array.from({ length: 30 }, () => queue.result(runs[0]!.runId)));
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings.map((warning) => warning.message)).toEqual([]);
    } finally {
      process.off("warning", onWarning);
      await close();
    }
  });

  it("H25, H26: enqueue() and resume() refuse a session id with a lone surrogate, and resume() refuses an edited input past the bounds or not plain JSON, with InvalidOptionError before anything is queued", async () => {
    const { queue, name, close } = await setup({ workers: 0 });
    const client = new Redis(redis.url);
    try {
      const lone = "chat-\uD800";
      const enqueued = await errorOf(queue.enqueue("echoer", "echo x", { sessionId: lone }));
      expect(enqueued).toMatchObject({ name: "InvalidOptionError", option: "sessionId" });
      expect(enqueued.message).toMatch(/^EnqueueOptions: .*lone surrogate/);
      const resumed = await errorOf(queue.resume(lone));
      expect(resumed).toMatchObject({ name: "InvalidOptionError", option: "sessionId" });
      expect(resumed.message).toMatch(/^resume\(\): .*lone surrogate/);
      // A session with a run on this queue, so that a resume would be queued.
      const keys = new RunKeys("lattice", name);
      await client.hset(keys.session("ops"), { runId: "run-ops", agentName: "echoer" });
      let deep: Record<string, unknown> = { a: 1 };
      for (let level = 0; level < 5_000; level++) deep = { a: deep };
      for (const [input, rule] of [
        [deep, /nested more than 100 levels deep/],
        [{ service: "api", version: 1n }, /input\.version is a bigint/],
        [{ service: "api", toJSON: () => deep }, /input\.toJSON is a function/],
      ] as const) {
        const error = await errorOf(
          queue.resume("ops", { decisions: { appr_1: { approved: true, input } }, timeoutMs: 200 }),
        );
        expect(error).toMatchObject({ name: "InvalidOptionError", option: "decisions" });
        expect(error.message).toMatch(/^QueueResumeOptions: /);
        expect(error.message).toMatch(rule);
      }
      // Nothing was queued: no job, no run.
      expect(await client.keys(`lattice:${name}:run:*`)).toEqual([]);
      expect(await client.keys(`lattice:${name}:runs:run:*`)).toEqual([]);
    } finally {
      client.disconnect();
      await close();
    }
  });

  it("D3: a malformed Redis URL is refused at once by createRunQueue and createRunWorker, with InvalidOptionError showing it redacted", () => {
    const worker = (connection: string) => () =>
      createRunWorker({
        connection,
        agents: { echoer: agentOptions() },
        sessionStore: memorySessionStore(),
      });
    for (const [url, shown] of [
      ["redis://:hunter2@127.0.0.1:99999", "redis://***@127.0.0.1:99999"],
      ["redis//:hunter2@127.0.0.1:6379", "redis//***@127.0.0.1:6379"],
      ["localhost:99999", "localhost:99999"],
      ["http://user:hunter2@127.0.0.1:6379", "http://user:***@127.0.0.1:6379/"],
      ["redis://127.0.0.1:6379/db?password=hunter2", "redis://127.0.0.1:6379/db?password=***"],
    ] as const) {
      for (const create of [() => createRunQueue({ connection: url }), worker(url)]) {
        let error: (Error & Record<string, unknown>) | undefined;
        try {
          create();
        } catch (caught) {
          error = caught as Error & Record<string, unknown>;
        }
        expect(error, url).toMatchObject({ name: "InvalidOptionError", code: "invalid_option" });
        expect(error!.message).toContain(`received "${shown}"`);
        expect(error!.message).toContain('Pass a Redis URL ("redis://127.0.0.1:6379"');
        expect(error!.message).not.toContain("hunter2");
      }
    }
  });
});
