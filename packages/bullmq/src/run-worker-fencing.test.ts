/**
 * H28 and D4–D9 on one worker in this process: what a worker does around a lost or lagging
 * session lease — its writes after a step, its failed runs, a store whose fence is ahead of
 * Redis's, a conflict with the last append of a worker that lost the lease, fanned-out calls.
 */
import {
  type AgentOptions,
  memorySessionStore,
  SessionConflictError,
  type SessionEntry,
  type SessionStore,
} from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createRunQueue, createRunWorker, type RunWorkerOptions } from "./index.js";
import { RunKeys, stepJobId } from "./keys.js";

let redis: RedisServer;
let model: ScriptedModelServer;
let admin: Redis;
beforeAll(async () => {
  redis = await startRedis();
  admin = new Redis(redis.url);
  // A prompt "call <tool>" → one call of that tool, then the text "finished".
  model = await createScriptedModelServer({
    respond: (request) => {
      const messages = (request.body as { messages: { content: unknown }[] }).messages;
      const last = messages.at(-1)!.content;
      if (typeof last !== "string") return { content: [{ type: "text", text: "finished" }] };
      const name = last.split(" ")[1]!;
      return { content: [{ type: "tool_use", id: `use_${name}`, name, input: {} }] };
    },
  });
});
afterAll(async () => {
  await model?.close();
  admin?.disconnect();
  await redis?.stop();
});

const noop = tool("noop", "Does nothing", z.object({}), () => ({ content: "ok" }));

let queues = 0;
/** A queue and one worker on it, with a "worker" agent calling `tools`; `errors` gets onError's. */
function setup(options: {
  readonly store?: SessionStore;
  readonly tools?: AgentOptions["tools"];
  readonly worker?: Partial<RunWorkerOptions>;
  /** Attempts of each step job, the queue's and the worker's. Default 5. */
  readonly attempts?: number;
}) {
  const name = `fenced-${queues++}`;
  const errors: (Error & { code?: string })[] = [];
  const attempts = { stepAttempts: options.attempts ?? 5, stepBackoffMs: 50 };
  const queue = createRunQueue({ connection: redis.url, name, ...attempts });
  const worker = createRunWorker({
    connection: redis.url,
    name,
    agents: {
      worker: {
        apiKey: "sk-test-fenced",
        baseURL: model.anthropicBaseURL,
        model: "scripted",
        tools: options.tools ?? [noop],
      },
    },
    sessionStore: options.store ?? memorySessionStore(),
    lockDurationMs: 2_000,
    leaseMs: 600,
    ...attempts,
    onError: (error) => errors.push(error),
    ...options.worker,
  });
  return {
    name,
    queue,
    errors,
    keys: new RunKeys("lattice", name),
    close: async () => {
      await worker.close();
      await queue.close();
    },
  };
}

