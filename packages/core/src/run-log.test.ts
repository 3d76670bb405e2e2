import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  createAgent,
  endRun,
  type JsonValue,
  memorySessionStore,
  RUN_LOG_VERSION,
  type SessionEntry,
  SessionError,
  stepMessages,
} from "./index.js";
import { nextStep } from "./next-step.js";
import { RunLogState } from "./run-log-state.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const ran: string[] = [];
const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => {
  ran.push(text);
  return { content: `echo: ${text}` };
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-run-log",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    tools: [echo],
    ...extra,
  };
}

// Entries as the loop writes them.
const usage = {
  inputTokens: 1,
  outputTokens: 1,
  cacheReadInputTokens: 0,
  cacheCreationInputTokens: 0,
};
const started = (runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "run_started",
  runId,
  time: "2025-01-01T00:00:00.000Z",
  message: { role: "user", content: `prompt of ${runId}` },
});
const call = (id: string) => ({ type: "tool_use" as const, id, name: "echo", input: { text: id } });
const reply = (turn: number, content: JsonValue[], runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "reply",
  runId,
  turn,
  message: { role: "assistant", content },
  stopReason: content.some((block) => (block as { type: string }).type === "tool_use")
    ? "tool_use"
    : "end_turn",
  usage,
});
const result = (id: string, runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "tool_result",
  runId,
  toolUseId: id,
  toolName: "echo",
  status: "completed",
  block: { type: "tool_result", tool_use_id: id, content: [{ type: "text", text: `echo: ${id}` }] },
});
const finished = (numTurns: number, runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "run_finished",
  runId,
  subtype: "success",
  result: "done",
  errors: [],
  numTurns,
  usage,
});
const text = (value: string) => ({ type: "text" as const, text: value });
const interrupted = (approvalId: string, toolUseId: string, runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "interrupt",
  runId,
  approvals: [{ approvalId, toolUseId, toolName: "echo", kind: "tool", input: {} }],
});
const resumedEntry = (runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "run_resumed",
  runId,
  time: "2025-01-01T00:00:01.000Z",
});
const decided = (decisions: JsonValue, runId = "r1"): SessionEntry => ({
  v: RUN_LOG_VERSION,
  type: "decisions",
  runId,
  decisions,
});

async function storeWith(entries: readonly SessionEntry[]) {
  const store = memorySessionStore();
  await store.append("s1", 0, entries);
  return store;
}

async function caught(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  return "no error";
}

/** Every way a stored log is folded: a new prompt, resume(), step(), stepMessages(), endRun(). */
const paths: readonly [string, (entries: readonly SessionEntry[]) => Promise<unknown>][] = [
  [
    "run() with sessionId",
    async (entries) =>
      createAgent(agentOptions({ sessionStore: await storeWith(entries) })).run("next", {
        sessionId: "s1",
      }),
  ],
  [
    "query() with sessionId",
    async (entries) =>
      createAgent(agentOptions({ sessionStore: await storeWith(entries) }))
        .query("next", { sessionId: "s1" })
        .finalResult(),
  ],
  [
    "resume()",
    async (entries) =>
      createAgent(agentOptions({ sessionStore: await storeWith(entries) }))
        .resume("s1")
        .finalResult(),
  ],
  [
    "step()",
    async (entries) =>
      createAgent(agentOptions({ sessionStore: await storeWith(entries) })).step("s1"),
  ],
  [
    "stepMessages()",
    async (entries) => stepMessages(entries, { sessionId: "s1", runId: "r1", step: 1 }),
  ],
  [
    "endRun()",
    async (entries) =>
      endRun({ store: await storeWith(entries), sessionId: "s1", errors: ["ended by a test"] }),
  ],
];

