import { anthropic, type ModelMessage, openaiCompatible } from "@lattice/providers";
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedTurn,
} from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { historyProblem } from "./check-history.js";
import {
  type AgentOptions,
  type CompactionEntry,
  clearToolResults,
  compact,
  contextWindowOf,
  createAgent,
  estimateTokens,
  memorySessionStore,
  type RunLogEntry,
  type SDKMessage,
  type SessionStore,
  type TraceEvent,
} from "./index.js";
import { RunLogState } from "./run-log-state.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** 2 KB of text a tool returns. */
const BIG = "x".repeat(2048);

const read = tool("read", "Read a file", z.object({ path: z.string() }), async ({ path }) => ({
  content: `${path}: ${BIG}`,
}));

function isSummaryCall(request: RecordedRequest): boolean {
  return JSON.stringify(request.body).includes("You write summaries of conversations");
}

/**
 * A model that calls `read` `calls` times (one call a turn), then answers "done"; a summary
 * call is answered with a summary. Every request is validated by the server's strict
 * validators, so a run that succeeds sent only valid conversations.
 */
function toolModel(calls: number): (request: RecordedRequest) => ScriptedTurn {
  let made = 0;
  return (request) => {
    if (isSummaryCall(request)) {
      return { content: [{ type: "text", text: "SUMMARY: read files 1..n, all fine." }] };
    }
    if (made < calls) {
      made++;
      return { content: [{ type: "tool_use", name: "read", input: { path: `f${made}.txt` } }] };
    }
    return { content: [{ type: "text", text: "done" }] };
  };
}

async function start(
  respond: (request: RecordedRequest) => ScriptedTurn,
  extra: Record<string, unknown> = {},
): Promise<ScriptedModelServer> {
  server = await createScriptedModelServer({ respond, ...extra });
  return server;
}

function options(s: ScriptedModelServer, extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    provider: anthropic({ baseURL: s.anthropicBaseURL, apiKey: "sk-test-context" }),
    model: "scripted",
    tools: [read],
    ...extra,
  };
}

function messagesOf(request: RecordedRequest): ModelMessage[] {
  return (request.body as { messages: ModelMessage[] }).messages;
}

function modelCalls(s: ScriptedModelServer): RecordedRequest[] {
  return s.requests.filter(
    (request) => !isSummaryCall(request) && request.path.endsWith("/messages"),
  );
}

async function entriesOf(store: SessionStore, sessionId: string): Promise<RunLogEntry[]> {
  return (await store.load(sessionId)).entries as unknown as RunLogEntry[];
}

describe("knowing the size (C1)", () => {
  it("C1: result.usage and the next init report the context size (input + cache + output of the last call) and the window", async () => {
    const s = await start(() => ({
      content: [{ type: "text", text: "hi" }],
      usage: {
        inputTokens: 100,
        outputTokens: 7,
        cacheReadInputTokens: 50,
        cacheCreationInputTokens: 25,
      },
    }));
    const store = memorySessionStore();
    const agent = createAgent({ ...options(s), model: "claude-sonnet-4-6", sessionStore: store });
    const first = await agent.run("Hello", { sessionId: "c1" });
    expect(first.usage.contextTokens).toBe(182);
    expect(first.usage.contextWindow).toBe(200_000);
    const messages: SDKMessage[] = [];
    for await (const message of agent.query("Again", { sessionId: "c1" })) messages.push(message);
    const init = messages[0]!;
    expect(init).toMatchObject({
      type: "system",
      subtype: "init",
      contextTokens: 182,
      contextWindow: 200_000,
    });
    // The reply entry keeps what the API counted (R1): the size is derived from it.
    const reply = (await entriesOf(store, "c1")).find((entry) => entry.type === "reply");
    expect(reply?.usage).toMatchObject({
      inputTokens: 100,
      cacheReadInputTokens: 50,
      cacheCreationInputTokens: 25,
    });
  });

  it("C1: the window is known for listed models, and not guessed for others", () => {
    expect(contextWindowOf("claude-opus-4-5")).toBe(200_000);
    expect(contextWindowOf("deepseek-v4-flash")).toBe(128_000);
    expect(contextWindowOf("gpt-4.1-mini")).toBe(1_047_576);
    expect(contextWindowOf("my-local-model")).toBeUndefined();
  });

  it("C1: the estimate is about 4 characters a token, a message's overhead included", () => {
    expect(estimateTokens([{ role: "user", content: "a".repeat(400) }])).toBe(104);
    const withTool: ModelMessage[] = [
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "t1", name: "read", input: { path: "a" } }],
      },
      {
        role: "user",
        content: [
          { type: "tool_result", tool_use_id: "t1", content: [{ type: "text", text: BIG }] },
        ],
      },
    ];
    expect(estimateTokens(withTool)).toBeGreaterThan(512);
    expect(estimateTokens(withTool)).toBeLessThan(560);
  });

  it("C1: between calls the size is the API's count plus the estimate of what was added (a run without strategies changes nothing)", async () => {
    const s = await start(toolModel(3));
    const agent = createAgent({
      ...options(s),
      contextManagement: { maxInputTokens: 1_000_000, strategies: [compact()] },
    });
    const result = await agent.run("Read three files");
    expect(result.subtype).toBe("success");
    expect(modelCalls(s)).toHaveLength(4);
    expect(s.requests.some(isSummaryCall)).toBe(false);
  });
});

