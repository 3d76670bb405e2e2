import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  createAgent,
  createBareAgent,
  PARALLEL_TOOL_CALLS_GUIDANCE,
  type SDKMessage,
  type SDKUserMessage,
  type TraceEvent,
} from "./index.js";
import { checkAgentOptions, prepareAgent } from "./prepare-agent.js";
import { runAgent } from "./run-agent.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const API_KEY = "sk-test-secret-key-123";

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: API_KEY,
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    maxTurns: 10,
    ...extra,
  };
}

async function collect(iterable: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => ({
  content: text,
}));

function delayed(name: string, log: string[], safe = true) {
  return tool(
    name,
    `Waits, then answers`,
    z.object({ ms: z.number(), label: z.string() }),
    async ({ ms, label }, { signal }) => {
      log.push(`start ${label}`);
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(resolve, ms);
        signal.addEventListener("abort", () => {
          clearTimeout(timer);
          log.push(`aborted ${label}`);
          reject(signal.reason);
        });
      });
      log.push(`end ${label}`);
      return { content: label };
    },
    safe ? { isConcurrencySafe: () => true } : undefined,
  );
}

/**
 * Aborts, then waits for `pending` to reject, at most 2 s (a hang fails the test rather than
 * timing it out). Resolves with the error and the time it took.
 */
async function abortAndSettle(
  controller: AbortController,
  pending: Promise<unknown>,
): Promise<{ error: unknown; elapsed: number }> {
  const started = performance.now();
  controller.abort();
  let timer: ReturnType<typeof setTimeout> | undefined;
  const error = await Promise.race([
    pending.then(
      () => new Error("resolved instead of rejecting"),
      (caught: unknown) => caught,
    ),
    new Promise<Error>((resolve) => {
      timer = setTimeout(() => resolve(new Error("still pending 2 s after the abort")), 2000);
    }),
  ]).finally(() => clearTimeout(timer));
  return { error, elapsed: performance.now() - started };
}

function userMessages(messages: SDKMessage[]): SDKUserMessage[] {
  return messages.filter((message): message is SDKUserMessage => message.type === "user");
}

function requestBody(index: number): {
  system?: string;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string }>;
} {
  return server.requests[index]?.body as never;
}

describe("the SDKMessage stream (T35)", () => {
  it("yields system/init, assistant, user and the result, in order", async () => {
    server.enqueue(
      {
        content: [
          { type: "text", text: "Let me echo." },
          { type: "tool_use", id: "toolu_a", name: "echo", input: { text: "hi" } },
        ],
      },
      {
        content: [{ type: "text", text: "It said hi." }],
        usage: { inputTokens: 7, outputTokens: 3 },
      },
    );
    const agent = createAgent(agentOptions({ tools: [echo] }));
    const messages = await collect(agent.query("Echo hi"));
    expect(messages.map((message) => message.type)).toEqual([
      "system",
      "assistant",
      "user",
      "assistant",
      "result",
    ]);
    const [init, assistant, user, , result] = messages;
    expect(init).toMatchObject({
      type: "system",
      subtype: "init",
      model: "scripted",
      tools: ["echo"],
      parentToolUseId: null,
    });
    const sessionId = (init as { sessionId: string }).sessionId;
    expect(sessionId).toMatch(/[0-9a-f-]{36}/);
    expect(messages.every((message) => message.sessionId === sessionId)).toBe(true);
    expect(assistant).toMatchObject({
      type: "assistant",
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "Let me echo." },
          { type: "tool_use", id: "toolu_a", name: "echo", input: { text: "hi" } },
        ],
      },
      stopReason: "tool_use",
    });
    expect(user).toMatchObject({
      type: "user",
      message: {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "toolu_a", content: [{ type: "text", text: "hi" }] },
        ],
      },
    });
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      result: "It said hi.",
      structuredResult: undefined,
      isError: false,
      numTurns: 2,
      errors: [],
    });
    expect((result as { usage: { inputTokens: number } }).usage.inputTokens).toBeGreaterThanOrEqual(
      7,
    );
    expect((result as { durationMs: number }).durationMs).toBeGreaterThan(0);
    // The second request carries the history: prompt, assistant turn, tool results.
    expect(requestBody(1).messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
    ]);
  });

  it("agent.run resolves with the result message", async () => {
    server.enqueue({ content: [{ type: "text", text: "Hello." }] });
    const result = await createAgent(agentOptions()).run("Hi");
    expect(result).toMatchObject({
      type: "result",
      subtype: "success",
      result: "Hello.",
      numTurns: 1,
    });
  });

  it("usage adds up over every turn", async () => {
    server.enqueue(
      {
        content: [{ type: "tool_use", name: "echo", input: { text: "a" } }],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
      { content: [{ type: "text", text: "ok" }], usage: { inputTokens: 20, outputTokens: 7 } },
    );
    const result = await createAgent(agentOptions({ tools: [echo] })).run("go");
    expect(result.usage).toEqual({
      inputTokens: 30,
      outputTokens: 12,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      // The conversation's size: the last call's input and output (C1).
      contextTokens: 27,
    });
  });

  it("includePartialMessages yields stream_event messages with the deltas", async () => {
    server.enqueue({ content: [{ type: "text", text: "streamed text" }], chunkSize: 4 });
    const messages = await collect(
      createAgent(agentOptions({ includePartialMessages: true })).query("Hi"),
    );
    const deltas = messages.flatMap((message) =>
      message.type === "stream_event" && message.event.type === "text_delta"
        ? [message.event.text]
        : [],
    );
    expect(deltas.join("")).toBe("streamed text");
    expect(deltas.length).toBeGreaterThan(1);
    server.enqueue({ content: [{ type: "text", text: "quiet" }] });
    const quiet = await collect(createAgent(agentOptions()).query("Hi"));
    expect(quiet.some((message) => message.type === "stream_event")).toBe(false);
  });
});