/** The damaged logs of H24: the log, the index of the entry refused, and the rule it names. */
const damaged: readonly [string, SessionEntry[], number, RegExp][] = [
  [
    "a tool_result for an id no reply asked for",
    [started(), reply(1, [call("a")]), result("zzz")],
    2,
    /answers the tool call "zzz", which the latest reply did not make/,
  ],
  [
    "a second result for one id",
    [started(), reply(1, [call("a"), call("b")]), result("a"), result("a")],
    3,
    /is a second result for the tool call "a"/,
  ],
  [
    "entries before run_started",
    [reply(1, [text("hi")]), started(), reply(1, [text("hello")]), finished(1)],
    0,
    /comes before the first run_started entry/,
  ],
  [
    "a reply whose role is not assistant",
    [
      started(),
      { ...reply(1, [text("hi")]), message: { role: "user", content: [text("hi")] } },
      finished(1),
    ],
    1,
    /is a reply whose message has the role "user", not "assistant"/,
  ],
  [
    "a log with no run_started",
    [{ v: RUN_LOG_VERSION, type: "run_resumed", runId: "r1", time: "" }, finished(1)],
    0,
    /comes before the first run_started entry/,
  ],
  [
    "a run_started while the run before has calls without results",
    [
      started(),
      reply(1, [call("a")]),
      started("r2"),
      reply(1, [text("x")], "r2"),
      finished(1, "r2"),
    ],
    2,
    /starts run "r2" while run "r1" is unfinished/,
  ],
  [
    "a history on a run_started that is not the log's first entry",
    [
      started("r0"),
      reply(1, [text("hi")], "r0"),
      finished(1, "r0"),
      { ...started(), history: [{ role: "user", content: "q" }] },
    ],
    3,
    /holds a history, but only the log's first run_started may/,
  ],
  [
    "a reply whose turn is not the run's next",
    [started(), { ...reply(1, [text("x")]), turn: -1e9 }],
    1,
    /is the reply of turn -1000000000, but the run's next turn is 1/,
  ],
  [
    "a tool_result of another run",
    [started(), reply(1, [call("a")]), result("a", "OTHER")],
    2,
    /belongs to run "OTHER", but the latest run is "r1"/,
  ],
  [
    "decisions without one for a pending approval (an id named like a prototype member)",
    [
      started(),
      reply(1, [call("a")]),
      interrupted("constructor", "a"),
      resumedEntry(),
      decided({}),
    ],
    4,
    /has no decision for the pending approval "constructor"/,
  ],
  [
    "a decision for an id the interrupt did not ask about",
    [
      started(),
      reply(1, [call("a")]),
      interrupted("appr_1", "a"),
      resumedEntry(),
      decided({ appr_1: { approved: true }, zzz: { approved: false } }),
    ],
    4,
    /holds a decision for "zzz", which the interrupt did not ask for/,
  ],
  [
    "an interrupt while the one before still waits for decisions",
    [started(), reply(1, [call("a"), call("b")]), interrupted("x", "a"), interrupted("y", "b")],
    3,
    /comes while the interrupt before it still waits for decisions/,
  ],
  [
    "a reply without a stopReason",
    [started(), { ...reply(1, [text("x")]), stopReason: null }],
    1,
    /has no stopReason/,
  ],
  [
    "a tool_result without a string toolName and status",
    [started(), reply(1, [call("a")]), { ...result("a"), status: { x: 1 }, toolName: 5 }],
    2,
    /has no toolName and status \(strings\)/,
  ],
  [
    "a tool_result whose endTurn is not true",
    [started(), reply(1, [call("a")]), { ...result("a"), endTurn: "yes" }],
    2,
    /has an endTurn that is not true/,
  ],
  [
    "a run_finished whose subtype and errors are not a result's",
    [started(), reply(1, [text("x")]), { ...finished(1), subtype: "bogus", errors: [{}] }],
    2,
    /lacks a field of the run's end/,
  ],
  [
    "a tool_result block inside a reply",
    [started(), reply(1, [{ type: "tool_result", tool_use_id: "zz", content: "x" }]), finished(1)],
    1,
    /holds content block 0 of type "tool_result", which an assistant message cannot hold/,
  ],
  [
    "a tool_result block in a prompt",
    [
      {
        ...started(),
        message: {
          role: "user",
          content: [{ type: "tool_result", tool_use_id: "zz", content: "x" }],
        },
      },
    ],
    0,
    /holds content block 0 of type "tool_result", which a prompt cannot hold/,
  ],
  [
    "a block of an unknown type in a reply",
    [started(), reply(1, [{ type: "bogus" }]), finished(1)],
    1,
    /holds content block 0 of type "bogus", which an assistant message cannot hold/,
  ],
  [
    "an opaque block wrapping a tool_use in a reply (a call that would escape its pairing)",
    [
      started(),
      reply(1, [
        { type: "opaque", provider: "anthropic", block: { type: "tool_use", id: "x", input: {} } },
      ]),
      finished(1),
    ],
    1,
    /holds opaque block 0 wrapping a tool_use block/,
  ],
  [
    "an image without a source in a prompt",
    [{ ...started(), message: { role: "user", content: [{ type: "image" }] } }],
    0,
    /holds image block 0 without a valid source/,
  ],
  [
    "a block of an unknown type in a tool result's content",
    [
      started(),
      reply(1, [call("a")]),
      {
        ...result("a"),
        block: { type: "tool_result", tool_use_id: "a", content: [{ type: "bogus" }] },
      },
    ],
    2,
    /holds content block 0 of type "bogus", which a tool result cannot hold/,
  ],
  [
    "an image without a source in a tool result's content",
    [
      started(),
      reply(1, [call("a")]),
      {
        ...result("a"),
        block: { type: "tool_result", tool_use_id: "a", content: [{ type: "image", source: {} }] },
      },
    ],
    2,
    /holds image block 0 without a valid source/,
  ],
  [
    "a history text block without a string text",
    [
      {
        ...started(),
        history: [
          { role: "user", content: [{ type: "text", text: 5 }] },
          { role: "assistant", content: "a" },
        ],
      },
    ],
    0,
    /message 0 holds text block 0 without a string "text"/,
  ],
];

