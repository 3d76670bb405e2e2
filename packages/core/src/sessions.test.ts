import type { ModelMessage } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type ToolContext, tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  agentTool,
  createAgent,
  createBareAgent,
  defineAgent,
  memorySessionStore,
  RUN_LOG_VERSION,
  type SDKMessage,
  type SessionEntry,
  type SessionStore,
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

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-sessions",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

function requestMessages(index: number): unknown {
  return (server.requests[index]?.body as { messages?: unknown } | undefined)?.messages;
}

const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => ({
  content: `echo: ${text}`,
}));

const toolCall = (id: string, text: string, name = "echo") => ({
  type: "tool_use" as const,
  id,
  name,
  input: { text },
});

/** A gate a tool waits on, opened by the test. */
function gate(): { readonly wait: Promise<void>; readonly open: () => void } {
  let open!: () => void;
  const wait = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { wait, open };
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  for (let tries = 0; tries < 400; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  throw new Error("condition not reached");
}

async function collect(iterable: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

describe("the run log (R1, R2)", () => {
  it("R1: a session's log holds the prompt, each reply, one result per call as it settled, and the end; plain JSON with a version", async () => {
    const store = memorySessionStore();
    const slow = gate();
    const first = tool(
      "first",
      "Waits",
      z.object({ text: z.string() }),
      async () => {
        await slow.wait;
        return { content: "first done" };
      },
      { isConcurrencySafe: () => true },
    );
    const second = tool(
      "second",
      "Quick",
      z.object({ text: z.string() }),
      async () => {
        slow.open();
        return { content: "second done" };
      },
      { isConcurrencySafe: () => true },
    );
    server.enqueue(
      {
        content: [toolCall("c1", "a", "first"), toolCall("c2", "b", "second")],
      },
      { content: [{ type: "text", text: "all done" }] },
    );
    const agent = createAgent(agentOptions({ tools: [first, second], sessionStore: store }));
    const result = await agent.run("go", { sessionId: "s1" });
    expect(result.subtype).toBe("success");
    const { entries } = await store.load("s1");
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
      "tool_result",
      "tool_result",
      "reply",
      "run_finished",
    ]);
    // Settle order in the log (c2 settled first); tool_use order in the conversation.
    expect(entries.slice(2, 4).map((entry) => entry.toolUseId)).toEqual(["c2", "c1"]);
    expect(
      // A run that uses no steering writes version 1 entries, which older releases read.
      entries.every((entry) => entry.v === 1 && entry.runId === result.runId),
    ).toBe(true);
    expect(JSON.parse(JSON.stringify(entries))).toEqual(entries);
    const results = result.messages[2]?.content as unknown as { tool_use_id: string }[];
    expect(results.map((block) => block.tool_use_id)).toEqual(["c1", "c2"]);
  });

  it("R1: a log holding an entry of a newer schema version is refused with session_log_version, and nothing is sent", async () => {
    const store = memorySessionStore();
    await store.append("s1", 0, [
      {
        v: RUN_LOG_VERSION + 1,
        type: "run_started",
        runId: "r1",
        time: "",
        message: { role: "user", content: "x" },
      },
    ]);
    const agent = createAgent(agentOptions({ sessionStore: store }));
    const error = await agent.run("next", { sessionId: "s1" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "session_log_version", sessionId: "s1" });
    expect((error as Error).message).toMatch(
      /run log entry 0 has schema version 4, but this release of Lattice reads version 3 and older.*upgrade @lattice\/core/,
    );
    expect(server.requests).toHaveLength(0);
    expect((await store.load("s1")).version).toBe(1);
  });

  it("R1: a log holding something that is not a run log entry is refused with session_log_invalid", async () => {
    const store = memorySessionStore();
    await store.append("s1", 0, [{ hello: "world" }]);
    const error = await createAgent(agentOptions({ sessionStore: store }))
      .run("next", { sessionId: "s1" })
      .catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "session_log_invalid" });
    expect((error as Error).message).toMatch(
      /Session "s1": run log entry 0 is not a Lattice run log entry/,
    );
  });

  it("R2, R6: the next prompt on a session sends the conversation derived from the stored log", async () => {
    const store = memorySessionStore();
    server.enqueue(
      { content: [toolCall("t1", "a")] },
      { content: [{ type: "text", text: "first answer" }] },
      { content: [{ type: "text", text: "second answer" }] },
    );
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    const first = await agent.run("first", { sessionId: "chat" });
    // Another agent on the same store continues the conversation: nothing lives in the agent.
    const other = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    const second = await other.run("second", { sessionId: "chat" });
    const expected = [...first.messages, { role: "user", content: "second" }];
    expect(requestMessages(2)).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(second.messages).toEqual([
      ...expected,
      { role: "assistant", content: [{ type: "text", text: "second answer" }] },
    ]);
    // The same request bytes a caller-kept history gives (R5).
    server.enqueue({ content: [{ type: "text", text: "second answer" }] });
    await createAgent(agentOptions({ tools: [echo] })).run("second", { messages: first.messages });
    expect(JSON.stringify(server.requests[3]?.body)).toBe(JSON.stringify(server.requests[2]?.body));
  });
});