describe("ending the run from a tool (T8–T11)", () => {
  const finish = tool(
    "finish",
    "Submit the final answer",
    z.object({ answer: z.string() }),
    async ({ answer }) => ({
      content: answer,
      endTurn: true,
      structuredResult: { answer, confidence: 0.9 },
    }),
  );

  it("T8: endTurn ends the run with the tool's text and makes no further model call", async () => {
    server.enqueue({ content: [{ type: "tool_use", name: "finish", input: { answer: "42" } }] });
    const result = await createAgent(agentOptions({ tools: [finish] })).run("Answer");
    expect(result).toMatchObject({ subtype: "success", result: "42", isError: false, numTurns: 1 });
    expect(server.requests).toHaveLength(1);
  });

  it("T9: endTurn does not cancel the batch's other calls; their results, hooks and traces still happen", async () => {
    const log: string[] = [];
    const slow = delayed("slow", log);
    const seen: string[] = [];
    const traced: string[] = [];
    server.enqueue({
      content: [
        { type: "tool_use", id: "toolu_fin", name: "finish", input: { answer: "done" } },
        { type: "tool_use", id: "toolu_slow", name: "slow", input: { ms: 100, label: "slow" } },
      ],
    });
    const agent = createAgent(
      agentOptions({
        tools: [finish, slow],
        toolConcurrency: { mode: "all" },
        hooks: { onToolResult: (event) => void seen.push(event.toolUseId) },
        onTrace: (event) => {
          if (event.type === "tool_call_finished") traced.push(event.id);
        },
      }),
    );
    const messages = await collect(agent.query("go"));
    expect(log).toEqual(["start slow", "end slow"]);
    const [user] = userMessages(messages);
    expect(user?.message.content.map((block) => block.tool_use_id)).toEqual([
      "toolu_fin",
      "toolu_slow",
    ]);
    expect(user?.message.content[1]?.content).toEqual([{ type: "text", text: "slow" }]);
    expect(seen).toEqual(["toolu_fin", "toolu_slow"]);
    expect(traced.sort()).toEqual(["toolu_fin", "toolu_slow"]);
    expect(messages.at(-1)).toMatchObject({ type: "result", subtype: "success", result: "done" });
    expect(server.requests).toHaveLength(1);
  });

  it("T10: with several endTurn tools, the first in tool_use order gives the result", async () => {
    const log: string[] = [];
    const late = tool("late", "d", z.object({ answer: z.string() }), async ({ answer }) => {
      await sleep(60);
      log.push("late");
      return { content: answer, endTurn: true };
    });
    const early = tool("early", "d", z.object({ answer: z.string() }), async ({ answer }) => {
      log.push("early");
      return { content: answer, endTurn: true, structuredResult: { from: "early" } };
    });
    server.enqueue({
      content: [
        { type: "tool_use", name: "late", input: { answer: "first in order" } },
        { type: "tool_use", name: "early", input: { answer: "finished first" } },
      ],
    });
    const result = await createAgent(
      agentOptions({ tools: [late, early], toolConcurrency: { mode: "all" } }),
    ).run("go");
    expect(log).toEqual(["early", "late"]);
    expect(result.result).toBe("first in order");
    expect(result.structuredResult).toBeUndefined();
  });

  it("T11: structuredResult lands on the result message", async () => {
    server.enqueue({ content: [{ type: "tool_use", name: "finish", input: { answer: "42" } }] });
    const result = await createAgent(agentOptions({ tools: [finish] })).run("Answer");
    expect(result.structuredResult).toEqual({ answer: "42", confidence: 0.9 });
  });

  it("T11: structuredResult without endTurn is ignored and the run goes on", async () => {
    const partial = tool("partial", "d", z.object({}), async () => ({
      content: "part",
      structuredResult: { x: 1 },
    }));
    server.enqueue(
      { content: [{ type: "tool_use", name: "partial", input: {} }] },
      { content: [{ type: "text", text: "final" }] },
    );
    const result = await createAgent(agentOptions({ tools: [partial] })).run("go");
    expect(result).toMatchObject({ result: "final", structuredResult: undefined, numTurns: 2 });
  });
});