async function waitFor(what: string, probe: () => Promise<boolean> | boolean, timeoutMs = 10_000) {
  const deadline = performance.now() + timeoutMs;
  while (!(await probe())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A memory store whose `append` is watched by `after` once it succeeded. */
function watchedStore(
  after: (sessionId: string, entries: readonly SessionEntry[], fence?: number) => Promise<void>,
): SessionStore {
  const inner = memorySessionStore();
  return {
    ...inner,
    async append(sessionId, version, entries, options) {
      const appended = await inner.append(sessionId, version, entries, options);
      await after(sessionId, entries, options?.fence);
      return appended;
    },
  };
}

describe("a worker around a lost or lagging session lease (H28)", () => {
  it("H28: a worker that lost its lease in Redis after its step was stored writes no run state and adds no next job, so queue.abort() still ends the run the new holder parked", async () => {
    let fixture: ReturnType<typeof setup> | undefined;
    let armed = true;
    let parked = false;
    const store = watchedStore(async (sessionId, entries) => {
      if (!armed || !entries.some((entry) => entry.type === "reply")) return;
      armed = false;
      // Meanwhile another worker took the lease over, ran the next step, and parked the run
      // for approvals: this worker was frozen right after storing its step.
      const runId = (entries[0] as { runId: string }).runId;
      await admin.set(fixture!.keys.lease(sessionId), "another-worker", "PX", 60_000);
      await admin.hset(fixture!.keys.run(runId), "state", "interrupted");
      parked = true;
    });
    fixture = setup({ store });
    const { queue, errors, keys } = fixture;
    try {
      const { runId } = await queue.enqueue("worker", "call noop", { sessionId: "parked" });
      const state = () => admin.hget(keys.run(runId), "state");
      await waitFor(
        "the stale worker to drop its step or write its state",
        async () =>
          errors.some((error) => error.code === "session_fenced") ||
          (parked && (await state()) !== "interrupted"),
      );
      expect(await state()).toBe("interrupted");
      expect(await admin.exists(`lattice:${fixture.name}:${stepJobId(runId, 1)}`)).toBe(0);
      await queue.abort(runId, "stop it");
      expect(await state()).toBe("aborted");
      await expect(queue.result(runId, { timeoutMs: 5_000 })).rejects.toMatchObject({
        code: "run_aborted",
      });
    } finally {
      await fixture.close();
    }
  });

  it("H28: a run whose step fails on its last attempt is ended under the session's lease: its end carries a fence", async () => {
    const fences: (number | undefined)[] = [];
    const inner = memorySessionStore();
    const store: SessionStore = {
      ...inner,
      async append(sessionId, version, entries, options) {
        if (entries.some((entry) => entry.type === "reply")) throw new Error("disk full");
        if (entries.some((entry) => entry.type === "run_finished")) fences.push(options?.fence);
        return inner.append(sessionId, version, entries, options);
      },
    };
    const { queue, close } = setup({ store, attempts: 1 });
    try {
      const { runId } = await queue.enqueue("worker", "call noop");
      const result = await queue.result(runId, { timeoutMs: 10_000 });
      expect(result).toMatchObject({ subtype: "error_during_execution" });
      expect(result.errors.join(" ")).toContain("disk full");
      expect(fences).toHaveLength(1);
      expect(typeof fences[0]).toBe("number");
    } finally {
      await close();
    }
  });

  it("H28: a session store whose fence is ahead of Redis's (a failover, a FLUSHALL, a clock stepped back) is reported once and the run goes on, instead of retrying for ever", async () => {
    const store = memorySessionStore();
    // The store saw a lease an hour ahead of what Redis's clock gives now.
    const ahead = (Date.now() + 3_600_000) * 1_000;
    await store.append("ahead", 0, [], { fence: ahead });
    const { queue, errors, close } = setup({ store });
    try {
      const { runId } = await queue.enqueue("worker", "call noop", { sessionId: "ahead" });
      expect(await queue.result(runId, { timeoutMs: 10_000 })).toMatchObject({
        subtype: "success",
        result: "finished",
      });
      const behind = errors.filter((error) => error.code === "fence_behind");
      expect(behind).toHaveLength(1);
      expect(behind[0]!.message).toContain(`fence ${ahead}`);
    } finally {
      await close();
    }
  });

  it("H28: a step whose fence raise conflicts with the last append of a worker that lost the lease is tried again at once, without counting an attempt", async () => {
    const inner = memorySessionStore();
    let raises = 0;
    const store: SessionStore = {
      ...inner,
      async append(sessionId, version, entries, options) {
        // The second step's raise: the old holder's last append landed just before it.
        if (entries.length === 0 && options?.fence !== undefined && ++raises === 2) {
          throw new SessionConflictError(sessionId, version, version + 1);
        }
        return inner.append(sessionId, version, entries, options);
      },
    };
    const { queue, close } = setup({ store, attempts: 1 });
    try {
      const { runId } = await queue.enqueue("worker", "call noop");
      expect(await queue.result(runId, { timeoutMs: 10_000 })).toMatchObject({
        subtype: "success",
      });
      expect(raises).toBeGreaterThan(2);
    } finally {
      await close();
    }
  });

  it("D6, H28: a fanned-out call job keeps running when its step's worker loses the lease, and the step taken over waits for the same job", async () => {
    let runs = 0;
    let aborted = false;
    let finish!: () => void;
    const finished = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const slow = tool(
      "slow",
      "Takes a while",
      z.object({}),
      async (_input, { signal }) => {
        runs++;
        signal.addEventListener("abort", () => {
          aborted = true;
        });
        await finished;
        return { content: "slow done" };
      },
      { isConcurrencySafe: () => true },
    );
    const { queue, errors, keys, close } = setup({
      tools: [slow],
      worker: { fanOutTools: ["slow"] },
    });
    try {
      const { runId } = await queue.enqueue("worker", "call slow", { sessionId: "fanned" });
      await waitFor("the call job to start", () => runs === 1);
      // The step's worker loses the session's lease (its renewal finds it gone).
      await admin.del(keys.lease("fanned"));
      await waitFor(
        "the step to be dropped",
        () => aborted || errors.some((error) => error.code === "session_fenced"),
      );
      // Any abort the dropped step sent would have reached the call job by now.
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(aborted).toBe(false);
      finish();
      expect(await queue.result(runId, { timeoutMs: 10_000 })).toMatchObject({
        subtype: "success",
      });
      expect(runs).toBe(1);
    } finally {
      finish();
      await close();
    }
  });
});

describe("what a worker's session store must do (H28)", () => {
  it("H28: createRunWorker refuses a session store that does not declare fencedAppends, saying what to do", () => {
    const { fencedAppends: _, ...unfenced } = memorySessionStore();
    let error: (Error & { code?: string }) | undefined;
    try {
      createRunWorker({
        connection: redis.url,
        agents: { worker: { apiKey: "sk-test", model: "scripted" } },
        sessionStore: unfenced,
      });
    } catch (caught) {
      error = caught as Error & { code?: string };
    }
    expect(error).toMatchObject({ name: "InvalidOptionError", code: "invalid_option" });
    expect(error!.message).toContain("fencedAppends: true");
    expect(error!.message).toContain("sessionStoreConformance");
  });
});