describe("keeping it under the window (C2, C3)", () => {
  it("C2: clearToolResults replaces older results with a placeholder naming the tool and the size; the calls stay, every request valid", async () => {
    const s = await start(toolModel(6));
    const store = memorySessionStore();
    const messages: SDKMessage[] = [];
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: {
        maxInputTokens: 2000,
        strategies: [clearToolResults({ keepLast: 2 })],
      },
    });
    for await (const message of agent.query("Read six files", { sessionId: "clear" })) {
      messages.push(message);
    }
    const result = messages.at(-1)!;
    expect(result).toMatchObject({ type: "result", subtype: "success" });
    const last = messagesOf(modelCalls(s).at(-1)!);
    const results = last.flatMap((message) =>
      Array.isArray(message.content)
        ? message.content.filter((block) => block.type === "tool_result")
        : [],
    );
    expect(results).toHaveLength(6);
    const texts = results.map((block) => JSON.stringify(block));
    // The latest two stay whole, the older ones are placeholders.
    expect(texts.slice(-2).every((text) => text.includes(BIG))).toBe(true);
    expect(texts.slice(0, 4).every((text) => !text.includes(BIG))).toBe(true);
    expect(texts[0]).toContain("The result of read was cleared");
    expect(historyProblem(last)).toBeUndefined();
    // Each compaction is an entry and a message; the log keeps every original result.
    const entries = await entriesOf(store, "clear");
    const compactions = entries.filter((entry) => entry.type === "compaction") as CompactionEntry[];
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions[0]).toMatchObject({
      strategy: "clear_tool_results",
      trigger: "threshold",
      replaced: 0,
    });
    expect(compactions[0]!.tokensAfter).toBeLessThan(compactions[0]!.tokensBefore);
    const stored = entries.filter((entry) => entry.type === "tool_result");
    expect(stored.every((entry) => JSON.stringify(entry).includes(BIG))).toBe(true);
    expect(
      messages.filter(
        (message) => message.type === "system" && message.subtype === "compact_boundary",
      ),
    ).toHaveLength(compactions.length);
  });

  it("C2: compact replaces older turns with a model-written summary; the latest turns stay; the call counts in usage (C5)", async () => {
    const s = await start(toolModel(6));
    const store = memorySessionStore();
    const traces: TraceEvent[] = [];
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      onTrace: (event) => traces.push(event),
      contextManagement: {
        maxInputTokens: 2500,
        strategies: [compact({ keepLastTurns: 2, instructions: "Keep the file names." })],
      },
    });
    const result = await agent.run("Read six files", { sessionId: "compact" });
    expect(result.subtype).toBe("success");
    const summaries = s.requests.filter(isSummaryCall);
    expect(summaries.length).toBeGreaterThan(0);
    const summaryPrompt = JSON.stringify(messagesOf(summaries[0]!));
    expect(summaryPrompt).toContain("Keep the file names.");
    expect(summaryPrompt).toContain("Result of read");
    const after = messagesOf(modelCalls(s).at(-1)!);
    expect(JSON.stringify(after[0])).toContain("SUMMARY: read files");
    expect(after[1]!.role).toBe("assistant");
    expect(historyProblem(after)).toBeUndefined();
    const entries = await entriesOf(store, "compact");
    const compaction = entries.find((entry) => entry.type === "compaction") as CompactionEntry;
    expect(compaction).toMatchObject({ strategy: "compact", trigger: "threshold" });
    expect(compaction.replaced).toBeGreaterThan(1);
    expect(compaction.entries.from).toBe(0);
    expect(compaction.entries.to).toBeGreaterThan(0);
    expect(compaction.usage?.outputTokens).toBeGreaterThan(0);
    // The summary call's usage is in the run's (C5).
    const replies = entries.filter((entry) => entry.type === "reply");
    const replyOutput = replies.reduce(
      (sum, entry) => sum + (entry.type === "reply" ? entry.usage.outputTokens : 0),
      0,
    );
    const compactionOutput = entries
      .filter((entry): entry is CompactionEntry => entry.type === "compaction")
      .reduce((sum, entry) => sum + (entry.usage?.outputTokens ?? 0), 0);
    expect(result.usage.outputTokens).toBe(replyOutput + compactionOutput);
    // Traced as its own chat call, marked.
    const started = traces.filter((event) => event.type === "model_request_started");
    expect(
      started.some(
        (event) => event.type === "model_request_started" && event.purpose === "compaction",
      ),
    ).toBe(true);
    expect(
      traces.some((event) => event.type === "compaction" && event.strategy === "compact"),
    ).toBe(true);
  });

  it("C2: strategies run in order until the request fits: a compact after clearing is not needed", async () => {
    const s = await start(toolModel(5));
    const agent = createAgent({
      ...options(s),
      contextManagement: {
        maxInputTokens: 2200,
        strategies: [clearToolResults({ keepLast: 1 }), compact()],
      },
    });
    const result = await agent.run("Read five files");
    expect(result.subtype).toBe("success");
    expect(s.requests.some(isSummaryCall)).toBe(false);
  });

  it("C2: a user function's conversation is sent, checked as a caller's history; a broken one ends the run naming the problem", async () => {
    const s = await start(toolModel(4));
    function keepPromptAndLast(conversation: readonly ModelMessage[]): readonly ModelMessage[] {
      return [conversation[0]!, ...conversation.slice(-2)];
    }
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 1500, strategies: [keepPromptAndLast] },
    });
    const result = await agent.run("Read four files", { sessionId: "fn" });
    expect(result.subtype).toBe("success");
    const entries = await entriesOf(store, "fn");
    const compaction = entries.find((entry) => entry.type === "compaction") as CompactionEntry;
    expect(compaction).toMatchObject({
      strategy: "keepPromptAndLast",
      messages: expect.any(Array),
    });
    expect(compaction.messages).toHaveLength(3);
    // The call after it sent the function's conversation.
    const calls = modelCalls(s);
    expect(
      calls.some(
        (call) =>
          messagesOf(call).length === 3 && messagesOf(call)[0]!.content === "Read four files",
      ),
    ).toBe(true);

    const s2 = await createScriptedModelServer({ respond: toolModel(4) });
    try {
      function dropResults(conversation: readonly ModelMessage[]): readonly ModelMessage[] {
        return conversation.slice(0, -1);
      }
      const broken = createAgent({
        ...options(s2),
        contextManagement: { maxInputTokens: 1500, strategies: [dropResults] },
      });
      const failed = await broken.run("Read four files");
      expect(failed.subtype).toBe("error_during_execution");
      expect(failed.errors.join(" ")).toContain(
        'strategy "dropResults" returned a conversation the model API would refuse',
      );
    } finally {
      await s2.close();
    }
  });

  it("C2: onCompact may veto a strategy or change a summary's instructions", async () => {
    const s = await start(toolModel(5));
    const seen: string[] = [];
    const agent = createAgent({
      ...options(s),
      contextManagement: {
        maxInputTokens: 2200,
        strategies: [clearToolResults({ keepLast: 1 }), compact()],
        onCompact: (event) => {
          seen.push(event.strategy);
          if (event.strategy === "clear_tool_results") return false;
          return { instructions: "ONLY THE FILE NAMES" };
        },
      },
    });
    const result = await agent.run("Read five files");
    expect(result.subtype).toBe("success");
    expect(seen).toContain("clear_tool_results");
    expect(seen).toContain("compact");
    const summary = s.requests.find(isSummaryCall);
    expect(JSON.stringify(summary?.body)).toContain("ONLY THE FILE NAMES");
  });

  it("C2: bad contextManagement options are refused at createAgent, naming the option", async () => {
    const s = await start(toolModel(0));
    expect(() =>
      createAgent({ ...options(s), contextManagement: { strategies: [compact()] } }),
    ).toThrow(/context window of "scripted" is not in the built-in table/);
    expect(() =>
      createAgent({ ...options(s), contextManagement: { maxInputTokens: 0, strategies: [] } }),
    ).toThrow(/contextManagement.maxInputTokens/);
    expect(() =>
      createAgent({
        ...options(s),
        contextManagement: { maxInputTokens: 10, strategies: [compact({ keepLastTurns: 0 })] },
      }),
    ).toThrow(/keepLastTurns/);
    expect(() =>
      createAgent({
        ...options(s),
        contextManagement: { maxInputTokens: 10, strategy: [] } as never,
      }),
    ).toThrow(/strategy/);
  });

  it("C3: a compaction never separates a tool_use from its tool_result, whatever the conversation (property)", () => {
    const turn = fc.record({
      calls: fc.integer({ min: 0, max: 3 }),
      mail: fc.boolean(),
    });
    fc.assert(
      fc.property(
        fc.array(turn, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        (turns, keep) => {
          const state = new RunLogState();
          state.apply({
            v: 1,
            type: "run_started",
            runId: "r",
            time: "t",
            message: { role: "user", content: "go" },
          });
          let id = 0;
          let turnNumber = 0;
          for (const planned of turns) {
            turnNumber++;
            const calls = Array.from({ length: planned.calls }, () => `t${++id}`);
            state.apply({
              v: 1,
              type: "reply",
              runId: "r",
              turn: turnNumber,
              message: {
                role: "assistant",
                content:
                  calls.length === 0
                    ? [{ type: "text", text: "thinking" }]
                    : calls.map((callId) => ({
                        type: "tool_use" as const,
                        id: callId,
                        name: "read",
                        input: {},
                      })),
              },
              stopReason: calls.length === 0 ? "end_turn" : "tool_use",
              usage: {
                inputTokens: 1,
                outputTokens: 1,
                cacheReadInputTokens: 0,
                cacheCreationInputTokens: 0,
              },
            });
            for (const callId of calls) {
              state.apply({
                v: 1,
                type: "tool_result",
                runId: "r",
                toolUseId: callId,
                toolName: "read",
                status: "completed",
                block: {
                  type: "tool_result",
                  tool_use_id: callId,
                  content: [{ type: "text", text: BIG }],
                },
              });
            }
            if (planned.mail && calls.length > 0)
              state.apply({ v: 1, type: "mail", runId: "r", texts: ["note"] });
            if (calls.length === 0) {
              state.apply({
                v: 1,
                type: "output_feedback",
                runId: "r",
                reason: "invalid",
                text: "again",
              });
            }
          }
          const messages = state.messages;
          // Where compact cuts: an assistant message; the summary (a user message) replaces the rest.
          let seen = 0;
          let cutAt: number | undefined;
          for (let at = messages.length - 1; at > 0; at--) {
            if (messages[at]!.role !== "assistant") continue;
            if (++seen === keep) {
              cutAt = at >= 2 ? at : undefined;
              break;
            }
          }
          if (cutAt === undefined) return;
          state.apply({
            v: 3,
            type: "compaction",
            runId: "r",
            strategy: "compact",
            trigger: "threshold",
            entries: { from: 0, to: state.originOf(cutAt - 1) },
            replaced: cutAt,
            messages: [{ role: "user", content: [{ type: "text", text: "summary" }] }],
            tokensBefore: 100,
            tokensAfter: 10,
          });
          expect(historyProblem(state.messages)).toBeUndefined();
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("overflow (C4)", () => {
  it("C4: without strategies, a request the API refuses as too long ends the run error_context_overflow, naming the tokens and the option", async () => {
    const s = await start(toolModel(10), { contextWindow: 3000 });
    const agent = createAgent(options(s));
    const result = await agent.run("Read ten files");
    expect(result.subtype).toBe("error_context_overflow");
    expect(result.isError).toBe(true);
    expect(result.errors[0]).toMatch(/tokens/);
    expect(result.errors[0]).toContain("contextManagement");
  });

  it("C4: with strategies, an overflow the estimate missed triggers one reactive compaction and one retry", async () => {
    // The threshold is too high to ever trigger: only the API's refusal does.
    const s = await start(toolModel(8), { contextWindow: 3500 });
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: {
        maxInputTokens: 1_000_000,
        strategies: [clearToolResults({ keepLast: 1 })],
      },
    });
    const result = await agent.run("Read eight files", { sessionId: "overflow" });
    expect(result.subtype).toBe("success");
    const compactions = (await entriesOf(store, "overflow")).filter(
      (entry): entry is CompactionEntry => entry.type === "compaction",
    );
    expect(compactions.length).toBeGreaterThan(0);
    expect(compactions.every((entry) => entry.trigger === "overflow")).toBe(true);
  });

  it("C4: when the retry is refused too, the run ends error_context_overflow: one retry, never a loop", async () => {
    const s = await start(toolModel(3), { contextWindow: 50 });
    const agent = createAgent({
      ...options(s),
      contextManagement: {
        maxInputTokens: 1_000_000,
        strategies: [clearToolResults({ keepLast: 0 })],
      },
    });
    const result = await agent.run("Read three files");
    expect(result.subtype).toBe("error_context_overflow");
    // The first call is refused; nothing can be cleared before any result: no retry at all.
    expect(s.requests.length).toBeLessThanOrEqual(2);
  });
});

describe("the compaction's call (C5)", () => {
  it("C5: a budget the summary's call could pass ends the run error_budget before it is made", async () => {
    const s = await start(toolModel(6));
    const agent = createAgent({
      ...options(s),
      maxTotalTokens: 30_000,
      contextManagement: { maxInputTokens: 2500, strategies: [compact({ maxTokens: 50_000 })] },
    });
    const result = await agent.run("Read six files");
    expect(result.subtype).toBe("error_budget");
    expect(result.errors[0]).toContain("compaction");
    expect(s.requests.some(isSummaryCall)).toBe(false);
  });

  it("C5: a crash during the summary's call resumes by compacting again, never by sending the over-long request", async () => {
    let crash = true;
    const model = toolModel(6);
    const s = await start((request) => {
      if (isSummaryCall(request) && crash) {
        crash = false;
        return { fault: "hang" };
      }
      return model(request);
    });
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    const controller = new AbortController();
    const running = agent.run("Read six files", { sessionId: "crash", signal: controller.signal });
    while (!s.requests.some(isSummaryCall)) await new Promise((resolve) => setTimeout(resolve, 5));
    const before = s.requests.length;
    controller.abort();
    await expect(running).rejects.toThrow();
    const result = await agent.resume("crash").finalResult();
    expect(result.subtype).toBe("success");
    // The first request after the crash is the summary again.
    expect(isSummaryCall(s.requests[before]!)).toBe(true);
    const afterSummary = messagesOf(s.requests[before + 1]!);
    expect(JSON.stringify(afterSummary[0])).toContain("SUMMARY");
  });
});

describe("prompt caching (C6)", () => {
  it("C6: breakpoints go after the latest compaction, and the calls after it read the new prefix from the cache", async () => {
    const s = await start(toolModel(10));
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      promptCaching: "auto",
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact({ keepLastTurns: 2 })] },
    });
    expect((await agent.run("Read ten files", { sessionId: "cache" })).subtype).toBe("success");
    const entries = await entriesOf(store, "cache");
    const last = entries.map((entry) => entry.type).lastIndexOf("compaction");
    expect(last).toBeGreaterThan(0);
    const after = entries.slice(last).filter((entry) => entry.type === "reply");
    expect(after.length).toBeGreaterThanOrEqual(2);
    // The first call after it writes the new prefix; the next reads it.
    expect(after[0]!.type === "reply" && after[0]!.usage.cacheCreationInputTokens).toBeGreaterThan(
      0,
    );
    expect(after[1]!.type === "reply" && after[1]!.usage.cacheReadInputTokens).toBeGreaterThan(0);
    const request = modelCalls(s).at(-1)!;
    expect(JSON.stringify(messagesOf(request).at(-1))).toContain("cache_control");
  });
});