describe("batches in the loop (T17, T19–T21, T25)", () => {
  it("T17: createAgent tells the model about parallel calls when a tool is concurrency-safe", async () => {
    const safe = tool("lookup", "d", z.object({}), async () => ({ content: "" }), {
      isConcurrencySafe: () => true,
    });
    server.enqueue({ content: [{ type: "text", text: "ok" }] });
    await createAgent(agentOptions({ tools: [safe], systemPrompt: "You are terse." })).run("Hi");
    expect(requestBody(0).system).toBe(`You are terse.\n\n${PARALLEL_TOOL_CALLS_GUIDANCE}`);
    expect(PARALLEL_TOOL_CALLS_GUIDANCE).toMatch(/in a single reply/);
    expect(PARALLEL_TOOL_CALLS_GUIDANCE).toMatch(/later reply/);
  });

  it("T17: no guidance without safe tools, in sequential mode, or in a bare agent", async () => {
    const safe = tool("lookup", "d", z.object({}), async () => ({ content: "" }), {
      isConcurrencySafe: () => true,
    });
    server.enqueue(
      { content: [{ type: "text", text: "1" }] },
      { content: [{ type: "text", text: "2" }] },
      { content: [{ type: "text", text: "3" }] },
    );
    await createAgent(agentOptions({ tools: [echo], systemPrompt: "S" })).run("Hi");
    await createAgent(agentOptions({ tools: [safe], toolConcurrency: { mode: "sequential" } })).run(
      "Hi",
    );
    await createBareAgent(agentOptions({ tools: [safe], systemPrompt: "S" })).run("Hi");
    expect(requestBody(0).system).toBe("S");
    expect(requestBody(1).system).toBeUndefined();
    expect(requestBody(2).system).toBe("S");
  });

  it("T19, T20: the next model call waits for the whole batch; results keep tool_use order", async () => {
    const log: string[] = [];
    const wait = delayed("wait", log);
    let logAtSecondCall: string[] = [];
    const own = await createScriptedModelServer({
      turns: [
        {
          content: [
            { type: "tool_use", id: "t1", name: "wait", input: { ms: 150, label: "a" } },
            { type: "tool_use", id: "t2", name: "wait", input: { ms: 10, label: "b" } },
            { type: "tool_use", id: "t3", name: "wait", input: { ms: 80, label: "c" } },
          ],
        },
      ],
      respond: () => {
        logAtSecondCall = log.slice();
        return { content: [{ type: "text", text: "all done" }] };
      },
    });
    try {
      const agent = createAgent({
        ...agentOptions({ tools: [wait] }),
        baseURL: own.anthropicBaseURL,
      });
      const messages = await collect(agent.query("go"));
      expect(logAtSecondCall.filter((entry) => entry.startsWith("end"))).toHaveLength(3);
      const [user] = userMessages(messages);
      expect(user?.message.content.map((block) => block.tool_use_id)).toEqual(["t1", "t2", "t3"]);
      expect(log.indexOf("end b")).toBeLessThan(log.indexOf("end a"));
      const second = (
        own.requests[1]!.body as { messages: Array<{ content: Array<{ tool_use_id: string }> }> }
      ).messages.at(-1);
      expect(second?.content.map((block) => block.tool_use_id)).toEqual(["t1", "t2", "t3"]);
    } finally {
      await own.close();
    }
  });

  it("T21: one failing handler never loses the others' results", async () => {
    const boom = tool(
      "boom",
      "d",
      z.object({}),
      async () => {
        throw new Error("disk full");
      },
      { isConcurrencySafe: () => true },
    );
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "ok1", name: "echo", input: { text: "one" } },
          { type: "tool_use", id: "bad", name: "boom", input: {} },
          { type: "tool_use", id: "ok2", name: "echo", input: { text: "two" } },
        ],
      },
      { content: [{ type: "text", text: "recovered" }] },
    );
    const messages = await collect(createAgent(agentOptions({ tools: [echo, boom] })).query("go"));
    const [user] = userMessages(messages);
    expect(user?.message.content).toEqual([
      { type: "tool_result", tool_use_id: "ok1", content: [{ type: "text", text: "one" }] },
      {
        type: "tool_result",
        tool_use_id: "bad",
        content: [{ type: "text", text: "disk full" }],
        is_error: true,
      },
      { type: "tool_result", tool_use_id: "ok2", content: [{ type: "text", text: "two" }] },
    ]);
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "recovered" });
  });

  it("T15: four 300 ms safe calls overlap (well under 1,200 ms), unsafe ones do not", async () => {
    const log: string[] = [];
    const safe = delayed("safe", log, true);
    const unsafe = delayed("unsafe", log, false);
    const batch = (name: string) => ({
      content: [0, 1, 2, 3].map((index) => ({
        type: "tool_use" as const,
        name,
        input: { ms: 300, label: `${name}${index}` },
      })),
    });
    server.enqueue(batch("safe"), { content: [{ type: "text", text: "ok" }] });
    const started = performance.now();
    await createAgent(agentOptions({ tools: [safe] })).run("go");
    const safeElapsed = performance.now() - started;
    expect(safeElapsed).toBeLessThan(1000);
    server.enqueue(batch("unsafe"), { content: [{ type: "text", text: "ok" }] });
    await createAgent(agentOptions({ tools: [unsafe] })).run("go");
    expect(log.slice(8)).toEqual([
      "start unsafe0",
      "end unsafe0",
      "start unsafe1",
      "end unsafe1",
      "start unsafe2",
      "end unsafe2",
      "start unsafe3",
      "end unsafe3",
    ]);
  });

  it("T23, T25: a refusing policy runs nothing; every call gets an is_error result; the run goes on", async () => {
    const ran: string[] = [];
    const update = tool("incrementRevision", "d", z.object({}), async () => {
      ran.push("update");
      return { content: "rev 2" };
    });
    const notify = tool("notify", "d", z.object({}), async () => {
      ran.push("notify");
      return { content: "sent" };
    });
    const seenBatches: unknown[] = [];
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "u1", name: "incrementRevision", input: {} },
          { type: "tool_use", id: "n1", name: "notify", input: {} },
        ],
      },
      { content: [{ type: "tool_use", id: "u2", name: "incrementRevision", input: {} }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent(
      agentOptions({
        tools: [update, notify],
        toolBatchPolicy: {
          validate({ toolCalls }) {
            seenBatches.push(toolCalls);
            const u = toolCalls.find((call) => call.name === "incrementRevision");
            const n = toolCalls.find((call) => call.name === "notify");
            if (u && n) {
              return {
                allowed: false,
                code: "invalid_tool_batch",
                message: "Update the revision first.",
                conflictingToolCallIds: [u.id, n.id],
                suggestedNextStep: "Call incrementRevision alone.",
              };
            }
            return { allowed: true };
          },
        },
      }),
    );
    const messages = await collect(agent.query("go"));
    expect(seenBatches[0]).toEqual([
      { id: "u1", name: "incrementRevision", input: {}, kind: "tool" },
      { id: "n1", name: "notify", input: {}, kind: "tool" },
    ]);
    const [refused, allowed] = userMessages(messages);
    for (const block of refused?.message.content ?? []) {
      expect(block.is_error).toBe(true);
      const text = JSON.stringify(block.content);
      expect(text).toContain("invalid_tool_batch");
      expect(text).toContain("Update the revision first.");
      expect(text).toContain("Call incrementRevision alone.");
    }
    expect(allowed?.message.content[0]?.is_error).toBeUndefined();
    expect(ran).toEqual(["update"]);
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "done" });
  });

  it("T26: a throwing policy gives every call a tool_batch_policy_error result; no handler runs; the run goes on", async () => {
    const ran: string[] = [];
    const record = tool("record", "d", z.object({ text: z.string() }), async ({ text }) => {
      ran.push(text);
      return { content: text };
    });
    let validations = 0;
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "a1", name: "record", input: { text: "a" } },
          { type: "tool_use", id: "b1", name: "record", input: { text: "b" } },
          { type: "tool_use", id: "x1", name: "nope", input: {} },
        ],
      },
      { content: [{ type: "text", text: "recovered" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [record],
          toolBatchPolicy: {
            validate() {
              validations++;
              throw new Error("policy database is down");
            },
          },
        }),
      ).query("go"),
    );
    expect(validations).toBe(1);
    expect(ran).toEqual([]);
    const [user] = userMessages(messages);
    expect(user?.message.content.map((block) => block.tool_use_id)).toEqual(["a1", "b1", "x1"]);
    for (const block of user?.message.content ?? []) {
      expect(block.is_error).toBe(true);
      const text = JSON.stringify(block.content);
      expect(text).toContain("tool_batch_policy_error");
      expect(text).toContain("policy database is down");
    }
    // The run went on: the results went back to the model, which answered.
    expect(server.requests).toHaveLength(2);
    expect(JSON.stringify(requestBody(1).messages.at(-1))).toContain("tool_batch_policy_error");
    expect(messages.at(-1)).toMatchObject({
      type: "result",
      subtype: "success",
      result: "recovered",
    });
  });

  it("unknown tools and invalid inputs get is_error results and the run goes on", async () => {
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "x1", name: "nope", input: {} },
          { type: "tool_use", id: "x2", name: "echo", input: { text: 5 } },
        ],
      },
      { content: [{ type: "text", text: "sorry" }] },
    );
    const messages = await collect(createAgent(agentOptions({ tools: [echo] })).query("go"));
    const [user] = userMessages(messages);
    const [unknown, invalid] = user?.message.content ?? [];
    expect(unknown?.is_error).toBe(true);
    expect(JSON.stringify(unknown?.content)).toContain('Unknown tool \\"nope\\"');
    expect(invalid?.is_error).toBe(true);
    expect(JSON.stringify(invalid?.content)).toContain(
      "text: Invalid input: expected string, received number",
    );
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "sorry" });
  });

  it("tool input JSON that does not parse becomes an is_error result naming the tool", async () => {
    let ran = false;
    const guarded = tool("guarded", "d", z.object({ path: z.string() }), async () => {
      ran = true;
      return { content: "ran" };
    });
    server.enqueue(
      { fault: "malformed_json", name: "guarded", id: "bad_json" },
      { content: [{ type: "text", text: "retrying later" }] },
    );
    const messages = await collect(createAgent(agentOptions({ tools: [guarded] })).query("go"));
    const [user] = userMessages(messages);
    expect(ran).toBe(false);
    expect(user?.message.content[0]).toMatchObject({ tool_use_id: "bad_json", is_error: true });
    expect(JSON.stringify(user?.message.content[0]?.content)).toContain("guarded");
    expect(messages.at(-1)).toMatchObject({ subtype: "success" });
  });
});