describe("a damaged run log is refused where it is folded (H24)", () => {
  for (const [damage, entries, index, rule] of damaged) {
    for (const [path, fold] of paths) {
      it(`H24: ${damage}: ${path} refuses it with session_log_invalid naming entry ${index}`, async () => {
        ran.length = 0;
        server.enqueue({ content: [text("the model was called")] });
        const error = await caught(fold(entries));
        expect(error).toBeInstanceOf(SessionError);
        expect(error).toMatchObject({ code: "session_log_invalid", sessionId: "s1" });
        expect((error as Error).message).toContain(`Session "s1": run log entry ${index} `);
        expect((error as Error).message).toMatch(rule);
        // Nothing ran and nothing was sent.
        expect(server.requests).toHaveLength(0);
        expect(ran).toEqual([]);
      });
    }
  }

  it("H24: a reply while the calls of the reply before it have no results is refused (a malformed conversation is never sent)", async () => {
    const entries = [started(), reply(1, [call("a")]), reply(2, [text("hi")]), finished(2)];
    server.enqueue({ content: [text("the model was called")] });
    const error = await caught(
      createAgent(agentOptions({ sessionStore: await storeWith(entries) })).run("next", {
        sessionId: "s1",
      }),
    );
    expect(error).toMatchObject({ code: "session_log_invalid" });
    expect((error as Error).message).toMatch(
      /run log entry 2 .*comes while the tool calls of the reply before it have no result \("a"\)/,
    );
    expect(server.requests).toHaveLength(0);
  });

  it("H24: endRun() of a run whose reply repeated a tool_use id logs one result per id, so the log still loads", async () => {
    const store = await storeWith([started(), reply(1, [call("a"), call("a"), call("b")])]);
    const ended = await endRun({ store, sessionId: "s1", errors: ["stuck"] });
    expect(ended.subtype).toBe("error_during_execution");
    const { entries } = await store.load("s1");
    expect(entries.filter((entry) => entry.type === "tool_result").map((e) => e.toolUseId)).toEqual(
      ["a", "b"],
    );
    expect(() => stepMessages(entries, { sessionId: "s1", runId: "r1", step: 1 })).not.toThrow();
  });

  it("H24: a valid log of two runs, an interrupt and its decisions still loads and continues", async () => {
    const entries: SessionEntry[] = [
      started("r0"),
      reply(1, [call("x")], "r0"),
      result("x", "r0"),
      reply(2, [text("first done")], "r0"),
      finished(2, "r0"),
      started(),
      { v: RUN_LOG_VERSION, type: "mail", runId: "r1", texts: ["from a teammate"] },
      reply(1, [call("a"), call("b")]),
      {
        v: RUN_LOG_VERSION,
        type: "interrupt",
        runId: "r1",
        approvals: [
          { approvalId: "appr_1", toolUseId: "a", toolName: "echo", kind: "tool", input: {} },
        ],
      },
      { v: RUN_LOG_VERSION, type: "run_resumed", runId: "r1", time: "" },
      {
        v: RUN_LOG_VERSION,
        type: "decisions",
        runId: "r1",
        decisions: { appr_1: { approved: true } },
      },
      result("b"),
    ];
    ran.length = 0;
    server.enqueue({ content: [text("all done")] });
    const done = await createAgent(agentOptions({ sessionStore: await storeWith(entries) }))
      .resume("s1")
      .finalResult();
    expect(done).toMatchObject({ subtype: "success", result: "all done" });
    expect(ran).toEqual(["a"]);
  });
});