describe("server-side editing (C7)", () => {
  it("C7: contextManagement.provider is sent as context_management exactly, with its beta header", async () => {
    const s = await start(() => ({ content: [{ type: "text", text: "ok" }] }));
    const edits = {
      edits: [
        {
          type: "clear_tool_uses_20250919" as const,
          trigger: { type: "input_tokens" as const, value: 30000 },
          keep: { type: "tool_uses" as const, value: 3 },
          clear_at_least: { type: "input_tokens" as const, value: 5000 },
          exclude_tools: ["read"],
        },
      ],
    };
    const agent = createAgent({ ...options(s), contextManagement: { provider: edits } });
    const result = await agent.run("Hi");
    expect(result.subtype).toBe("success");
    const request = s.requests[0]!;
    expect((request.body as { context_management?: unknown }).context_management).toEqual(edits);
    expect(request.headers["anthropic-beta"]).toContain("context-management-2025-06-27");
  });

  it("C7: a provider without server-side editing is refused at createAgent", async () => {
    const s = await start(() => ({ content: [{ type: "text", text: "ok" }] }));
    expect(() =>
      createAgent({
        provider: openaiCompatible({ baseURL: s.openaiBaseURL, apiKey: "sk-test" }),
        model: "scripted",
        contextManagement: { provider: { edits: [{ type: "clear_tool_uses_20250919" }] } },
      }),
    ).toThrow(/does not support/);
  });
});