describe("maxTurns and failures", () => {
  it("reaching maxTurns ends the run with error_max_turns", async () => {
    for (let index = 0; index < 3; index++) {
      server.enqueue({
        content: [{ type: "tool_use", name: "echo", input: { text: `${index}` } }],
      });
    }
    const result = await createAgent(agentOptions({ tools: [echo], maxTurns: 2 })).run("loop");
    expect(result).toMatchObject({
      subtype: "error_max_turns",
      isError: true,
      numTurns: 2,
      result: "",
    });
    expect(result.errors[0]).toMatch(/maxTurns \(2\)/);
    expect(server.requests).toHaveLength(2);
  });

  it("a provider failure ends the run with error_during_execution, not a rejection", async () => {
    server.enqueue({ status: 401 });
    const result = await createAgent(agentOptions()).run("Hi");
    expect(result).toMatchObject({ subtype: "error_during_execution", isError: true, numTurns: 1 });
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]).toMatch(/401/);
    expect(result.errors[0]).not.toContain(API_KEY);
  });

  it("pause_turn sends the paused turn back so the model continues", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "Working" }], stopReason: "pause_turn" },
      { content: [{ type: "text", text: "Done" }] },
    );
    const result = await createAgent(agentOptions()).run("long task");
    expect(result).toMatchObject({ subtype: "success", result: "Done", numTurns: 2 });
    expect(requestBody(1).messages.map((message) => message.role)).toEqual(["user", "assistant"]);
  });
});

