import { type AnyToolDefinition, createToolDefinition, tool } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { DEFAULT_ABORT_GRACE_MS, runToolBatch } from "./run-tool-batch.js";
import type { ToolBatchEvent } from "./tool-batch-event.js";

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const toolMap = (...definitions: AnyToolDefinition[]) =>
  new Map(definitions.map((definition) => [definition.name, definition]));

/** A tool whose handler ignores its signal and never settles. */
const stuck = tool("stuck", "Never ends", z.object({}), () => new Promise<never>(() => {}), {
  isConcurrencySafe: () => true,
});

/** A tool whose handler stops when its signal aborts. */
const polite = tool(
  "polite",
  "Stops on abort",
  z.object({}),
  (_input, { signal }) =>
    new Promise<never>((_resolve, reject) => {
      signal.addEventListener("abort", () => reject(signal.reason));
    }),
  { isConcurrencySafe: () => true },
);

describe("abort grace (H5)", () => {
  it("H5: the batch settles abortGraceMs after the abort although a handler never settles; it is reported abandoned", async () => {
    const controller = new AbortController();
    const events: ToolBatchEvent[] = [];
    const pending = runToolBatch({
      calls: [
        { id: "a", name: "stuck", input: {} },
        { id: "b", name: "polite", input: {} },
      ],
      tools: toolMap(stuck, polite),
      signal: controller.signal,
      abortGraceMs: 100,
      onEvent: (event) => events.push(event),
    });
    await delay(20);
    const abortedAt = performance.now();
    controller.abort();
    const batch = await pending;
    const elapsed = performance.now() - abortedAt;
    expect(elapsed).toBeGreaterThanOrEqual(90);
    expect(elapsed).toBeLessThan(1000);
    expect(batch.aborted).toBe(true);
    expect(batch.results.map((outcome) => outcome.status)).toEqual(["abandoned", "failed"]);
    expect(batch.results[0]?.result.isError).toBe(true);
    expect(batch.results[0]?.result.content[0]).toMatchObject({
      text: expect.stringContaining(
        'Tool "stuck" (a) was abandoned: the query was aborted and its handler had not settled 100 ms later.',
      ),
    });
    const finished = events.filter((event) => event.type === "tool_call_finished");
    expect(finished.map((event) => event.id).sort()).toEqual(["a", "b"]);
  });

  it("H5: with abortGraceMs Infinity the batch waits for every started handler (T22 before H5)", async () => {
    const controller = new AbortController();
    let release: () => void = () => {};
    const slow = tool(
      "slow",
      "Ends when released",
      z.object({}),
      () =>
        new Promise<{ content: string }>(
          (resolve) => (release = () => resolve({ content: "late" })),
        ),
    );
    const pending = runToolBatch({
      calls: [{ id: "a", name: "slow", input: {} }],
      tools: toolMap(slow),
      signal: controller.signal,
      abortGraceMs: Number.POSITIVE_INFINITY,
    });
    await delay(10);
    controller.abort();
    let settled = false;
    void pending.then(() => (settled = true));
    await delay(150);
    expect(settled).toBe(false);
    release();
    const batch = await pending;
    expect(batch.results[0]?.status).toBe("completed");
  });

  it("H5: the default grace is 5 s", () => {
    expect(DEFAULT_ABORT_GRACE_MS).toBe(5000);
  });
});

