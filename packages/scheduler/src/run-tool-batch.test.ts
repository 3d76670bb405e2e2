import {
  type AnyToolDefinition,
  createToolDefinition,
  type ToolContext,
  ToolInputError,
  tool,
} from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { runToolBatch } from "./run-tool-batch.js";
import type { ToolBatchEvent } from "./tool-batch-event.js";

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const toolMap = (...definitions: AnyToolDefinition[]) =>
  new Map(definitions.map((definition) => [definition.name, definition]));
const sleepSchema = z.object({ ms: z.number().int().min(0), label: z.string().default("") });

/** A tool that sleeps `ms` and records when it ran; `safe` sets its concurrency rule. */
function sleeper(name: string, safe: boolean | undefined, log: Array<[string, string]>) {
  return tool(
    name,
    "Sleeps",
    sleepSchema,
    async ({ ms, label }, context) => {
      log.push(["start", context.toolUseId]);
      await delay(ms);
      log.push(["end", context.toolUseId]);
      if (label === "fail") throw new Error(`${context.toolUseId} broke`);
      return { content: `${name}:${label || context.toolUseId}` };
    },
    safe === undefined ? undefined : { isConcurrencySafe: () => safe },
  );
}

/** Resolves like `promise`, or fails the test when it is still pending after `ms`. */
function settlesWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`still pending after ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const text = (outcome: { result: { content: readonly { type: string; text?: string }[] } }) =>
  outcome.result.content.map((block) => block.text ?? "").join("\n");

describe("runToolBatch", () => {
  it("T15: four 300 ms safe calls overlap and finish well under 1200 ms", async () => {
    const log: Array<[string, string]> = [];
    const read = sleeper("read", true, log);
    const started = performance.now();
    const batch = await runToolBatch({
      calls: ["a", "b", "c", "d"].map((id) => ({ id, name: "read", input: { ms: 300 } })),
      tools: toolMap(read),
    });
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(295);
    expect(elapsed).toBeLessThan(900);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "completed",
      "completed",
      "completed",
    ]);
    expect(log.slice(0, 4).every(([kind]) => kind === "start")).toBe(true);
  });

  it("T15: unsafe calls run alone, in order, between runs of safe calls", async () => {
    const log: Array<[string, string]> = [];
    const tools = toolMap(sleeper("read", true, log), sleeper("write", undefined, log));
    const batch = await runToolBatch({
      calls: [
        { id: "r1", name: "read", input: { ms: 40 } },
        { id: "r2", name: "read", input: { ms: 20 } },
        { id: "w1", name: "write", input: { ms: 10 } },
        { id: "r3", name: "read", input: { ms: 10 } },
        { id: "r4", name: "read", input: { ms: 5 } },
      ],
      tools,
    });
    expect(log).toEqual([
      ["start", "r1"],
      ["start", "r2"],
      ["end", "r2"],
      ["end", "r1"],
      ["start", "w1"],
      ["end", "w1"],
      ["start", "r3"],
      ["start", "r4"],
      ["end", "r4"],
      ["end", "r3"],
    ]);
    expect(batch.plan.runs).toEqual([
      { concurrent: true, indices: [0, 1] },
      { concurrent: false, indices: [2] },
      { concurrent: true, indices: [3, 4] },
    ]);
  });

  it("T15: a call with invalid input runs on its own and never reaches its handler (T3)", async () => {
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { ms: 10 } },
        { id: "bad", name: "read", input: { ms: "soon" } },
        { id: "c", name: "read", input: { ms: 10 } },
      ],
      tools: toolMap(sleeper("read", true, log)),
    });
    expect(log).toEqual([
      ["start", "a"],
      ["end", "a"],
      ["start", "c"],
      ["end", "c"],
    ]);
    const bad = batch.results[1]!;
    expect(bad.status).toBe("invalid_input");
    expect(bad.result.isError).toBe(true);
    expect(bad.result.error).toBeInstanceOf(ToolInputError);
    expect(text(bad)).toBe((bad.result.error as ToolInputError).message);
    expect(text(bad)).toMatch(/^Invalid input for tool "read":\n- ms: /);
    expect(bad.input).toEqual({ ms: "soon" });
    expect(bad.startedAt).toBeUndefined();
  });

  it("T13: the handler and the rule get the validated input (defaults applied)", async () => {
    const ruleSaw: unknown[] = [];
    const echo = tool(
      "echo",
      "Echo",
      z.object({ word: z.string().default("hi") }),
      async ({ word }) => ({ content: word }),
      {
        isConcurrencySafe: (input) => {
          ruleSaw.push(input);
          return true;
        },
      },
    );
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "echo", input: {} }],
      tools: toolMap(echo),
    });
    expect(ruleSaw).toEqual([{ word: "hi" }]);
    expect(batch.results[0]!.input).toEqual({ word: "hi" });
    expect(text(batch.results[0]!)).toBe("hi");
  });

  it("T20: keeps tool_use order when handlers finish out of order", async () => {
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [60, 10, 40, 0, 25].map((ms, index) => ({
        id: `c${index}`,
        name: "read",
        input: { ms },
      })),
      tools: toolMap(sleeper("read", true, log)),
    });
    expect(log.filter(([kind]) => kind === "end").map(([, id]) => id)).toEqual([
      "c3",
      "c1",
      "c4",
      "c2",
      "c0",
    ]);
    expect(batch.results.map((outcome) => outcome.id)).toEqual(["c0", "c1", "c2", "c3", "c4"]);
    expect(batch.results.map(text)).toEqual([
      "read:c0",
      "read:c1",
      "read:c2",
      "read:c3",
      "read:c4",
    ]);
  });

  it("T21: one handler failing never loses the others' results (T6)", async () => {
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { ms: 30 } },
        { id: "b", name: "read", input: { ms: 5, label: "fail" } },
        { id: "c", name: "read", input: { ms: 15 } },
      ],
      tools: toolMap(sleeper("read", true, log)),
    });
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "failed",
      "completed",
    ]);
    expect(batch.results[1]!.result.isError).toBe(true);
    expect(text(batch.results[1]!)).toBe("b broke");
    expect(text(batch.results[0]!)).toBe("read:a");
    expect(text(batch.results[2]!)).toBe("read:c");
  });

  it("T17, T14: never more than maxConcurrency handlers in flight, however many calls the model sends", async () => {
    let inFlight = 0;
    let peak = 0;
    const busy = tool(
      "busy",
      "Busy",
      z.object({ ms: z.number() }),
      async ({ ms }) => {
        inFlight++;
        peak = Math.max(peak, inFlight);
        await delay(ms);
        inFlight--;
        return { content: "ok" };
      },
      { isConcurrencySafe: () => true },
    );
    const started = performance.now();
    const batch = await runToolBatch({
      calls: Array.from({ length: 30 }, (_, index) => ({
        id: `c${index}`,
        name: "busy",
        input: { ms: 50 },
      })),
      tools: toolMap(busy),
      concurrency: { mode: "safe", maxConcurrency: 3 },
    });
    expect(peak).toBe(3);
    expect(batch.results).toHaveLength(30);
    // 10 waves of 50 ms: at least 500 ms, and well under the 1 500 ms of a sequential run.
    const elapsed = performance.now() - started;
    expect(elapsed).toBeGreaterThanOrEqual(490);
    expect(elapsed).toBeLessThan(1_400);
  });

  it('T18: "all" overlaps even unsafe calls; "sequential" runs one at a time', async () => {
    const log: Array<[string, string]> = [];
    const tools = toolMap(sleeper("write", undefined, log), sleeper("read", true, log));
    const calls = [
      { id: "a", name: "write", input: { ms: 200 } },
      { id: "b", name: "write", input: { ms: 200 } },
      { id: "c", name: "read", input: { ms: 200 } },
    ];
    let started = performance.now();
    await runToolBatch({ calls, tools, concurrency: { mode: "all", maxConcurrency: 10 } });
    expect(performance.now() - started).toBeLessThan(500);
    expect(log.slice(0, 3).map(([kind]) => kind)).toEqual(["start", "start", "start"]);

    log.length = 0;
    started = performance.now();
    const batch = await runToolBatch({
      calls: calls.map((call) => ({ ...call, input: { ms: 30 } })),
      tools,
      concurrency: { mode: "sequential", maxConcurrency: 10 },
    });
    expect(log.map(([kind, id]) => `${kind}:${id}`)).toEqual([
      "start:a",
      "end:a",
      "start:b",
      "end:b",
      "start:c",
      "end:c",
    ]);
    expect(batch.plan.runs).toHaveLength(3);
  });

  it("T19: settles only after the whole batch has finished", async () => {
    const log: Array<[string, string]> = [];
    const started = performance.now();
    const batch = await runToolBatch({
      calls: [
        { id: "fast", name: "read", input: { ms: 0 } },
        { id: "slow", name: "read", input: { ms: 150 } },
      ],
      tools: toolMap(sleeper("read", true, log)),
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(145);
    expect(log.at(-1)).toEqual(["end", "slow"]);
    expect(batch.results.every((outcome) => outcome.finishedAt >= outcome.queuedAt)).toBe(true);
  });

  it("T7: each handler's context carries the signal, its toolUseId and its tool name", async () => {
    const contexts: ToolContext[] = [];
    const probe = tool("probe", "Probe", z.object({}), async (_input, context) => {
      contexts.push(context);
      return { content: "ok" };
    });
    const controller = new AbortController();
    await runToolBatch({
      calls: [
        { id: "t1", name: "probe", input: {} },
        { id: "t2", name: "probe", input: {} },
      ],
      tools: toolMap(probe),
      signal: controller.signal,
    });
    expect(contexts.map((context) => [context.toolUseId, context.toolName])).toEqual([
      ["t1", "probe"],
      ["t2", "probe"],
    ]);
    expect(contexts[0]!.signal).toBe(controller.signal);

    contexts.length = 0;
    await runToolBatch({ calls: [{ id: "t3", name: "probe", input: {} }], tools: toolMap(probe) });
    expect(contexts[0]!.signal).toBeInstanceOf(AbortSignal);
    expect(contexts[0]!.signal.aborted).toBe(false);
  });

  it("T7: createContext builds a richer context; if it throws, only that call fails", async () => {
    const seen: unknown[] = [];
    const probe = tool("probe", "Probe", z.object({ n: z.number() }), async (_input, context) => {
      seen.push(context);
      return { content: "ok" };
    });
    const batch = await runToolBatch({
      calls: [
        { id: "t1", name: "probe", input: { n: 1 } },
        { id: "t2", name: "probe", input: { n: 2 } },
      ],
      tools: toolMap(probe),
      createContext: (call, definition) => {
        if (call.id === "t2") throw new Error("no session");
        return {
          signal: new AbortController().signal,
          toolUseId: call.id,
          toolName: definition.name,
          extra: call.input,
        } as ToolContext;
      },
    });
    expect(seen).toEqual([expect.objectContaining({ toolUseId: "t1", extra: { n: 1 } })]);
    expect(batch.results[1]!.status).toBe("failed");
    expect(text(batch.results[1]!)).toBe(
      'Tool "probe" could not start: creating its context failed: no session',
    );
  });

  it("T12: an unknown tool gets an is_error result naming the available tools, and runs alone", async () => {
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { ms: 5 } },
        { id: "b", name: "serach", input: { q: 1 } },
        { id: "c", name: "read", input: { ms: 5 } },
      ],
      tools: toolMap(sleeper("read", true, log), sleeper("write", undefined, log)),
    });
    const unknown = batch.results[1]!;
    expect(unknown).toMatchObject({ status: "unknown_tool", kind: "tool", input: { q: 1 } });
    expect(text(unknown)).toBe('Unknown tool "serach". Available tools: read, write.');
    expect(batch.plan.runs.map((run) => run.indices)).toEqual([[0], [1], [2]]);
    const none = await runToolBatch({
      calls: [{ id: "x", name: "x", input: {} }],
      tools: new Map(),
    });
    expect(text(none.results[0]!)).toBe('Unknown tool "x". No tools are available.');
  });

  it("T12: an empty batch settles at once with no results", async () => {
    const batch = await runToolBatch({ calls: [], tools: new Map() });
    expect(batch).toMatchObject({ results: [], aborted: false, decision: undefined });
    expect(batch.plan.runs).toEqual([]);
  });

  it("T9, T10, T11: the first endTurn in tool_use order is reported; the others still finish", async () => {
    const finisher = tool(
      "finish",
      "Finish",
      z.object({ ms: z.number(), answer: z.string() }),
      async ({ ms, answer }) => {
        await delay(ms);
        return { content: answer, endTurn: true, structuredResult: { answer } };
      },
      { isConcurrencySafe: () => true },
    );
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { ms: 40 } },
        { id: "b", name: "finish", input: { ms: 30, answer: "first" } },
        { id: "c", name: "finish", input: { ms: 0, answer: "second" } },
      ],
      tools: toolMap(sleeper("read", true, log), finisher),
    });
    expect(batch.endTurn).toEqual({
      index: 1,
      id: "b",
      text: "first",
      structuredResult: { answer: "first" },
    });
    expect(batch.results[0]!.status).toBe("completed");
    expect(batch.results[2]!.result.endTurn).toBe(true);
  });

  it("T22: started handlers see the abort, queued calls never start, and the batch settles after the started ones", async () => {
    const controller = new AbortController();
    const log: string[] = [];
    const waiter = tool(
      "wait",
      "Waits for the abort",
      z.object({}),
      async (_input, { signal, toolUseId }) => {
        log.push(`start:${toolUseId}`);
        await new Promise<void>((resolve) => signal.addEventListener("abort", () => resolve()));
        await delay(100);
        log.push(`end:${toolUseId}`);
        return { content: "stopped early", isError: true };
      },
      { isConcurrencySafe: () => true },
    );
    const calls = ["a", "b", "c", "d"].map((id) => ({ id, name: "wait", input: {} }));
    setTimeout(() => controller.abort("user pressed stop"), 50);
    const started = performance.now();
    const batch = await runToolBatch({
      calls,
      tools: toolMap(waiter),
      signal: controller.signal,
      concurrency: { mode: "safe", maxConcurrency: 2 },
    });
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
    expect(log).toEqual(["start:a", "start:b", "end:a", "end:b"]);
    expect(batch.aborted).toBe(true);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "failed",
      "failed",
      "cancelled",
      "cancelled",
    ]);
    const cancelled = batch.results[2]!;
    expect(cancelled.result.isError).toBe(true);
    expect(text(cancelled)).toBe(
      "This tool call was cancelled before it started: the query was aborted.",
    );
    expect((cancelled.result.error as Error).name).toBe("AbortError");
    expect(cancelled.startedAt).toBeUndefined();
  });

  it("T22: later runs never start after an abort; an already aborted signal starts nothing", async () => {
    const controller = new AbortController();
    const log: Array<[string, string]> = [];
    const tools = toolMap(sleeper("write", undefined, log));
    setTimeout(() => controller.abort(), 30);
    const batch = await runToolBatch({
      calls: ["a", "b", "c"].map((id) => ({ id, name: "write", input: { ms: 60 } })),
      tools,
      signal: controller.signal,
    });
    expect(log).toEqual([
      ["start", "a"],
      ["end", "a"],
    ]);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "cancelled",
      "cancelled",
    ]);

    log.length = 0;
    const again = await runToolBatch({
      calls: [{ id: "x", name: "write", input: { ms: 0 } }],
      tools,
      signal: controller.signal,
    });
    expect(log).toEqual([]);
    expect(again).toMatchObject({ aborted: true, results: [{ status: "cancelled" }] });
  });

  it("T22: an abort while the batch policy is pending settles the batch at once; validate gets the signal", async () => {
    const controller = new AbortController();
    const log: Array<[string, string]> = [];
    const seen: Array<AbortSignal | undefined> = [];
    setTimeout(() => controller.abort("user pressed stop"), 20);
    const batch = await settlesWithin(
      runToolBatch({
        calls: ["a", "b"].map((id) => ({ id, name: "read", input: { ms: 0 } })),
        tools: toolMap(sleeper("read", true, log)),
        signal: controller.signal,
        policy: {
          validate: ({ signal }) => {
            seen.push(signal);
            return new Promise<never>(() => {});
          },
        },
      }),
      1000,
    );
    expect(seen).toEqual([controller.signal]);
    expect(batch.aborted).toBe(true);
    expect(batch.decision).toBeUndefined();
    expect(batch.policyError).toBeUndefined();
    expect(batch.results.map((outcome) => outcome.status)).toEqual(["cancelled", "cancelled"]);
    expect(batch.results.every((outcome) => outcome.startedAt === undefined)).toBe(true);
    expect(log).toEqual([]);
  });

  it("T22: an abort while beforeCall is pending settles the batch at once; beforeCall gets the signal", async () => {
    const controller = new AbortController();
    const log: Array<[string, string]> = [];
    const asked: string[] = [];
    const seen: Array<AbortSignal | undefined> = [];
    setTimeout(() => controller.abort(), 20);
    const batch = await settlesWithin(
      runToolBatch({
        calls: [
          { id: "a", name: "read", input: { ms: 0 } },
          { id: "u", name: "missing", input: {} },
          { id: "b", name: "read", input: { ms: 0 } },
          { id: "c", name: "read", input: { ms: 0 } },
        ],
        tools: toolMap(sleeper("read", true, log)),
        signal: controller.signal,
        beforeCall: (call, context) => {
          asked.push(call.id);
          // Optional chaining: the check must hang, not throw, on a scheduler that passes none.
          seen.push(context?.signal);
          return call.id === "a" ? undefined : new Promise<never>(() => {});
        },
      }),
      1000,
    );
    expect(asked).toEqual(["a", "b"]);
    expect(seen).toEqual([controller.signal, controller.signal]);
    expect(batch.aborted).toBe(true);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "cancelled",
      "unknown_tool",
      "cancelled",
      "cancelled",
    ]);
    expect(batch.results.every((outcome) => outcome.startedAt === undefined)).toBe(true);
    expect(log).toEqual([]);
  });

  it("T22: a policy or beforeCall that stops on the abort cancels the calls instead of failing them", async () => {
    const stopOnAbort = (signal: AbortSignal | undefined) =>
      new Promise<never>((_resolve, reject) =>
        signal?.addEventListener("abort", () => reject(signal.reason)),
      );
    const log: Array<[string, string]> = [];
    const tools = toolMap(sleeper("read", true, log));
    const calls = [{ id: "a", name: "read", input: { ms: 0 } }];
    const first = new AbortController();
    setTimeout(() => first.abort(), 10);
    const policyBatch = await settlesWithin(
      runToolBatch({
        calls,
        tools,
        signal: first.signal,
        policy: { validate: ({ signal }) => stopOnAbort(signal) },
      }),
      1000,
    );
    const second = new AbortController();
    setTimeout(() => second.abort(), 10);
    const hookBatch = await settlesWithin(
      runToolBatch({
        calls,
        tools,
        signal: second.signal,
        beforeCall: (_call, { signal }) => stopOnAbort(signal),
      }),
      1000,
    );
    for (const batch of [policyBatch, hookBatch]) {
      expect(batch).toMatchObject({ aborted: true, results: [{ status: "cancelled" }] });
      expect(batch.policyError).toBeUndefined();
    }
    expect(log).toEqual([]);
  });

  it("without a signal, validate and beforeCall get one that never aborts", async () => {
    const seen: Array<AbortSignal | undefined> = [];
    await runToolBatch({
      calls: [{ id: "a", name: "read", input: { ms: 0 } }],
      tools: toolMap(sleeper("read", true, [])),
      policy: {
        validate: ({ signal }) => {
          seen.push(signal);
          return { allowed: true };
        },
      },
      beforeCall: (_call, { signal }) => {
        seen.push(signal);
        return undefined;
      },
    });
    expect(seen).toHaveLength(2);
    expect(seen.every((signal) => signal instanceof AbortSignal && !signal.aborted)).toBe(true);
  });

  it("reports queued, started and finished for every call on the injected clock", async () => {
    let clock = 0;
    const events: ToolBatchEvent[] = [];
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { ms: 0 } },
        { id: "b", name: "read", input: { ms: "x" } },
        { id: "c", name: "write", input: { ms: 0 } },
      ],
      tools: toolMap(sleeper("read", true, log), sleeper("write", false, log)),
      now: () => ++clock,
      onEvent: (event) => events.push(event),
    });
    expect(events.map((event) => `${event.type}${"id" in event ? `:${event.id}` : ""}`)).toEqual([
      "tool_call_queued:a",
      "tool_call_queued:b",
      "tool_call_queued:c",
      "batch_planned",
      "tool_call_started:a",
      "tool_call_finished:a",
      "tool_call_finished:b",
      "tool_call_started:c",
      "tool_call_finished:c",
    ]);
    const times = events.map((event) => event.time);
    expect(times).toEqual([...times].sort((x, y) => x - y));
    const finishedA = events.find(
      (event) => event.type === "tool_call_finished" && event.id === "a",
    );
    expect(finishedA).toMatchObject({ status: "completed", isError: false, durationMs: 1 });
    expect(batch.results[0]).toMatchObject({ queuedAt: 1, startedAt: 3, finishedAt: 4 });
    const started = events.find((event) => event.type === "tool_call_started");
    expect(started).toMatchObject({ runIndex: 0, inFlight: 1 });
  });

  it("a listener that throws never breaks the batch", async () => {
    const log: Array<[string, string]> = [];
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "read", input: { ms: 0 } }],
      tools: toolMap(sleeper("read", true, log)),
      onEvent: () => {
        throw new Error("listener broke");
      },
    });
    expect(batch.results[0]!.status).toBe("completed");
  });

  it("T23: kind comes from the definition", async () => {
    const agentTool = createToolDefinition({
      name: "researcher",
      description: "Delegates",
      schema: z.object({}),
      handler: async () => ({ content: "ok" }),
      kind: "agent_tool",
    });
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "researcher", input: {} }],
      tools: toolMap(agentTool),
    });
    expect(batch.results[0]!.kind).toBe("agent_tool");
  });
});

describe("runToolBatch beforeCall", () => {
  const echo = tool(
    "echo",
    "Echo",
    z.object({ word: z.string() }),
    async ({ word }) => ({ content: word }),
    {
      isConcurrencySafe: () => true,
    },
  );

  it("sees validated inputs in order; a deny answers the call without running it", async () => {
    const seen: unknown[] = [];
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "echo", input: { word: "one" } },
        { id: "b", name: "echo", input: { word: "two" } },
        { id: "c", name: "echo", input: { word: 3 } },
      ],
      tools: toolMap(echo),
      beforeCall: async (call) => {
        seen.push(call);
        return call.id === "b" ? { deny: "Not allowed in read-only mode." } : undefined;
      },
    });
    expect(seen).toEqual([
      { id: "a", name: "echo", input: { word: "one" }, kind: "tool" },
      { id: "b", name: "echo", input: { word: "two" }, kind: "tool" },
    ]);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "denied",
      "invalid_input",
    ]);
    expect(text(batch.results[1]!)).toBe("Not allowed in read-only mode.");
    expect(batch.plan.runs.map((run) => run.indices)).toEqual([[0], [1], [2]]);
  });

  it("a replaced input is validated again", async () => {
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "echo", input: { word: "one" } },
        { id: "b", name: "echo", input: { word: "two" } },
      ],
      tools: toolMap(echo),
      beforeCall: (call) => (call.id === "a" ? { input: { word: "uno" } } : { input: { word: 2 } }),
    });
    expect(text(batch.results[0]!)).toBe("uno");
    expect(batch.results[0]!.input).toEqual({ word: "uno" });
    expect(batch.results[1]).toMatchObject({ status: "invalid_input", input: { word: 2 } });
  });

  it("a hook that throws or answers nonsense fails only its call, naming the hook", async () => {
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "echo", input: { word: "one" } },
        { id: "b", name: "echo", input: { word: "two" } },
        { id: "c", name: "echo", input: { word: "three" } },
      ],
      tools: toolMap(echo),
      beforeCall: (call) => {
        if (call.id === "a") throw new Error("hook crashed");
        if (call.id === "b") return "yes" as never;
        return undefined;
      },
    });
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "denied",
      "denied",
      "completed",
    ]);
    expect(text(batch.results[0]!)).toBe(
      'Tool call "echo" (a) did not run: the beforeToolCall hook failed: hook crashed',
    );
    expect((batch.results[0]!.result.error as { code: string }).code).toBe("tool_call_hook_error");
    expect(text(batch.results[1]!)).toMatch(
      /the beforeToolCall hook returned "yes"; it must return/,
    );
  });
});

describe("runToolBatch onCallSettled", () => {
  it("reports each outcome once, in settle order, as soon as it is known; a throwing listener changes nothing", async () => {
    const log: Array<[string, string]> = [];
    const settled: string[] = [];
    const result = await runToolBatch({
      calls: [
        { id: "slow", name: "safe", input: { ms: 40 } },
        { id: "fast", name: "safe", input: { ms: 1 } },
        { id: "bad", name: "missing", input: {} },
      ],
      tools: toolMap(sleeper("safe", true, log)),
      onCallSettled: (outcome) => {
        settled.push(`${outcome.id}:${outcome.status}`);
        // Known before the batch ends: the slow call is still running when fast settles.
        if (outcome.id === "fast") expect(log).not.toContainEqual(["end", "slow"]);
        throw new Error("listener fault");
      },
    });
    expect(settled).toEqual(["fast:completed", "slow:completed", "bad:unknown_tool"]);
    expect(result.results.map((outcome) => outcome.id)).toEqual(["slow", "fast", "bad"]);
  });
});