describe("cancellation (T22)", () => {
  it("T22: abort during a batch: started handlers see the signal and settle, queued calls never start, the query rejects with AbortError", async () => {
    const log: string[] = [];
    const wait = delayed("wait", log);
    server.enqueue({
      content: [0, 1, 2, 3].map((index) => ({
        type: "tool_use" as const,
        name: "wait",
        input: { ms: 5000, label: `w${index}` },
      })),
    });
    const controller = new AbortController();
    const agent = createAgent(
      agentOptions({ tools: [wait], toolConcurrency: { maxConcurrency: 2 } }),
    );
    const pending = agent.run("go", { signal: controller.signal });
    while (log.length < 2) await sleep(5);
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe("AbortError");
    expect(log.sort()).toEqual(["aborted w0", "aborted w1", "start w0", "start w1"]);
    expect(server.requests).toHaveLength(1);
  });

  it("T22: abort during the model call rejects promptly with AbortError", async () => {
    server.enqueue({ fault: "hang" });
    const controller = new AbortController();
    const pending = createAgent(agentOptions()).run("Hi", { signal: controller.signal });
    await sleep(50);
    const started = performance.now();
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it("T22: abort between turns makes no further model call", async () => {
    const controller = new AbortController();
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "text", text: "never" }] },
    );
    const agent = createAgent(
      agentOptions({ tools: [echo], hooks: { onToolResult: () => controller.abort() } }),
    );
    const error = await agent.run("go", { signal: controller.signal }).then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(1);
  });

  it("an already aborted signal rejects before any model call", async () => {
    const error = await createAgent(agentOptions())
      .run("Hi", { signal: AbortSignal.abort() })
      .then(
        () => undefined,
        (caught: unknown) => caught,
      );
    expect((error as Error).name).toBe("AbortError");
    expect(server.requests).toHaveLength(0);
  });

  it("breaking out of the query aborts the run", async () => {
    const log: string[] = [];
    // Takes 50 ms to stop after the abort, like a handler cleaning up.
    const wait = tool(
      "wait",
      "Waits until aborted",
      z.object({ label: z.string() }),
      async ({ label }, { signal }) => {
        log.push(`start ${label}`);
        await new Promise<void>((_resolve, reject) => {
          signal.addEventListener("abort", () => {
            setTimeout(() => {
              log.push(`aborted ${label}`);
              reject(signal.reason);
            }, 50);
          });
        });
        return { content: label };
      },
    );
    server.enqueue({
      content: [{ type: "tool_use", name: "wait", input: { label: "w" } }],
    });
    const iterator = createAgent(agentOptions({ tools: [wait] }))
      .query("go")
      [Symbol.asyncIterator]();
    let next = await iterator.next();
    while (!next.done && next.value.type !== "assistant") next = await iterator.next();
    while (!log.includes("start w")) await sleep(5);
    const returned = await iterator.return?.();
    // T22: the started handler had settled before the iteration ended.
    expect(log).toEqual(["start w", "aborted w"]);
    expect(returned).toEqual({ value: undefined, done: true });
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    expect(server.requests).toHaveLength(1);
  });

  it("T22: abort while beforeToolCall is pending rejects with AbortError within 1 s; nothing starts; the hook gets the signal", async () => {
    const log: string[] = [];
    const wait = delayed("wait", log);
    const seen: Array<AbortSignal | undefined> = [];
    server.enqueue({
      content: [
        { type: "tool_use", id: "w0", name: "wait", input: { ms: 10, label: "w0" } },
        { type: "tool_use", id: "w1", name: "wait", input: { ms: 10, label: "w1" } },
      ],
    });
    const controller = new AbortController();
    const agent = createAgent(
      agentOptions({
        tools: [wait],
        hooks: {
          beforeToolCall(_call, context) {
            seen.push(context?.signal);
            return new Promise<never>(() => {});
          },
        },
      }),
    );
    const pending = agent.run("go", { signal: controller.signal });
    while (seen.length === 0) await sleep(5);
    const { error, elapsed } = await abortAndSettle(controller, pending);
    expect((error as Error).name).toBe("AbortError");
    expect(elapsed).toBeLessThan(1000);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
    expect(log).toEqual([]);
    expect(server.requests).toHaveLength(1);
  });

  it("T22: abort while onToolResult is pending rejects with AbortError within 1 s; the event carries the signal", async () => {
    const seen: Array<AbortSignal | undefined> = [];
    server.enqueue(
      { content: [{ type: "tool_use", id: "e1", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "text", text: "never" }] },
    );
    const controller = new AbortController();
    const agent = createAgent(
      agentOptions({
        tools: [echo],
        hooks: {
          onToolResult(event) {
            seen.push((event as { signal?: AbortSignal }).signal);
            return new Promise<never>(() => {});
          },
        },
      }),
    );
    const messages: SDKMessage[] = [];
    const pending = (async () => {
      for await (const message of agent.query("go", { signal: controller.signal })) {
        messages.push(message);
      }
    })();
    while (seen.length === 0) await sleep(5);
    const { error, elapsed } = await abortAndSettle(controller, pending);
    expect((error as Error).name).toBe("AbortError");
    expect(elapsed).toBeLessThan(1000);
    expect(seen).toHaveLength(1);
    expect(seen[0]?.aborted).toBe(true);
    // The batch's results were still recorded before the rejection; no model call followed.
    expect(userMessages(messages)[0]?.message.content[0]).toMatchObject({ tool_use_id: "e1" });
    expect(server.requests).toHaveLength(1);
  });

  it("T22: abort while toolBatchPolicy.validate is pending rejects with AbortError within 1 s; nothing starts", async () => {
    const log: string[] = [];
    const wait = delayed("wait", log);
    const seen: Array<AbortSignal | undefined> = [];
    server.enqueue({
      content: [{ type: "tool_use", id: "w0", name: "wait", input: { ms: 10, label: "w0" } }],
    });
    const controller = new AbortController();
    const agent = createAgent(
      agentOptions({
        tools: [wait],
        toolBatchPolicy: {
          validate({ signal }) {
            seen.push(signal);
            return new Promise<never>(() => {});
          },
        },
      }),
    );
    const pending = agent.run("go", { signal: controller.signal });
    while (seen.length === 0) await sleep(5);
    const { error, elapsed } = await abortAndSettle(controller, pending);
    expect((error as Error).name).toBe("AbortError");
    expect(elapsed).toBeLessThan(1000);
    expect(seen[0]?.aborted).toBe(true);
    expect(log).toEqual([]);
  });

  it("T22: abort while the team inbox is pending rejects with AbortError within 1 s", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "e1", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "text", text: "never" }] },
    );
    const prepared = prepareAgent(
      checkAgentOptions(agentOptions({ tools: [echo] }), "bare"),
      "bare",
      undefined,
    );
    const runtime = await prepared.getRuntime();
    let asked = 0;
    const controller = new AbortController();
    const pending = runAgent(runtime, { kind: "prompt", prompt: "go" }, controller.signal, {
      parentToolUseId: null,
      emit: () => {},
      depth: 0,
      beforeModelCall: () => {
        asked++;
        return new Promise<never>(() => {});
      },
    });
    while (asked === 0) await sleep(5);
    const { error, elapsed } = await abortAndSettle(controller, pending);
    expect((error as Error).name).toBe("AbortError");
    expect(elapsed).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
  });
});