describe("a long run stays under its threshold (C10)", () => {
  it("C10: over 120 turns of 2 KB results, the tokens each request sends stop growing and stay under the threshold", async () => {
    const s = await start(toolModel(120));
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      maxTurns: 130,
      sessionStore: store,
      contextManagement: {
        maxInputTokens: 6000,
        strategies: [clearToolResults({ keepLast: 4 }), compact({ keepLastTurns: 3 })],
      },
    });
    expect((await agent.run("Read every file", { sessionId: "c10" })).subtype).toBe("success");
    // What the server counted for each of the run's own requests (a quarter of its bytes).
    const sent = (await entriesOf(store, "c10"))
      .filter((entry) => entry.type === "reply")
      .map((entry) => (entry.type === "reply" ? entry.usage.inputTokens : 0));
    expect(sent).toHaveLength(121);
    // Flat: the last 60 requests are no larger than the 40 before them; all under the threshold,
    // within the estimate's error (the threshold is checked on the estimate, C1).
    expect(Math.max(...sent.slice(20))).toBeLessThanOrEqual(6000 * 1.05);
    expect(Math.max(...sent.slice(61))).toBeLessThanOrEqual(Math.max(...sent.slice(20, 61)) * 1.1);
  });
});

describe("both wire protocols (C11)", () => {
  for (const protocol of ["anthropic", "openai"] as const) {
    it(`C11: after clearing and compacting, every ${protocol} request is one the strict validator accepts`, async () => {
      const s = await start(toolModel(8));
      const provider =
        protocol === "anthropic"
          ? anthropic({ baseURL: s.anthropicBaseURL, apiKey: "sk-test" })
          : openaiCompatible({ baseURL: s.openaiBaseURL, apiKey: "sk-test" });
      const agent = createAgent({
        ...options(s),
        provider,
        contextManagement: {
          maxInputTokens: 2200,
          strategies: [clearToolResults({ keepLast: 2 }), compact({ keepLastTurns: 2 })],
        },
      });
      const result = await agent.run("Read eight files");
      // A request the validator refuses is a 400: the run would have failed.
      expect(result.subtype).toBe("success");
      expect(s.requests.filter(isSummaryCall).length + 1).toBeGreaterThan(0);
    });
  }
});