describe("what the folded log says about a run's decisions (R15)", () => {
  it("R15: each decisions entry of a run is kept as the approval ids it answered, in log order, and a new run starts with none", () => {
    const twoInterrupts: SessionEntry = {
      v: RUN_LOG_VERSION,
      type: "interrupt",
      runId: "r1",
      approvals: [
        { approvalId: "appr_a", toolUseId: "a", toolName: "echo", kind: "tool", input: {} },
        { approvalId: "appr_b", toolUseId: "b", toolName: "echo", kind: "tool", input: {} },
      ],
    };
    const state = new RunLogState();
    for (const entry of [
      started(),
      reply(1, [call("a"), call("b"), call("c")]),
      twoInterrupts,
      decided({ appr_a: { approved: true }, appr_b: { approved: false } }),
      result("a"),
      result("b"),
      // The resumed batch paused again, for its last call.
      interrupted("appr_c", "c"),
      decided({ appr_c: { approved: true } }),
    ]) {
      state.load("s1", entry);
    }
    const run = state.run!;
    expect(run.answeredApprovalIds).toEqual([new Set(["appr_a", "appr_b"]), new Set(["appr_c"])]);
    for (const entry of [result("c"), reply(2, [text("done")]), finished(2), started("r2")]) {
      state.load("s1", entry);
    }
    expect(state.run!.runId).toBe("r2");
    expect(state.run!.answeredApprovalIds).toEqual([]);
    // The finished run's record keeps what it answered.
    expect(run.answeredApprovalIds).toHaveLength(2);
  });
});