describe("hooks", () => {
  it("beforeToolCall may deny a call (its message becomes the is_error result) or replace its input", async () => {
    const inputs: string[] = [];
    const record = tool("record", "d", z.object({ text: z.string() }), async ({ text }) => {
      inputs.push(text);
      return { content: text };
    });
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "d1", name: "record", input: { text: "secret" } },
          { type: "tool_use", id: "r1", name: "record", input: { text: "raw" } },
          { type: "tool_use", id: "r2", name: "record", input: { text: "bad" } },
        ],
      },
      { content: [{ type: "text", text: "ok" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [record],
          hooks: {
            beforeToolCall(call) {
              if (call.id === "d1") return { deny: "Recording secrets is not allowed." };
              if (call.id === "r1") return { input: { text: "rewritten" } };
              if (call.id === "r2") return { input: { text: 7 } };
            },
          },
        }),
      ).query("go"),
    );
    const [user] = userMessages(messages);
    expect(user?.message.content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "d1",
      content: [{ type: "text", text: "Recording secrets is not allowed." }],
      is_error: true,
    });
    expect(user?.message.content[1]?.content).toEqual([{ type: "text", text: "rewritten" }]);
    expect(user?.message.content[2]?.is_error).toBe(true);
    expect(inputs).toEqual(["rewritten"]);
  });

  it("a throwing beforeToolCall fails that call only; the run goes on", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "h1", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "text", text: "went on" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [echo],
          hooks: {
            beforeToolCall() {
              throw new Error("hook exploded");
            },
          },
        }),
      ).query("go"),
    );
    const [user] = userMessages(messages);
    expect(user?.message.content[0]?.is_error).toBe(true);
    expect(JSON.stringify(user?.message.content[0]?.content)).toContain("hook exploded");
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "went on" });
  });

  it("a throwing onToolResult records the batch, then ends the run with error_during_execution", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "o1", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "text", text: "never" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [echo],
          hooks: {
            onToolResult() {
              throw new Error("ledger offline");
            },
          },
        }),
      ).query("go"),
    );
    expect(userMessages(messages)).toHaveLength(1);
    expect(messages.at(-1)).toMatchObject({ subtype: "error_during_execution", isError: true });
    const result = messages.at(-1) as { errors: readonly string[] };
    expect(result.errors[0]).toContain(
      'The onToolResult hook threw for tool call "echo" (o1): ledger offline',
    );
    expect(server.requests).toHaveLength(1);
  });

  it("onToolResult sees every result in tool_use order with status and input", async () => {
    const events: unknown[] = [];
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "e1", name: "echo", input: { text: "a" } },
          { type: "tool_use", id: "e2", name: "echo", input: { text: 1 } },
        ],
      },
      { content: [{ type: "text", text: "ok" }] },
    );
    await createAgent(
      agentOptions({ tools: [echo], hooks: { onToolResult: (event) => void events.push(event) } }),
    ).run("go");
    expect(events).toMatchObject([
      {
        toolUseId: "e1",
        toolName: "echo",
        kind: "tool",
        input: { text: "a" },
        status: "completed",
        result: { isError: false },
      },
      { toolUseId: "e2", toolName: "echo", status: "invalid_input", result: { isError: true } },
    ]);
  });
});