describe("sessions (R6, R7, R8)", () => {
  it("R6: each step's entries are in the store before the next step starts (write-ahead)", async () => {
    const store = memorySessionStore();
    const seen: string[][] = [];
    const look = tool("look", "Reads the log", z.object({ text: z.string() }), async () => {
      const { entries } = await store.load("s1");
      seen.push(
        entries.map((entry) => `${entry.type}${entry.toolUseId ? `:${entry.toolUseId}` : ""}`),
      );
      return { content: "looked" };
    });
    server.enqueue(
      { content: [toolCall("a", "1", "look"), toolCall("b", "2", "look")] },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent(
      agentOptions({ tools: [look], sessionStore: store, toolConcurrency: { mode: "sequential" } }),
    );
    await agent.run("go", { sessionId: "s1" });
    expect(seen[0]).toEqual(["run_started", "reply"]);
    // The second call runs after the first one's result was appended (an append in flight
    // finishes within a microtask turn of the memory store).
    expect(seen[1]?.slice(0, 3)).toEqual(["run_started", "reply", "tool_result:a"]);
  });

  it("R6: messages and sessionId together are refused at once", () => {
    const agent = createAgent(agentOptions());
    expect(() => agent.query("x", { sessionId: "s", messages: [] })).toThrow(
      /QueryOptions: option "messages" cannot be combined with "sessionId"/,
    );
    expect(() => agent.query("x", { sessionId: "" })).toThrow(
      /QueryOptions: option "sessionId" must be a non-empty string/,
    );
  });

  it("R7: sessionId names the conversation, runId the run; every message carries both", async () => {
    server.enqueue(
      { content: [toolCall("t1", "a")] },
      { content: [{ type: "text", text: "one" }] },
      { content: [{ type: "text", text: "two" }] },
      { content: [{ type: "text", text: "three" }] },
    );
    const agent = createAgent(agentOptions({ tools: [echo] }));
    const first = await collect(agent.query("a", { sessionId: "conv" }));
    const second = await collect(agent.query("b", { sessionId: "conv" }));
    const oneOff = await collect(agent.query("c"));
    for (const messages of [first, second, oneOff]) {
      const ids = new Set(messages.map((message) => `${message.sessionId}|${message.runId}`));
      expect(ids.size).toBe(1);
    }
    expect(first[0]?.sessionId).toBe("conv");
    expect(second[0]?.sessionId).toBe("conv");
    expect(first[0]?.runId).not.toBe(second[0]?.runId);
    expect(oneOff[0]?.sessionId).not.toBe("conv");
    expect(oneOff[0]?.sessionId).not.toBe(oneOff[0]?.runId);
    expect(first.map((message) => message.type)).toEqual([
      "system",
      "assistant",
      "user",
      "assistant",
      "result",
    ]);
  });

  it("R8: a session whose last run is unfinished refuses a new prompt with session_conflict naming resume(), before any model call", async () => {
    const store = memorySessionStore();
    const held = gate();
    const hold = tool(
      "hold",
      "Waits",
      z.object({ text: z.string() }),
      async (_input, { signal }) => {
        await Promise.race([
          held.wait,
          new Promise((resolve) => signal.addEventListener("abort", resolve)),
        ]);
        return { content: "held" };
      },
    );
    server.enqueue(
      { content: [toolCall("h1", "x", "hold")] },
      { content: [{ type: "text", text: "ok" }] },
    );
    const agent = createAgent(agentOptions({ tools: [hold], sessionStore: store }));
    const running = agent.run("first", { sessionId: "s" });
    await until(() => server.requests.length === 1);
    const requests = server.requests.length;
    const error = await agent.run("second", { sessionId: "s" }).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ name: "SessionConflictError", code: "session_conflict" });
    expect((error as Error).message).toMatch(/has an unfinished run .*agent\.resume\("s"\)/);
    expect(server.requests).toHaveLength(requests);
    held.open();
    expect((await running).subtype).toBe("success");
  });

  it("R8: two queries racing for one session: exactly one runs, the other rejects with session_conflict and never calls the model", async () => {
    const store = memorySessionStore();
    server.enqueue(
      { content: [{ type: "text", text: "winner" }] },
      { content: [{ type: "text", text: "loser" }] },
    );
    const agent = createAgent(agentOptions({ sessionStore: store }));
    const outcomes = await Promise.allSettled([
      agent.run("a", { sessionId: "race" }),
      agent.run("b", { sessionId: "race" }),
    ]);
    const fulfilled = outcomes.filter((outcome) => outcome.status === "fulfilled");
    const rejected = outcomes.filter((outcome) => outcome.status === "rejected");
    expect(fulfilled).toHaveLength(1);
    expect(rejected).toHaveLength(1);
    expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({
      code: "session_conflict",
    });
    expect(server.requests).toHaveLength(1);
    const { entries } = await store.load("race");
    expect(entries.map((entry) => entry.type)).toEqual(["run_started", "reply", "run_finished"]);
  });
});

