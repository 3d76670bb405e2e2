// Findings of a review of the chat endpoint and the stream, each kept fixed by a test.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AgentOptions,
  createAgent,
  memorySessionStore,
  type SDKMessage,
  type SessionStore,
} from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { type UIMessage, validateUIMessages } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  chatEndpoint,
  fromUIMessages,
  pipeUIMessageStreamToResponse,
  toUIMessageStream,
} from "./index.js";
import { assembleWithAiSdk, readChunks } from "./ui-stream.test-helpers.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const ran: string[] = [];
const tools = [
  tool("slow", "Takes a while", z.object({}), async (_input, ctx) => {
    ran.push("slow started");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 600);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        resolve();
      });
    });
    ctx.signal.throwIfAborted();
    ran.push("slow done");
    return { content: "slow done" };
  }),
  tool("deploy", "Deploys", z.object({ service: z.string() }), async () => ({ content: "ok" }), {
    needsApproval: true,
  }),
];

function agentOn(store: SessionStore, extra: Partial<AgentOptions> = {}) {
  return createAgent({
    apiKey: "sk-test-hardening",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    tools,
    sessionStore: store,
    includePartialMessages: true,
    ...extra,
  });
}

const user = (text: string, id = `u-${text}`): UIMessage => ({
  id,
  role: "user",
  parts: [{ type: "text", text }],
});
const post = (body: unknown, init: RequestInit = {}) =>
  new Request("http://localhost/api/chat", {
    method: "POST",
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
const slowTurn = {
  content: [{ type: "tool_use" as const, id: "call_slow", name: "slow", input: {} }],
  stopReason: "tool_use" as const,
};
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

describe("one chat, one run at a time (W6, W9)", () => {
  it("W9: a new message while the chat's run streams is 409 chat_busy at once, and the run is untouched (R8)", async () => {
    ran.length = 0;
    server.enqueue(slowTurn, text("finished"));
    const store = memorySessionStore();
    const first = chatEndpoint(agentOn(store));
    // Another process's endpoint on the same store.
    const second = chatEndpoint(agentOn(store));
    const streaming = await first.handle(post({ id: "L", messages: [user("go")] }));
    const body = streaming.text();
    await expect.poll(() => ran).toContain("slow started");
    const sameProcess = await first.handle(post({ id: "L", messages: [user("again")] }));
    expect(sameProcess.status).toBe(409);
    expect((await sameProcess.json()).error.code).toBe("chat_busy");
    const otherProcess = await second.handle(post({ id: "L", messages: [user("again")] }));
    expect(otherProcess.status).toBe(409);
    expect((await otherProcess.json()).error.code).toBe("chat_busy");
    expect(await body).toContain('"subtype":"success"');
    expect(ran).toEqual(["slow started", "slow done"]);
    const { entries } = await store.load("L");
    expect(entries.filter((entry) => entry.type === "run_finished")).toHaveLength(1);
  });

  it("W6: a run stopped before its first reply still shows in the chat after a reload, and the chat goes on", async () => {
    server.enqueue({ ...text("late"), delayMs: 2_000 }, text("second answer"));
    const store = memorySessionStore();
    const chat = chatEndpoint(agentOn(store));
    const stop = new AbortController();
    const response = await chat.handle(
      post({ id: "S", messages: [user("first")] }, { signal: stop.signal }),
    );
    const reader = (response.body as ReadableStream<Uint8Array>).getReader();
    await reader.read();
    // Stopped while the model thinks: the reply never comes.
    await expect.poll(() => server.requests.length).toBe(1);
    stop.abort();
    await reader.cancel();
    const next = await chat.handle(post({ id: "S", messages: [user("second")] }));
    expect(next.status).toBe(200);
    expect(await next.text()).toContain("second answer");
    const history = await chat.history("S");
    expect(history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(history[1]?.parts).toEqual([]);
    expect(history[1]?.metadata).toMatchObject({ subtype: "error_during_execution" });
  });

  it('W9: a run left unfinished by another process is 409 by default, and ended with unfinishedRuns: "end"', async () => {
    server.enqueue(slowTurn);
    const store = memorySessionStore();
    // A process that died mid-run: its log ends after the model's reply.
    const dead = agentOn(store, { abortGraceMs: 0 });
    const stop = new AbortController();
    const run = dead.run("go", { sessionId: "D", signal: stop.signal }).catch(() => undefined);
    await expect.poll(() => ran.at(-1)).toBe("slow started");
    stop.abort();
    await run;
    const refusing = chatEndpoint(agentOn(store));
    const refused = await refusing.handle(post({ id: "D", messages: [user("hello")] }));
    expect(refused.status).toBe(409);
    expect((await refused.json()).error.message).toContain("has not finished");
    server.enqueue(text("fresh start"));
    const ending = chatEndpoint(agentOn(store), { unfinishedRuns: "end" });
    const taken = await ending.handle(post({ id: "D", messages: [user("hello")] }));
    expect(taken.status).toBe(200);
    expect(await taken.text()).toContain("fresh start");
  });
});

describe("hostile and careless bodies (W9)", () => {
  it("W9: every malformed body is a 4xx naming what is wrong, never a 500", async () => {
    const chat = chatEndpoint(agentOn(memorySessionStore()));
    const cases: [unknown, number][] = [
      [{ id: "c", messages: [null] }, 400],
      [{ id: "c", messages: [{ id: "a", role: "assistant", parts: "xy" }] }, 400],
      [{ id: "c", messages: [{ id: "a", role: "assistant", parts: null }] }, 400],
      [{ id: "c", messages: [{ id: "u", role: "user", parts: [{ type: 5 }] }] }, 400],
      [{ id: "c", messages: [{ id: "u", role: "user", parts: [{}] }] }, 400],
      [
        {
          id: "c",
          messages: [
            { id: "u", role: "user", parts: [{ type: "file", mediaType: "image/png", url: 5 }] },
          ],
        },
        400,
      ],
      [{ id: "c", messages: [{ id: "u", role: "user", parts: [] }] }, 400],
      [{ id: "\ud800", messages: [user("hi")] }, 400],
      [{ id: 7, messages: [user("hi")] }, 400],
      [{ id: "x".repeat(600), messages: [user("hi")] }, 400],
      [{ id: "c", messages: [{ role: "user", parts: [] }] }, 400],
      [[], 400],
      [{ id: "c", messages: [user("hi")], trigger: "regenerate-message" }, 400],
      [
        {
          id: "c",
          messages: [
            user("hi"),
            {
              id: "a",
              role: "assistant",
              parts: [
                {
                  type: "tool-deploy",
                  toolCallId: "t",
                  state: "approval-responded",
                  input: {},
                  approval: { id: "__proto__", approved: true },
                },
              ],
            },
          ],
        },
        409,
      ],
    ];
    for (const [body, status] of cases) {
      const response = await chat.handle(post(body));
      const text = await response.text();
      expect([JSON.stringify(body).slice(0, 80), response.status]).toEqual([
        JSON.stringify(body).slice(0, 80),
        status,
      ]);
      expect(JSON.parse(text).error.message.length).toBeGreaterThan(10);
    }
    const negative = await chat.handle(
      post({ id: "c", messages: [user("hi")] }, { headers: { "content-length": "-1" } }),
    );
    expect(negative.status).not.toBe(500);
    expect(server.requests).toHaveLength(0);
  });

  it("W9: a failure that is not the request's fault is a 500 with a fixed sentence, never the error's message", async () => {
    const broken: SessionStore = {
      ...memorySessionStore(),
      load: async () => {
        throw Object.assign(
          new Error("ENOENT: no such file or directory, open '/srv/secret/sessions/c.jsonl'"),
          {
            code: "ENOENT",
          },
        );
      },
    };
    const chat = chatEndpoint(agentOn(broken));
    const response = await chat.handle(post({ id: "c", messages: [user("hi")] }));
    expect(response.status).toBe(500);
    const text = await response.text();
    expect(text).not.toContain("/srv/secret");
    expect(JSON.parse(text).error).toEqual({
      code: "chat_failed",
      message: "The run failed (ENOENT); the server's logs say why.",
    });
  });

  it("W9: a page that sends only its newest message ({ id, message }) is read as useChat's whole body is", async () => {
    server.enqueue(text("one message is enough"));
    const chat = chatEndpoint(agentOn(memorySessionStore()));
    const response = await chat.handle(post({ id: "m", message: user("hi") }));
    expect(response.status).toBe(200);
    expect(await response.text()).toContain("one message is enough");
  });
});

describe("the stream's edges (W2, W5, W6)", () => {
  it("W5: a model call cut in the middle of a tool input leaves no call 'input-streaming': it is an input error", async () => {
    async function* cutInTheInput(): AsyncGenerator<SDKMessage> {
      const base = { sessionId: "s", runId: "r", parentToolUseId: null };
      yield { type: "system", subtype: "init", model: "m", tools: ["deploy"], ...base };
      const event = (value: unknown) =>
        ({ type: "stream_event", event: value, ...base }) as SDKMessage;
      yield event({ type: "message_start" });
      yield event({
        type: "block_start",
        index: 0,
        block: { type: "tool_use", id: "call_cut", name: "deploy" },
      });
      yield event({ type: "tool_input_delta", index: 0, partialJson: '{"servi' });
      throw Object.assign(new Error("The stream was cut"), { code: "provider_stream_cut" });
    }
    const chunks = await readChunks(toUIMessageStream(cutInTheInput()));
    expect(chunks.map((chunk) => chunk.type)).toEqual([
      "start",
      "start-step",
      "tool-input-start",
      "tool-input-delta",
      "tool-input-error",
      "finish-step",
      "error",
      "finish",
    ]);
    const { message } = await assembleWithAiSdk(chunks);
    const states = message?.parts
      .filter((part) => part.type === "tool-deploy")
      .map((part) => (part as { state: string }).state);
    expect(states).toEqual(["output-error"]);
  });

  it("W6: a reader that cancels while the finished query is still closing crashes nothing", async () => {
    async function* slowToClose(): AsyncGenerator<SDKMessage> {
      const base = { sessionId: "s", runId: "r", parentToolUseId: null };
      yield { type: "system", subtype: "init", model: "m", tools: [], ...base };
      yield {
        type: "result",
        subtype: "success",
        result: "",
        structuredResult: undefined,
        isError: false,
        numTurns: 0,
        durationMs: 1,
        usage: {
          inputTokens: 0,
          outputTokens: 0,
          cacheReadInputTokens: 0,
          cacheCreationInputTokens: 0,
        },
        errors: [],
        messages: [],
        output: undefined,
        ...base,
      };
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const reader = toUIMessageStream(slowToClose()).getReader();
    await reader.read();
    await reader.cancel();
    await new Promise((resolve) => setTimeout(resolve, 300));
  });

  it("W6: piping to a response whose client already left starts nothing and returns", async () => {
    server.enqueue(text("never asked for"));
    const agent = agentOn(memorySessionStore());
    let piped: Promise<void> | undefined;
    const http: Server = createServer((req, res) => {
      req.socket.destroy();
      setTimeout(() => {
        piped = pipeUIMessageStreamToResponse(agent.query("hi"), res);
      }, 100);
    });
    await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve));
    const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
    await fetch(url).catch(() => undefined);
    await expect.poll(() => piped !== undefined).toBe(true);
    await piped;
    expect(server.requests).toHaveLength(0);
    await new Promise<void>((resolve) => http.close(() => resolve()));
  });

  it("W4: calls of an earlier message that never ran (a stop in client mode) get an is_error result, so the chat goes on", () => {
    const conversation = fromUIMessages([
      user("go"),
      {
        id: "a",
        role: "assistant",
        parts: [{ type: "tool-slow", toolCallId: "call_s", state: "input-available", input: {} }],
      } as UIMessage,
      user("next"),
    ]);
    expect(conversation[2]).toMatchObject({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_s", is_error: true },
        { type: "text", text: "next" },
      ],
    });
  });

  it("W3: a chat whose paused run was ended by a new message reloads as messages the ai package validates", async () => {
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "call_d", name: "deploy", input: { service: "web" } }],
        stopReason: "tool_use",
      },
      text("ok, no deploy"),
    );
    const chat = chatEndpoint(agentOn(memorySessionStore()));
    await (await chat.handle(post({ id: "P", messages: [user("deploy")] }))).text();
    await (await chat.handle(post({ id: "P", messages: [user("never mind")] }))).text();
    const history = await chat.history("P");
    await expect(validateUIMessages({ messages: history })).resolves.toHaveLength(4);
    const part = history[1]?.parts.find((p) => p.type === "tool-deploy") as {
      state: string;
      approval?: unknown;
    };
    expect(part.state).toBe("output-error");
    expect(part.approval).toBeUndefined();
  });
});