describe("trace", () => {
  it("emits typed events with monotonic timestamps and never the API key", async () => {
    const events: TraceEvent[] = [];
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "text", text: "ok" }] },
    );
    await createAgent(
      agentOptions({ tools: [echo], onTrace: (event) => void events.push(event) }),
    ).run("go");
    const types = events.map((event) => event.type);
    expect(types[0]).toBe("run_started");
    expect(types.at(-1)).toBe("run_finished");
    for (const type of [
      "model_request_started",
      "model_request_finished",
      "tool_call_queued",
      "batch_planned",
      "tool_call_started",
      "tool_call_finished",
    ]) {
      expect(types).toContain(type);
    }
    for (let index = 1; index < events.length; index++) {
      expect(events[index]!.time).toBeGreaterThanOrEqual(events[index - 1]!.time);
    }
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    const finished = events.find((event) => event.type === "model_request_finished");
    expect(finished).toMatchObject({ turn: 1, retries: 0, stopReason: "tool_use", toolCalls: 1 });
  });

  it("records retries of the model request", async () => {
    const events: TraceEvent[] = [];
    server.enqueue(
      { status: 529, headers: { "retry-after-ms": "5" } },
      { content: [{ type: "text", text: "ok" }] },
    );
    const result = await createAgent(
      agentOptions({ onTrace: (event) => void events.push(event) }),
    ).run("go");
    expect(result.subtype).toBe("success");
    expect(events.find((event) => event.type === "model_retry")).toMatchObject({
      turn: 1,
      attempt: 1,
      status: 529,
    });
    expect(events.find((event) => event.type === "model_request_finished")).toMatchObject({
      retries: 1,
    });
  });

  it("a throwing onTrace never breaks the run", async () => {
    server.enqueue({ content: [{ type: "text", text: "fine" }] });
    const result = await createAgent(
      agentOptions({
        onTrace() {
          throw new Error("listener bug");
        },
      }),
    ).run("go");
    expect(result.result).toBe("fine");
  });
});