describe("context (R9)", () => {
  it("R9: ctx.context reaches tools and agent tools' child runs, typed; it is never sent to the model or stored", async () => {
    interface Ctx {
      readonly user: string;
      readonly db: { readonly secret: string };
    }
    const seen: string[] = [];
    const whoami = tool(
      "whoami",
      "Names the user",
      z.object({ text: z.string() }),
      async (_input, ctx: ToolContext<Ctx>) => {
        seen.push(`${ctx.toolName}:${ctx.context?.user}:${ctx.run?.agentName}:${ctx.run?.depth}`);
        return { content: `you are ${ctx.context?.user}` };
      },
    );
    const helper = defineAgent({ name: "helper", description: "Helps", tools: [whoami] });
    server.enqueue(
      {
        content: [
          toolCall("w1", "a", "whoami"),
          { type: "tool_use", id: "h1", name: "helper", input: { task: "who?" } },
        ],
      },
      { content: [toolCall("w2", "b", "whoami")] },
      { content: [{ type: "text", text: "child done" }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const store = memorySessionStore();
    const agent = createAgent<Ctx>(
      agentOptions({
        tools: [whoami, agentTool(helper)],
        sessionStore: store,
        toolConcurrency: { mode: "sequential" },
      }),
    );
    const result = await agent.run("go", {
      sessionId: "ctx",
      context: { user: "ada", db: { secret: "top-secret-handle" } },
    });
    expect(result.subtype).toBe("success");
    expect(seen).toEqual(["whoami:ada:agent:0", "whoami:ada:helper:1"]);
    expect(JSON.stringify(server.requests.map((request) => request.body))).not.toContain(
      "top-secret-handle",
    );
    expect(JSON.stringify((await store.load("ctx")).entries)).not.toContain("top-secret-handle");
  });
});

describe("resume (R18, R19)", () => {
  const script = () => [
    {
      content: [
        toolCall("c1", "1", "work"),
        toolCall("c2", "2", "work"),
        toolCall("c3", "3", "work"),
      ],
    },
    { content: [{ type: "text" as const, text: "finished" }] },
  ];

  it("R18, R19: a run aborted mid-batch resumes: logged calls never run again, the rest run, numTurns, usage and runId continue, messages equal an uninterrupted run's", async () => {
    // The uninterrupted run, for comparison.
    server.enqueue(...script());
    const plain = tool("work", "Works", z.object({ text: z.string() }), async ({ text }) => ({
      content: `worked ${text}`,
    }));
    const reference = await createAgent(agentOptions({ tools: [plain] })).run("go");

    const store = memorySessionStore();
    const runs: string[] = [];
    let blockThird = true;
    const work = tool(
      "work",
      "Works",
      z.object({ text: z.string() }),
      async ({ text }, { signal }) => {
        runs.push(text);
        if (text === "3" && blockThird) {
          await new Promise((_resolve, reject) =>
            signal.addEventListener("abort", () => reject(signal.reason)),
          );
        }
        return { content: `worked ${text}` };
      },
    );
    const options = agentOptions({
      tools: [work],
      sessionStore: store,
      toolConcurrency: { mode: "sequential" },
    });
    server.enqueue(...script());
    const controller = new AbortController();
    const first = createAgent(options).query("go", { sessionId: "job", signal: controller.signal });
    const firstMessages: SDKMessage[] = [];
    const consumed = (async () => {
      for await (const message of first) firstMessages.push(message);
    })();
    await until(() => runs.includes("3"));
    controller.abort();
    await expect(consumed).rejects.toMatchObject({ name: "AbortError" });

    // A query on the cut session is refused; resume takes it up, in a new agent (as another process would).
    blockThird = false;
    const agent = createAgent(options);
    await expect(agent.run("new prompt", { sessionId: "job" })).rejects.toMatchObject({
      code: "session_conflict",
    });
    const resumed = await collect(agent.resume("job"));
    const result = resumed.at(-1);
    expect(result).toMatchObject({ type: "result", subtype: "success", result: "finished" });
    if (result?.type !== "result") throw new Error("no result");
    expect(runs).toEqual(["1", "2", "3", "3"]);
    expect(result.runId).toBe(firstMessages[0]?.runId);
    expect(result.numTurns).toBe(2);
    expect(result.usage).toEqual(reference.usage);
    expect(result.messages).toEqual(reference.messages);
    expect(resumed[0]).toMatchObject({ type: "system", runId: result.runId, sessionId: "job" });
    // The resumed run sent the conversation with all three results.
    expect(requestMessages(server.requests.length - 1)).toEqual(
      JSON.parse(JSON.stringify(reference.messages.slice(0, 3))),
    );
    // Now finished: a second resume is refused; a new prompt is taken.
    await expect(agent.resume("job").finalResult()).rejects.toMatchObject({
      code: "not_interrupted",
    });
    server.enqueue({ content: [{ type: "text", text: "next" }] });
    expect((await agent.run("next prompt", { sessionId: "job" })).subtype).toBe("success");
  });

  it("R18: a run cut after its reply was logged resumes with the batch; one cut after a prompt calls the model", async () => {
    const store = memorySessionStore();
    const runId = "run-1";
    await store.append("s", 0, [
      { v: 1, type: "run_started", runId, time: "", message: { role: "user", content: "go" } },
    ]);
    server.enqueue({ content: [{ type: "text", text: "answered" }] });
    const agent = createAgent(agentOptions({ sessionStore: store }));
    const result = await agent.resume("s").finalResult();
    expect(result).toMatchObject({ subtype: "success", result: "answered", runId, numTurns: 1 });
    expect(requestMessages(0)).toEqual([{ role: "user", content: "go" }]);
  });

  it("R18: resume of an unknown session is session_not_found; two resumes racing: exactly one runs", async () => {
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ sessionStore: store }));
    await expect(agent.resume("nope").finalResult()).rejects.toMatchObject({
      name: "SessionError",
      code: "session_not_found",
    });
    await store.append("s", 0, [
      { v: 1, type: "run_started", runId: "r", time: "", message: { role: "user", content: "go" } },
    ]);
    server.enqueue(
      { content: [{ type: "text", text: "one" }] },
      { content: [{ type: "text", text: "two" }] },
    );
    const outcomes = await Promise.allSettled([
      agent.resume("s").finalResult(),
      agent.resume("s").finalResult(),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    expect(server.requests).toHaveLength(1);
  });

  it("R16 (shape): resume() checks its arguments strictly", () => {
    const agent = createAgent(agentOptions());
    expect(() => agent.resume("")).toThrow(
      /resume\(\): option "sessionId" must be a non-empty string/,
    );
    expect(() => agent.resume("s", { decisons: {} } as never)).toThrow(
      /ResumeOptions: unknown option "decisons"/,
    );
  });
});

describe("stores that fail, and team mail", () => {
  it("a store that throws mid-run: the run ends error_during_execution naming the store; what was appended stays", async () => {
    const inner = memorySessionStore();
    let appends = 0;
    const flaky: SessionStore = {
      name: "flakyStore(test)",
      load: (id) => inner.load(id),
      append: async (id, version, entries) => {
        appends++;
        if (appends === 3) throw new Error("disk full");
        return inner.append(id, version, entries);
      },
      list: () => inner.list(),
      delete: (id) => inner.delete(id),
    };
    server.enqueue({ content: [toolCall("t1", "a")] });
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: flaky }));
    const result = await agent.run("go", { sessionId: "s" });
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toMatch(
      /the session store flakyStore\(test\) failed to append to the run log of session "s": disk full\. The entries appended before stay; .*agent\.resume\("s"\)/,
    );
    expect(server.requests).toHaveLength(1);
    expect((await inner.load("s")).entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
    ]);
    // Resume once the store works: the call whose result was lost runs again.
    server.enqueue({ content: [{ type: "text", text: "recovered" }] });
    expect((await agent.resume("s").finalResult()).result).toBe("recovered");
  });

  it("team mail picked up at a turn boundary is a log entry: a run aborted before its next model call keeps it for the resumed run", async () => {
    const store = memorySessionStore();
    server.enqueue(
      { content: [toolCall("t1", "a")] },
      { content: [{ type: "text", text: "read the mail" }] },
    );
    const prepared = prepareAgent(
      checkAgentOptions(agentOptions({ tools: [echo] }), "bare"),
      "bare",
      undefined,
    );
    const runtime = await prepared.getRuntime();
    const controller = new AbortController();
    const cut = runAgent(
      runtime,
      { kind: "prompt", prompt: "go", session: { store, sessionId: "member" } },
      controller.signal,
      {
        parentToolUseId: null,
        emit: () => {},
        depth: 0,
        beforeModelCall: () => {
          controller.abort();
          return ["Reply from writer: the draft is ready"];
        },
      },
    );
    await expect(cut).rejects.toMatchObject({ name: "AbortError" });
    expect(server.requests).toHaveLength(1);
    const { entries } = await store.load("member");
    expect(entries.at(-1)).toMatchObject({
      type: "mail",
      texts: ["Reply from writer: the draft is ready"],
    });
    const result = await createBareAgent(agentOptions({ tools: [echo], sessionStore: store }))
      .resume("member")
      .finalResult();
    expect(result.result).toBe("read the mail");
    const sent = requestMessages(1) as ModelMessage[];
    expect(sent.at(-1)?.content).toEqual([
      { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: "echo: a" }] },
      { type: "text", text: "Reply from writer: the draft is ready" },
    ]);
  });
});