describe("a run that ended with calls without results (H24)", () => {
  const body = (index: number) =>
    server.requests[index]?.body as { messages: { role: string; content: unknown }[] };

  it("H24: after a run whose reply repeated a tool_use id (H13), the session's next prompt is sent as a well-formed conversation", async () => {
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ sessionStore: store }));
    server.enqueue({ content: [call("dup"), { ...call("dup"), input: { text: "b" } }] });
    const first = await agent.run("go", { sessionId: "s1" });
    expect(first.subtype).toBe("error_during_execution");
    server.enqueue({ content: [text("fine")] });
    const next = await agent.run("next", { sessionId: "s1" });
    expect(next).toMatchObject({ subtype: "success", result: "fine" });
    // The reply held only the two calls with one id: it is left out of what is sent.
    expect(body(1).messages).toEqual([
      { role: "user", content: "go" },
      { role: "user", content: "next" },
    ]);
  });

  it("H24: a reply that repeated a tool_use id keeps its text for the next prompt, without the calls", async () => {
    const entries = [
      started(),
      reply(1, [text("Two at once."), call("d"), call("d")]),
      { ...finished(1), subtype: "error_during_execution" },
    ];
    server.enqueue({ content: [text("fine")] });
    const next = await createAgent(agentOptions({ sessionStore: await storeWith(entries) })).run(
      "next",
      { sessionId: "s1" },
    );
    expect(next.subtype).toBe("success");
    expect(body(0).messages).toEqual([
      { role: "user", content: "prompt of r1" },
      { role: "assistant", content: [text("Two at once.")] },
      { role: "user", content: "next" },
    ]);
  });

  it("H24: a run_finished that closes calls without results answers each with an error result for the next prompt, keeping the results logged", async () => {
    const entries = [
      started(),
      reply(1, [call("a"), call("b")]),
      result("a"),
      { ...finished(1), subtype: "error_during_execution" },
    ];
    server.enqueue({ content: [text("fine")] });
    const next = await createAgent(agentOptions({ sessionStore: await storeWith(entries) })).run(
      "next",
      { sessionId: "s1" },
    );
    expect(next.subtype).toBe("success");
    const messages = body(0).messages;
    expect(messages).toHaveLength(4);
    expect(messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: [text("echo: a")] },
        {
          type: "tool_result",
          tool_use_id: "b",
          content: [
            text(expect.stringMatching(/^Tool call "echo" \(b\) has no result: its run ended/)),
          ],
          is_error: true,
        },
      ],
    });
    expect(messages[3]).toEqual({ role: "user", content: "next" });
  });

  it("H24: a run without a session whose reply repeated an id gives result.messages that continue with query({ messages })", async () => {
    const agent = createAgent(agentOptions());
    server.enqueue({ content: [call("dup"), call("dup")] });
    const first = await agent.run("go");
    expect(first.subtype).toBe("error_during_execution");
    server.enqueue({ content: [text("fine")] });
    const next = await agent.run("next", { messages: first.messages });
    expect(next).toMatchObject({ subtype: "success", result: "fine" });
  });

  it("H24: a message naming a stored value quotes at most a short part of it", async () => {
    const long = "x".repeat(100_000);
    const error = await caught(
      createAgent(
        agentOptions({
          sessionStore: await storeWith([started(), reply(1, [call("a")]), result(long)]),
        }),
      ).run("next", { sessionId: "s1" }),
    );
    expect(error).toMatchObject({ code: "session_log_invalid" });
    expect((error as Error).message.length).toBeLessThan(600);
  });

  it("H24: 40,000 consecutive mail entries load in well under 2 s (linear in the log)", () => {
    const entries: SessionEntry[] = [started(), reply(1, [text("x")])];
    for (let index = 0; index < 40_000; index++) {
      entries.push({ v: RUN_LOG_VERSION, type: "mail", runId: "r1", texts: [`m${index}`] });
    }
    const began = performance.now();
    const state = new RunLogState();
    for (const entry of entries) state.load("s1", entry);
    const last = state.messages[state.messages.length - 1]!;
    expect(performance.now() - began).toBeLessThan(2_000);
    expect(last.content).toHaveLength(40_000);
    expect((last.content as readonly { text: string }[])[39_999]).toEqual(text("m39999"));
  });
});