describe("listeners and hooks that fail (H1, H2)", () => {
  it("H1: an async onEvent that rejects is ignored, never an unhandled rejection", async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      const echo = tool("echo", "Echo", z.object({ text: z.string() }), ({ text }) => ({
        content: text,
      }));
      const batch = await runToolBatch({
        calls: [{ id: "a", name: "echo", input: { text: "hi" } }],
        tools: toolMap(echo),
        onEvent: async () => {
          throw new Error("listener down");
        },
      });
      expect(batch.results[0]?.status).toBe("completed");
      await delay(20);
    } finally {
      process.off("unhandledRejection", listener);
    }
    expect(unhandled).toEqual([]);
  });

  it("H2: beforeCall gets a frozen copy; changing it (now or later) never reaches the handler, which gets a validated input", async () => {
    const received: unknown[] = [];
    const read = tool(
      "read",
      "Read",
      z.object({ path: z.string().startsWith("src/"), options: z.unknown() }),
      async (input) => {
        await delay(20);
        received.push(structuredClone(input));
        return { content: "ok" };
      },
    );
    let kept: { path: string; options: { deep: string } } | undefined;
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { path: "src/a.ts", options: { deep: "x" } } },
        { id: "b", name: "read", input: { path: "src/b.ts", options: { deep: "y" } } },
      ],
      tools: toolMap(read),
      beforeCall: (call) => {
        if (call.id === "a") {
          kept = call.input as typeof kept;
          return undefined;
        }
        (call.input as { path: string }).path = "/etc/passwd";
        return undefined;
      },
    });
    expect(Object.isFrozen(kept)).toBe(true);
    expect(Object.isFrozen(kept?.options)).toBe(true);
    expect(batch.results.map((outcome) => outcome.status)).toEqual(["completed", "denied"]);
    expect(received).toEqual([{ path: "src/a.ts", options: { deep: "x" } }]);
  });

  it("H2: when the validated input cannot be copied, the hook sees a frozen copy of the raw input and the handler the validated one", async () => {
    const received: unknown[] = [];
    const seen: unknown[] = [];
    // The transform puts a function in the validated input: structuredClone refuses it.
    const read = createToolDefinition({
      name: "read",
      description: "Read",
      schema: z
        .object({ path: z.string().startsWith("src/") })
        .transform((value) => ({ ...value, resolve: () => value.path })),
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      kind: "tool",
      handler: async (input) => {
        received.push(input.path, typeof input.resolve);
        return { content: "ok" };
      },
    });
    const batch = await runToolBatch({
      calls: [
        { id: "a", name: "read", input: { path: "src/a.ts" } },
        { id: "b", name: "read", input: { path: "src/b.ts" } },
      ],
      tools: toolMap(read),
      concurrency: { mode: "sequential", maxConcurrency: 1 },
      beforeCall: (call) => {
        seen.push(call.input);
        if (call.id === "b") (call.input as { path: string }).path = "/etc/passwd";
        return undefined;
      },
    });
    expect(seen).toEqual([{ path: "src/a.ts" }, { path: "src/b.ts" }]);
    expect(batch.results.map((outcome) => outcome.status)).toEqual(["completed", "denied"]);
    expect(received).toEqual(["src/a.ts", "function"]);
  });

  it("H2: an { input } the hook returns that cannot be copied is refused, not run", async () => {
    let ran = false;
    const read = tool("read", "Read", z.object({ path: z.string() }).passthrough(), () => {
      ran = true;
      return { content: "ok" };
    });
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "read", input: { path: "src/a.ts" } }],
      tools: toolMap(read),
      beforeCall: () => ({ input: { path: "src/a.ts", later: () => "/etc/shadow" } }),
    });
    expect(ran).toBe(false);
    expect(batch.results[0]?.status).toBe("denied");
    expect(batch.results[0]?.result.content[0]).toMatchObject({
      text: expect.stringContaining("returned an input that cannot be copied"),
    });
  });

  it("H2: a batch policy that keeps the model's input cannot change it later (it is frozen)", async () => {
    const received: unknown[] = [];
    // A schema that returns its input as is (not a Zod object): a change to the raw input
    // after validation would reach the handler.
    const passthrough = createToolDefinition({
      name: "raw",
      description: "Raw",
      schema: {
        "~standard": {
          version: 1,
          vendor: "test",
          validate: (value: unknown) => ({ value: value as { path: string } }),
          types: undefined as unknown as { input: { path: string }; output: { path: string } },
        },
      },
      inputSchema: { type: "object", properties: { path: { type: "string" } } },
      kind: "tool",
      handler: async (input) => {
        await delay(20);
        received.push(input.path);
        return { content: "ok" };
      },
    });
    let kept: { path: string } | undefined;
    let changeFailed = false;
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "raw", input: { path: "rel.txt" } }],
      tools: toolMap(passthrough),
      policy: {
        validate: ({ toolCalls }) => {
          kept = toolCalls[0]?.input as { path: string };
          setTimeout(() => {
            try {
              kept!.path = "/etc/passwd";
            } catch {
              changeFailed = true;
            }
          }, 5);
          return { allowed: true };
        },
      },
    });
    expect(batch.results[0]?.status).toBe("completed");
    expect(received).toEqual(["rel.txt"]);
    expect(changeFailed).toBe(true);
  });
});