describe("checkpoints (C8)", () => {
  /** The store, with every load's options recorded. */
  function recording(store: SessionStore): { store: SessionStore; loads: unknown[] } {
    const loads: unknown[] = [];
    return {
      loads,
      store: {
        ...store,
        name: store.name,
        checkpoints: store.checkpoints,
        load: (sessionId, options) => {
          loads.push(options);
          return store.load(sessionId, options);
        },
      } as SessionStore,
    };
  }

  it("C8: after a compaction the session gets a checkpoint, and the next prompt loads from it and sends what the whole log gives", async () => {
    const s = await start(toolModel(6));
    const base = memorySessionStore();
    const { store, loads } = recording(base);
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    expect((await agent.run("Read six files", { sessionId: "cp" })).subtype).toBe("success");
    const snapshot = await base.load("cp", { fromCheckpoint: true });
    expect(snapshot.checkpoint?.version).toBe(snapshot.version);
    expect(snapshot.entries).toHaveLength(0);
    loads.length = 0;
    expect((await agent.run("And now?", { sessionId: "cp" })).subtype).toBe("success");
    expect(loads[0]).toEqual({ fromCheckpoint: true });
    const fromCheckpoint = messagesOf(modelCalls(s).at(-1)!);
    // The same conversation, folded from the whole log by a store without checkpoints.
    const state = new RunLogState();
    for (const entry of (await base.load("cp")).entries) state.load("cp", entry);
    expect(fromCheckpoint).toEqual(JSON.parse(JSON.stringify(state.messages.slice(0, -1))));
  });

  it("C8: a damaged checkpoint is passed over: the whole log is folded, nothing is lost", async () => {
    const s = await start(toolModel(2));
    const store = memorySessionStore();
    const agent = createAgent({ ...options(s), sessionStore: store });
    await agent.run("Read two files", { sessionId: "damaged" });
    const { version } = await store.load("damaged");
    expect(
      await store.saveCheckpoint!("damaged", { version, state: { format: 1, messages: "nope" } }),
    ).toBe(true);
    const result = await agent.run("More", { sessionId: "damaged" });
    expect(result.subtype).toBe("success");
    // The whole history went to the model: the prompt of the first run is there.
    expect(JSON.stringify(messagesOf(modelCalls(s).at(-1)!)[0])).toContain("Read two files");
  });

  it("C8: a store without checkpoints still works, and loads the whole log", async () => {
    const s = await start(toolModel(6));
    const base = memorySessionStore();
    const plain: SessionStore = {
      load: (sessionId) => base.load(sessionId),
      append: (...args) => base.append(...args),
      list: () => base.list(),
      delete: (sessionId) => base.delete(sessionId),
    };
    const agent = createAgent({
      ...options(s),
      sessionStore: plain,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    expect((await agent.run("Read six files", { sessionId: "plain" })).subtype).toBe("success");
    expect((await agent.run("Again", { sessionId: "plain" })).subtype).toBe("success");
    expect((await base.load("plain", { fromCheckpoint: true })).checkpoint).toBeUndefined();
  });
});

describe("compaction between runs and across steps (C9, C11)", () => {
  it("C9: agent.compact() makes a finished session's conversation smaller now; the log keeps everything", async () => {
    const s = await start(toolModel(4));
    const store = memorySessionStore();
    const agent = createAgent({ ...options(s), sessionStore: store });
    await agent.run("Read four files", { sessionId: "manual" });
    const entriesBefore = await entriesOf(store, "manual");
    const done = await agent.compact("manual", { strategies: [compact({ keepLastTurns: 1 })] });
    expect(done.compacted).toBe(true);
    expect(done.messagesAfter).toBeLessThan(done.messagesBefore);
    expect(done.tokensAfter).toBeLessThan(done.tokensBefore);
    expect(done.usage.outputTokens).toBeGreaterThan(0);
    expect(done.entries[0]).toMatchObject({
      type: "compaction",
      trigger: "manual",
      strategy: "compact",
    });
    const entriesAfter = await entriesOf(store, "manual");
    expect(entriesAfter.slice(0, entriesBefore.length)).toEqual(entriesBefore);
    await agent.run("Next", { sessionId: "manual" });
    expect(JSON.stringify(messagesOf(modelCalls(s).at(-1)!)[0])).toContain("SUMMARY");
    await expect(agent.compact("nobody")).rejects.toMatchObject({ code: "session_not_found" });
  });

  it("C11: a run taken step by step compacts in its model step; stepMessages gives the boundary with that step", async () => {
    const s = await start(toolModel(6));
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    let step = await agent.step("steps", { prompt: "Read six files" });
    let guard = 0;
    while (step.status === "continue" && guard++ < 50) {
      step = await agent.step("steps", { expectedStep: step.nextStep });
    }
    expect(step.status).toBe("ended");
    const entries = await entriesOf(store, "steps");
    const at = entries.findIndex((entry) => entry.type === "compaction");
    expect(at).toBeGreaterThan(0);
    const { stepMessages } = await import("./index.js");
    const turn = entries.slice(0, at).filter((entry) => entry.type === "reply").length;
    const messages = stepMessages((await store.load("steps")).entries, {
      sessionId: "steps",
      runId: entries[0]!.runId,
      step: 2 * turn,
    });
    expect(messages.map((message) => message.type)).toEqual(["system", "assistant"]);
  });

  it("C11: a step that dies during the summary's call is taken again by compacting again, never by sending the over-long request", async () => {
    let hang = true;
    const model = toolModel(6);
    const s = await start((request) => {
      if (isSummaryCall(request) && hang) {
        hang = false;
        return { fault: "hang" };
      }
      return model(request);
    });
    const store = memorySessionStore();
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    let step = await agent.step("dies", { prompt: "Read six files" });
    let died: number | undefined;
    for (let guard = 0; step.status === "continue" && guard < 50; guard++) {
      const controller = new AbortController();
      const taking = agent.step("dies", { expectedStep: step.nextStep, signal: controller.signal });
      const watch = setInterval(() => {
        if (s.requests.some(isSummaryCall) && died === undefined) {
          died = step.status === "continue" ? step.nextStep : undefined;
          controller.abort();
        }
      }, 5);
      try {
        step = await taking;
      } catch {
        // The worker died mid-step: the same step is taken again (a queue's retry).
        const before = s.requests.length;
        step = await agent.step("dies", { expectedStep: died! });
        expect(isSummaryCall(s.requests[before]!)).toBe(true);
      } finally {
        clearInterval(watch);
      }
    }
    expect(died).toBeDefined();
    expect(step.status).toBe("ended");
    const summaries = s.requests.filter(isSummaryCall);
    expect(summaries).toHaveLength(2);
    // No request but the summary's went out between the two summary calls.
    const first = s.requests.indexOf(summaries[0]!);
    expect(s.requests.indexOf(summaries[1]!)).toBe(first + 1);
  });
});

describe("edges found in review (C3, C8)", () => {
  it("C3: results the model has not seen yet are never cleared, however many one reply asked for", async () => {
    let turn = 0;
    const s = await start((request) => {
      turn++;
      if (turn === 1) {
        return {
          content: Array.from({ length: 6 }, (_, index) => ({
            type: "tool_use" as const,
            name: "read",
            input: { path: `p${index}` },
          })),
        };
      }
      void request;
      return { content: [{ type: "text", text: "done" }] };
    });
    const agent = createAgent({
      ...options(s),
      contextManagement: { maxInputTokens: 3000, strategies: [clearToolResults({ keepLast: 3 })] },
    });
    expect((await agent.run("Read six at once")).subtype).toBe("success");
    const second = JSON.stringify(messagesOf(s.requests[1]!));
    expect(second.split(BIG).length - 1).toBe(6);
  });

  it("C3: a cleared result is found by its message, though a server repeats tool_use ids across turns", () => {
    const state = new RunLogState();
    state.apply({
      v: 1,
      type: "run_started",
      runId: "r",
      time: "t",
      message: { role: "user", content: "go" },
    });
    const usage = {
      inputTokens: 1,
      outputTokens: 1,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
    for (const turn of [1, 2]) {
      state.apply({
        v: 1,
        type: "reply",
        runId: "r",
        turn,
        message: {
          role: "assistant",
          content: [{ type: "tool_use", id: "call_lattice_0", name: "read", input: {} }],
        },
        stopReason: "tool_use",
        usage,
      });
      state.apply({
        v: 1,
        type: "tool_result",
        runId: "r",
        toolUseId: "call_lattice_0",
        toolName: "read",
        status: "completed",
        block: {
          type: "tool_result",
          tool_use_id: "call_lattice_0",
          content: [{ type: "text", text: `turn ${turn}` }],
        },
      });
    }
    state.apply({
      v: 3,
      type: "compaction",
      runId: "r",
      strategy: "clear_tool_results",
      trigger: "threshold",
      entries: { from: 2, to: 2 },
      replaced: 0,
      cleared: [{ toolUseId: "call_lattice_0", placeholder: "[cleared]", message: 2 }],
      tokensBefore: 10,
      tokensAfter: 5,
    });
    const texts = state.messages.map((message) => JSON.stringify(message.content));
    expect(texts[2]).toContain("[cleared]");
    expect(texts[4]).toContain("turn 2");
  });

  it("C2: a function that gives the conversation back unchanged appends nothing", async () => {
    const s = await start(toolModel(4));
    const store = memorySessionStore();
    function keepAll(conversation: readonly ModelMessage[]): readonly ModelMessage[] {
      return conversation;
    }
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 1500, strategies: [keepAll] },
    });
    expect((await agent.run("Read four files", { sessionId: "same" })).subtype).toBe("success");
    expect((await entriesOf(store, "same")).some((entry) => entry.type === "compaction")).toBe(
      false,
    );
  });

  it("C3, C8: a compaction of a session whose run ended with calls unanswered leaves a log that folds whole", async () => {
    const s = await start(() => ({ content: [{ type: "text", text: "ok" }] }));
    const store = memorySessionStore();
    const usage = {
      inputTokens: 1,
      outputTokens: 1,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
    };
    await store.append("open", 0, [
      {
        v: 1,
        type: "run_started",
        runId: "r1",
        time: "2026-12-01T00:00:00.000Z",
        message: { role: "user", content: "go" },
      },
      {
        v: 1,
        type: "reply",
        runId: "r1",
        turn: 1,
        message: {
          role: "assistant",
          content: [{ type: "tool_use", id: "a", name: "read", input: { path: "a" } }],
        },
        stopReason: "tool_use",
        usage,
      },
      {
        v: 1,
        type: "tool_result",
        runId: "r1",
        toolUseId: "a",
        toolName: "read",
        status: "completed",
        block: { type: "tool_result", tool_use_id: "a", content: [{ type: "text", text: BIG }] },
      },
      {
        v: 1,
        type: "reply",
        runId: "r1",
        turn: 2,
        message: {
          role: "assistant",
          content: [
            { type: "tool_use", id: "b", name: "read", input: { path: "b" } },
            { type: "tool_use", id: "c", name: "read", input: { path: "c" } },
          ],
        },
        stopReason: "tool_use",
        usage,
      },
      {
        v: 1,
        type: "tool_result",
        runId: "r1",
        toolUseId: "b",
        toolName: "read",
        status: "completed",
        block: { type: "tool_result", tool_use_id: "b", content: [{ type: "text", text: BIG }] },
      },
      {
        v: 1,
        type: "run_finished",
        runId: "r1",
        subtype: "error_during_execution",
        result: "",
        errors: ["cut"],
        numTurns: 2,
        usage,
      },
    ]);
    const agent = createAgent({ ...options(s), sessionStore: store });
    const done = await agent.compact("open", { strategies: [clearToolResults({ keepLast: 0 })] });
    expect(done.compacted).toBe(true);
    const state = new RunLogState();
    for (const entry of (await store.load("open")).entries) state.load("open", entry);
    expect(historyProblem(state.messages)).toBeUndefined();
    expect((await agent.run("next", { sessionId: "open" })).subtype).toBe("success");
  });

  it("C8: a worker's first step on a session with a checkpoint reads only the checkpoint and what came after", async () => {
    const s = await start(toolModel(6));
    const base = memorySessionStore();
    const loads: unknown[] = [];
    const store: SessionStore = {
      ...base,
      checkpoints: true,
      load: (sessionId, loadOptions) => {
        loads.push(loadOptions);
        return base.load(sessionId, loadOptions);
      },
    } as SessionStore;
    const agent = createAgent({
      ...options(s),
      sessionStore: store,
      contextManagement: { maxInputTokens: 2500, strategies: [compact()] },
    });
    expect((await agent.run("Read six files", { sessionId: "w" })).subtype).toBe("success");
    loads.length = 0;
    const first = await agent.step("w", { prompt: "More", runId: "run-2" });
    expect(first.status).not.toBe("stale");
    expect(loads).toEqual([{ fromCheckpoint: true }]);
    // The same first step delivered again is recognised: it does not start the run twice.
    let step = first;
    while (step.status === "continue")
      step = await agent.step("w", { expectedStep: step.nextStep });
    await agent.run("And more", { sessionId: "w" });
    await expect(agent.step("w", { prompt: "More", runId: "run-2" })).rejects.toMatchObject({
      code: "not_interrupted",
    });
  });
});