describe("one check of content blocks for history, prompt, reply and tool results (H24)", () => {
  it("H24: a stored tool input or opaque block nested 20,000 levels deep is refused on load, never a RangeError", async () => {
    let deep: JsonValue = {};
    for (let level = 0; level < 20_000; level++) deep = { a: deep };
    for (const [block, rule] of [
      [
        { ...call("a"), input: deep },
        /tool_use block 0 whose input is nested more than 1000 levels deep/,
      ],
      [
        { type: "opaque", provider: "anthropic", block: { type: "server_tool_use", input: deep } },
        /opaque block 0 nested more than 1000 levels deep/,
      ],
    ] as const) {
      const entries = [started(), reply(1, [block as JsonValue, text("x")]), finished(1)];
      // A store that hands the entries back as they are (a Lattice store refuses such an entry).
      const store = {
        load: async () => ({ entries, version: entries.length }),
        append: async () => ({ version: entries.length + 1 }),
        list: async () => ["s1"],
        delete: async () => {},
      };
      server.enqueue({ content: [text("the model was called")] });
      const error = await caught(
        createAgent(agentOptions({ sessionStore: store as never })).run("next", {
          sessionId: "s1",
        }),
      );
      expect(error).toMatchObject({ code: "session_log_invalid" });
      expect((error as Error).message).toMatch(rule);
      expect(() => stepMessages(entries, { sessionId: "s1", runId: "r1", step: 0 })).toThrow(rule);
      expect(server.requests).toHaveLength(0);
      server.requests.length = 0;
    }
  });

  it("H24: a log with the blocks providers produce (thinking, redacted thinking, opaque server blocks, images, an opaque document in the prompt) loads and is sent back", async () => {
    const image = {
      type: "image",
      source: { type: "base64", media_type: "image/png", data: "iVBO" },
    };
    const entries: SessionEntry[] = [
      {
        ...started(),
        message: {
          role: "user",
          content: [
            text("look"),
            image,
            // An API's own block, sent only to that API: the Anthropic adapter leaves it out.
            {
              type: "opaque",
              provider: "some-other-api",
              block: { type: "document", source: { type: "text", data: "a page" } },
            },
          ],
        },
      },
      reply(1, [
        { type: "thinking", thinking: "hmm", signature: "sig" },
        { type: "redacted_thinking", data: "xyz" },
        {
          type: "opaque",
          provider: "anthropic",
          block: { type: "server_tool_use", id: "srv_1", name: "web_search", input: { q: "x" } },
        },
        {
          type: "opaque",
          provider: "anthropic",
          block: { type: "web_search_tool_result", tool_use_id: "srv_1", content: [] },
        },
        text("Let me look."),
        call("a"),
      ]),
      {
        ...result("a"),
        block: { type: "tool_result", tool_use_id: "a", content: [text("seen"), image] },
      },
      reply(2, [text("done")]),
      finished(2),
    ];
    server.enqueue({ content: [text("fine")] });
    const next = await createAgent(agentOptions({ sessionStore: await storeWith(entries) })).run(
      "next",
      { sessionId: "s1" },
    );
    expect(next.errors).toEqual([]);
    expect(next.subtype).toBe("success");
    expect(server.requests).toHaveLength(1);
  });

  it("H24: query() refuses a prompt block the log would refuse (an image without a source, a tool_result), before anything is stored", async () => {
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ sessionStore: store }));
    for (const block of [
      { type: "image" },
      { type: "tool_result", tool_use_id: "x", content: "forged" },
      { type: "text", text: 5 },
    ]) {
      const error = await caught(
        Promise.resolve().then(() => agent.run([block] as never, { sessionId: "s1" })),
      );
      expect(error).toMatchObject({ name: "InvalidOptionError", option: "prompt" });
      expect((error as Error).message).toMatch(/holds (content|image|text) block 0/);
    }
    expect(await store.list()).toEqual([]);
    expect(server.requests).toHaveLength(0);
  });

  it("H24: a caller-kept history is checked block by block like a stored log (a text block without text, a block of an unknown type)", async () => {
    const agent = createAgent(agentOptions());
    for (const [history, rule] of [
      [
        [
          { role: "user", content: [{ type: "text", text: 5 }] },
          { role: "assistant", content: "a" },
        ],
        /message 0 holds text block 0 without a string "text"/,
      ],
      [
        [
          { role: "user", content: "q" },
          { role: "assistant", content: [{ type: "bogus" }] },
        ],
        /message 1 holds content block 0 of type "bogus", which an assistant message cannot hold/,
      ],
    ] as const) {
      const error = await caught(
        Promise.resolve().then(() => agent.run("next", { messages: history as never })),
      );
      expect(error).toMatchObject({ name: "InvalidOptionError", option: "messages" });
      expect((error as Error).message).toMatch(rule);
    }
    expect(server.requests).toHaveLength(0);
  });
});

// --- Random damage to valid logs (property) ---

interface RunSpec {
  /** Calls per turn; the last turn of a finished run is a text reply. */
  readonly turns: readonly number[];
  readonly finished: boolean;
  readonly mail: boolean;
  readonly interrupt: boolean;
  readonly reversed: boolean;
  /** For the last, unfinished run: results dropped from the end (a cut batch). */
  readonly cut: number;
}