describe("providers", () => {
  it("createAgent({ provider: openaiCompatible(...) }) runs the same loop over Chat Completions", async () => {
    const { openaiCompatible } = await import("@lattice/providers");
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "call_1", name: "echo", input: { text: "via openai" } }],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent({
      provider: openaiCompatible({ apiKey: API_KEY, baseURL: server.openaiBaseURL }),
      model: "gpt-test",
      tools: [echo],
    });
    const messages = await collect(agent.query("go"));
    const [user] = userMessages(messages);
    expect(user?.message.content[0]).toMatchObject({
      tool_use_id: "call_1",
      content: [{ type: "text", text: "via openai" }],
    });
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "done" });
    expect(server.requests.map((request) => request.protocol)).toEqual(["openai", "openai"]);
    const second = server.requests[1]?.body as { messages: Array<{ role: string }> };
    expect(second.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
  });
});

describe("stream: false", () => {
  it("asks for one JSON body per call and runs the same loop", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "j1", name: "echo", input: { text: "json" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const messages = await collect(
      createAgent(agentOptions({ tools: [echo], stream: false })).query("go"),
    );
    expect(server.requests.map((request) => request.stream)).toEqual([false, false]);
    expect(userMessages(messages)[0]?.message.content[0]).toMatchObject({ tool_use_id: "j1" });
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "done" });
  });

  it("refuses includePartialMessages without streaming", () => {
    expect(() =>
      createAgent(agentOptions({ stream: false, includePartialMessages: true })),
    ).toThrow(/includePartialMessages" needs streaming/);
  });
});