describe("query objects", () => {
  it("finalResult() drains a query nobody iterates, and resolves as the result passes when someone does", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "one" }] },
      { content: [{ type: "text", text: "two" }] },
    );
    const agent = createAgent(agentOptions());
    const first = agent.query("a");
    const result = await first.finalResult();
    expect(result.result).toBe("one");
    expect(await first.finalResult()).toBe(result);
    const second = agent.query("b");
    const pending = second.finalResult.bind(second);
    const types: string[] = [];
    for await (const message of second) {
      types.push(message.type);
      if (message.type === "system") expect(typeof pending).toBe("function");
    }
    expect((await second.finalResult()).result).toBe("two");
    expect(types).toEqual(["system", "assistant", "result"]);
  });

  it("R22: the new options are checked strictly", () => {
    const agent = createAgent(agentOptions());
    expect(() => agent.query("x", { sesionId: "s" } as never)).toThrow(
      'QueryOptions: unknown option "sesionId". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(() => createAgent(agentOptions({ sessionStore: {} as never }))).toThrow(
      /AgentOptions: option "sessionStore" must be a SessionStore/,
    );
  });

  it("the memory store is per agent unless shared", async () => {
    server.enqueue({ content: [{ type: "text", text: "one" }] });
    const a = createAgent(agentOptions());
    const b = createAgent(agentOptions());
    await a.run("x", { sessionId: "s" });
    expect(await a.sessionStore.list()).toEqual(["s"]);
    expect(await b.sessionStore.list()).toEqual([]);
    const entries: readonly SessionEntry[] = (await a.sessionStore.load("s")).entries;
    expect(entries).toHaveLength(3);
  });
});