/** A log as the loop writes it, from a spec. */
function buildLog(runs: readonly RunSpec[]): SessionEntry[] {
  const entries: SessionEntry[] = [];
  runs.forEach((spec, runIndex) => {
    const runId = `r${runIndex}`;
    const last = runIndex === runs.length - 1;
    const finishes = spec.finished || !last;
    entries.push(started(runId));
    spec.turns.forEach((count, turnIndex) => {
      const turn = turnIndex + 1;
      const final = turnIndex === spec.turns.length - 1;
      if (spec.mail && turn > 1) {
        entries.push({ v: RUN_LOG_VERSION, type: "mail", runId, texts: [`mail ${turn}`] });
      }
      if (count === 0 || (final && finishes)) {
        entries.push(reply(turn, [text(`answer ${turn}`)], runId));
        return;
      }
      const ids = Array.from({ length: count }, (_, i) => `${runId}_${turn}_${i}`);
      entries.push(reply(turn, ids.map(call), runId));
      if (spec.interrupt) {
        entries.push({
          v: RUN_LOG_VERSION,
          type: "interrupt",
          runId,
          approvals: [
            {
              approvalId: `appr_${ids[0]}`,
              toolUseId: ids[0]!,
              toolName: "echo",
              kind: "tool",
              input: {},
            },
          ],
        });
        entries.push({ v: RUN_LOG_VERSION, type: "run_resumed", runId, time: "" });
        entries.push({
          v: RUN_LOG_VERSION,
          type: "decisions",
          runId,
          decisions: { [`appr_${ids[0]}`]: { approved: true } },
        });
      }
      const order = spec.reversed ? [...ids].reverse() : ids;
      const kept =
        final && !finishes ? order.slice(0, Math.max(0, order.length - spec.cut)) : order;
      for (const id of kept) entries.push(result(id, runId));
    });
    if (finishes) entries.push(finished(spec.turns.length, runId));
  });
  return entries;
}

const runSpec = fc.record({
  turns: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 4 }),
  finished: fc.boolean(),
  mail: fc.boolean(),
  interrupt: fc.boolean(),
  reversed: fc.boolean(),
  cut: fc.integer({ min: 0, max: 3 }),
});

const oddValue = fc.constantFrom<unknown>(null, undefined, 0, 7, "", "x", [], {}, true, [null]);

type Damage = (entries: SessionEntry[]) => void;

const damage: fc.Arbitrary<Damage> = fc.oneof(
  fc.nat().map(
    (i): Damage =>
      (entries) =>
        void entries.splice(i % entries.length, 1),
  ),
  fc.nat().map(
    (i): Damage =>
      (entries) => {
        const at = i % entries.length;
        entries.splice(at, 0, structuredClone(entries[at]!));
      },
  ),
  fc.tuple(fc.nat(), fc.nat()).map(
    ([i, j]): Damage =>
      (entries) => {
        const a = i % entries.length;
        const b = j % entries.length;
        [entries[a], entries[b]] = [entries[b]!, entries[a]!];
      },
  ),
  fc.nat().map(
    (i): Damage =>
      (entries) =>
        void entries.splice(0, (i % entries.length) + 1),
  ),
  fc.tuple(fc.nat(), fc.nat(), oddValue).map(
    ([i, k, value]): Damage =>
      (entries) => {
        const entry = { ...entries[i % entries.length]! } as Record<string, unknown>;
        const keys = Object.keys(entry);
        entry[keys[k % keys.length]!] = value;
        entries[i % entries.length] = entry as SessionEntry;
      },
  ),
  // A field one level down: the message's role or content, the block, an approval.
  fc.tuple(fc.nat(), fc.nat(), oddValue).map(
    ([i, k, value]): Damage =>
      (entries) => {
        const at = i % entries.length;
        const entry = structuredClone(entries[at]!) as Record<string, unknown>;
        for (const key of ["message", "block", "approvals", "decisions", "history"]) {
          const inner = entry[key];
          if (inner !== null && typeof inner === "object") {
            const target = (Array.isArray(inner) ? inner[0] : inner) as Record<string, unknown>;
            if (target === undefined || target === null || typeof target !== "object") continue;
            const keys = Object.keys(target);
            if (keys.length > 0) target[keys[k % keys.length]!] = value;
            break;
          }
        }
        entries[at] = entry as SessionEntry;
      },
  ),
  fc.tuple(fc.nat(), fc.string()).map(
    ([i, id]): Damage =>
      (entries) => {
        const at = i % entries.length;
        const entry = entries[at]!;
        if (entry.type === "tool_result") entries[at] = { ...entry, toolUseId: id };
      },
  ),
  fc.nat().map(
    (i): Damage =>
      (entries) => {
        const at = i % entries.length;
        const entry = entries[at]!;
        const content = (entry.message as { content?: JsonValue[] } | undefined)?.content;
        if (entry.type === "reply" && Array.isArray(content)) {
          entries[at] = { ...entry, message: { role: "assistant", content: [...content, null] } };
        }
      },
  ),
  // A reply that repeats a tool_use id (H13), as a faulty model or server sends it.
  fc.nat().map(
    (i): Damage =>
      (entries) => {
        const at = i % entries.length;
        const entry = entries[at]!;
        const content = (entry.message as { content?: JsonValue[] } | undefined)?.content;
        if (entry.type === "reply" && Array.isArray(content) && content.length > 0) {
          entries[at] = {
            ...entry,
            message: { role: "assistant", content: [...content, content[0]!] },
          };
        }
      },
  ),
);