describe("input the provider could not use (H6)", () => {
  it("H6: a call with inputError is answered invalid_input and never runs", async () => {
    let ran = false;
    const sink = tool("sink", "Sink", z.object({}).passthrough(), () => {
      ran = true;
      return { content: "ran" };
    });
    const batch = await runToolBatch({
      calls: [{ id: "a", name: "sink", input: {}, inputError: "too deep" }],
      tools: toolMap(sink),
    });
    expect(ran).toBe(false);
    expect(batch.results[0]).toMatchObject({
      status: "invalid_input",
      result: { isError: true, content: [{ type: "text", text: "too deep" }] },
    });
  });
});

describe("isConcurrencySafe that returns a promise (H1)", () => {
  it("H1: an async isConcurrencySafe is not `true` (the call runs alone), and its rejection is never unhandled", async () => {
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      const odd = tool("odd", "Odd rule", z.object({}), () => ({ content: "ok" }), {
        isConcurrencySafe: (async () => {
          throw new Error("rule store down");
        }) as unknown as () => boolean,
      });
      const batch = await runToolBatch({
        calls: [
          { id: "a", name: "odd", input: {} },
          { id: "b", name: "odd", input: {} },
        ],
        tools: toolMap(odd),
      });
      expect(batch.plan.runs.every((run) => !run.concurrent)).toBe(true);
      expect(batch.results.map((outcome) => outcome.status)).toEqual(["completed", "completed"]);
      await delay(20);
    } finally {
      process.off("unhandledRejection", listener);
    }
    expect(unhandled).toEqual([]);
  });
});

describe("a batch whose caller may no longer start calls (H28)", () => {
  /** A call that records its start and ends at once; unsafe, so calls run one at a time. */
  const recorder = (started: string[]) =>
    tool("record", "Records its start", z.object({ n: z.number() }), ({ n }) => {
      started.push(`call ${n}`);
      return { content: `${n}` };
    });

  it("H28: once mayStartCall answers false no further call starts: no tool_call_started event, the calls not started are settled cancelled, and the batch is not aborted", async () => {
    const started: string[] = [];
    const events: ToolBatchEvent[] = [];
    let allowed = 1;
    const batch = await runToolBatch({
      calls: [1, 2, 3].map((n) => ({ id: `c${n}`, name: "record", input: { n } })),
      tools: toolMap(recorder(started)),
      mayStartCall: () => allowed-- > 0,
      onEvent: (event) => events.push(event),
    });
    expect(started).toEqual(["call 1"]);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "cancelled",
      "cancelled",
    ]);
    expect(batch.aborted).toBe(false);
    expect(batch.results[1]?.result.content[0]).toMatchObject({
      text: expect.stringContaining("cancelled before it started"),
    });
    expect(
      events.filter((event) => event.type === "tool_call_started").map((event) => event.id),
    ).toEqual(["c1"]);
    // Asked once per call it let start, and once more: then never again.
    expect(allowed).toBe(-1);
  });

  it("H28: a pool of concurrency-safe calls starts none once mayStartCall answers false, and the handlers' contexts are never made", async () => {
    const started: string[] = [];
    let contexts = 0;
    const safe = tool(
      "safe",
      "Records its start",
      z.object({ n: z.number() }),
      ({ n }) => {
        started.push(`call ${n}`);
        return { content: `${n}` };
      },
      { isConcurrencySafe: () => true },
    );
    const batch = await runToolBatch({
      calls: [1, 2, 3].map((n) => ({ id: `c${n}`, name: "safe", input: { n } })),
      tools: toolMap(safe),
      mayStartCall: () => false,
      createContext: (call, _definition, signal) => {
        contexts++;
        return { signal, toolUseId: call.id, toolName: call.name };
      },
    });
    expect(started).toEqual([]);
    expect(contexts).toBe(0);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "cancelled",
      "cancelled",
      "cancelled",
    ]);
  });
});