describe("observers and the store interface (R3, R10)", () => {
  it("R3: the SDK messages and trace events are observers of the logged steps: one assistant message per reply entry, one user message per completed batch, in log order", async () => {
    const store = memorySessionStore();
    const traced: string[] = [];
    server.enqueue(
      { content: [toolCall("a", "1"), toolCall("b", "2")] },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent(
      agentOptions({
        tools: [echo],
        sessionStore: store,
        onTrace: (event) => {
          if (event.type === "model_request_finished" || event.type === "tool_call_finished")
            traced.push(event.type);
        },
      }),
    );
    const messages = await collect(agent.query("go", { sessionId: "obs" }));
    const { entries } = await store.load("obs");
    const replies = entries.filter((entry) => entry.type === "reply");
    const assistant = messages.filter((message) => message.type === "assistant");
    expect(assistant.map((message) => message.message)).toEqual(
      replies.map((entry) => entry.message),
    );
    const user = messages.filter((message) => message.type === "user");
    expect(user).toHaveLength(1);
    const results = entries.filter((entry) => entry.type === "tool_result");
    expect(user[0]?.message.content).toEqual(
      ["a", "b"].map((id) => results.find((entry) => entry.toolUseId === id)?.block),
    );
    expect(traced).toEqual([
      "model_request_finished",
      "tool_call_finished",
      "tool_call_finished",
      "model_request_finished",
    ]);
  });

  it("R10: any object with load, append, list and delete is a session store; it only keeps JSON it is given", async () => {
    const kept = new Map<string, string[]>();
    const minimal: SessionStore = {
      async load(id) {
        const texts = kept.get(id) ?? [];
        return {
          entries: texts.map((text) => JSON.parse(text) as SessionEntry),
          version: texts.length,
        };
      },
      async append(id, version, entries) {
        const texts = kept.get(id) ?? [];
        if (texts.length !== version) throw new Error("conflict");
        kept.set(id, [...texts, ...entries.map((entry) => JSON.stringify(entry))]);
        return texts.length + entries.length;
      },
      async list() {
        return [...kept.keys()].sort();
      },
      async delete(id) {
        return kept.delete(id);
      },
    };
    server.enqueue(
      { content: [{ type: "text", text: "one" }] },
      { content: [{ type: "text", text: "two" }] },
    );
    const agent = createAgent(agentOptions({ sessionStore: minimal }));
    await agent.run("first", { sessionId: "m" });
    const second = await agent.run("second", { sessionId: "m" });
    expect(second.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(await minimal.list()).toEqual(["m"]);
    expect(kept.get("m")?.every((text) => typeof JSON.parse(text).v === "number")).toBe(true);
  });
});