/**
 * Folds a stored log as the loading paths do; when the next step ends the run, its
 * `run_finished` is applied as the loop would append it.
 */
function fold(entries: readonly SessionEntry[]): RunLogState {
  const state = new RunLogState();
  for (const entry of entries) state.load("s1", entry);
  const run = state.run;
  if (run !== undefined && !run.finished) {
    const step = nextStep(run, 10);
    if (step.type === "finish") {
      state.load("s1", {
        v: RUN_LOG_VERSION,
        type: "run_finished",
        runId: run.runId,
        subtype: step.subtype,
        result: step.result,
        errors: [...step.errors],
        numTurns: run.numTurns,
        usage,
      });
    }
  }
  return state;
}

/**
 * The conversation the next model call gets (the run's next step, or the next prompt once it
 * finished) is one the API accepts: every tool_use of an assistant message is answered in the
 * next message, which is a user message, with one tool_result per id; no tool_result appears
 * without its tool_use in the message before; no id is used twice in a message. While the run
 * still has calls to run, only its latest reply may wait for results.
 */
function expectWellFormed(state: RunLogState): void {
  const messages = state.messages;
  const run = state.run;
  const waiting = run !== undefined && !run.finished && nextStep(run, 10).type === "batch";
  messages.forEach((message, index) => {
    expect(message.role === "user" || message.role === "assistant").toBe(true);
    const blocks = Array.isArray(message.content) ? message.content : [];
    const previous = messages[index - 1];
    const calls = new Set(
      previous?.role === "assistant" && Array.isArray(previous.content)
        ? previous.content.flatMap((block) => (block.type === "tool_use" ? [block.id] : []))
        : [],
    );
    const answered = new Set<string>();
    for (const block of blocks) {
      expect(block).not.toBeNull();
      if (block.type !== "tool_result") continue;
      expect(message.role).toBe("user");
      expect(calls.has(block.tool_use_id)).toBe(true);
      expect(answered.has(block.tool_use_id)).toBe(false);
      answered.add(block.tool_use_id);
    }
    if (previous?.role === "assistant")
      expect([...calls].every((id) => answered.has(id))).toBe(true);
    if (message.role !== "assistant") return;
    const ids = blocks.flatMap((block) => (block.type === "tool_use" ? [block.id] : []));
    if (ids.length === 0) return;
    expect(new Set(ids).size).toBe(ids.length);
    const next = messages[index + 1];
    if (next === undefined) {
      // Only the latest reply of a run whose calls run next may be unanswered.
      expect(waiting).toBe(true);
      return;
    }
    expect(next.role).toBe("user");
  });
  if (run !== undefined && !run.finished && nextStep(run, 10).type === "model") {
    // The model is called next: the latest reply's calls all have results.
    expect(run.batch === undefined || run.batch.complete).toBe(true);
  }
}

describe("random damage to valid logs (H24, property)", () => {
  it("H24: every valid log loads, and the conversation it gives is well formed", () => {
    fc.assert(
      fc.property(fc.array(runSpec, { minLength: 1, maxLength: 3 }), (runs) => {
        expectWellFormed(fold(buildLog(runs)));
      }),
      { numRuns: 300 },
    );
  });

  it("H24: random damage gives session_log_invalid or a well-formed run, never a TypeError", () => {
    fc.assert(
      fc.property(
        fc.array(runSpec, { minLength: 1, maxLength: 3 }),
        fc.array(damage, { minLength: 1, maxLength: 3 }),
        (runs, damages) => {
          const entries = buildLog(runs);
          for (const apply of damages) if (entries.length > 0) apply(entries);
          let state: RunLogState;
          try {
            state = fold(entries);
          } catch (error) {
            expect(error).toBeInstanceOf(SessionError);
            expect(["session_log_invalid", "session_log_version"]).toContain(
              (error as SessionError).code,
            );
            return;
          }
          expectWellFormed(state);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
