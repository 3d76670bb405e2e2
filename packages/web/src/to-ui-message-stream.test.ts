import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import {
  type AgentOptions,
  createAgent,
  memorySessionStore,
  type SDKResultMessage,
} from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { DefaultChatTransport, type UIMessage } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  chatEndpoint,
  fromUIMessages,
  type LatticeUIMessageChunk,
  pipeUIMessageStreamToResponse,
  toUIMessageStream,
  toUIMessageStreamResponse,
  toUIMessages,
  traceRelay,
  uiMessagesOfSession,
} from "./index.js";
import { assembleWithAiSdk, comparable, readChunks } from "./ui-stream.test-helpers.js";

let server: ScriptedModelServer;
let http: Server | undefined;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
  if (http !== undefined) {
    const closing = http;
    http = undefined;
    await new Promise<void>((resolve) => {
      closing.close(() => resolve());
      closing.closeAllConnections();
    });
  }
});

function weatherTools(log: string[] = []) {
  const weather = tool(
    "weather",
    "Today's weather in a city",
    z.object({ city: z.string() }),
    async ({ city }) => {
      log.push(`weather ${city}`);
      if (city === "Atlantis") throw new Error("no station in Atlantis");
      return { content: `${city}: 21°C` };
    },
    { isConcurrencySafe: () => true },
  );
  const email = tool(
    "send_email",
    "Sends an email",
    z.object({ to: z.string() }),
    async ({ to }) => {
      log.push(`email ${to}`);
      return { content: `sent to ${to}` };
    },
    { needsApproval: true },
  );
  const slow = tool("long_job", "Runs for a long time", z.object({}), async (_input, ctx) => {
    // Long the first time; a run resumed after an abort finds it quick.
    if (log.includes("long_job aborted")) return { content: "done at once" };
    log.push("long_job started");
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, 30_000);
      ctx.signal.addEventListener("abort", () => {
        clearTimeout(timer);
        log.push("long_job aborted");
        resolve();
      });
    });
    ctx.signal.throwIfAborted();
    return { content: "done" };
  });
  return [weather, email, slow];
}

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-web-secret",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    includePartialMessages: true,
    ...extra,
  };
}

const parallelWeather = {
  content: [
    { type: "thinking" as const, thinking: "Two cities: ask both at once.", signature: "sig-1" },
    { type: "text" as const, text: "Checking both cities." },
    { type: "tool_use" as const, id: "call_paris", name: "weather", input: { city: "Paris" } },
    { type: "tool_use" as const, id: "call_tokyo", name: "weather", input: { city: "Tokyo" } },
  ],
  stopReason: "tool_use" as const,
  chunkSize: 4,
};
const answer = (text: string) => ({ content: [{ type: "text" as const, text }], chunkSize: 5 });

describe("the UI message stream (W1, W2)", () => {
  it("W2: maps a run with thinking, a parallel batch and a streamed answer to one chunk kind per fact", async () => {
    server.enqueue(parallelWeather, answer("Paris is 21°C and so is Tokyo."));
    const relay = traceRelay();
    const agent = createAgent(agentOptions({ tools: weatherTools(), onTrace: relay.onTrace }));
    const query = agent.query("Weather in Paris and Tokyo?", { sessionId: "w2" });
    const chunks = await readChunks(toUIMessageStream(query, { trace: relay }));
    const kinds = chunks.map((chunk) => chunk.type);

    expect(kinds[0]).toBe("start");
    expect(kinds[1]).toBe("start-step");
    // Text and reasoning stream as deltas between their start and end.
    expect(kinds.filter((kind) => kind === "text-delta").length).toBeGreaterThan(4);
    expect(kinds.filter((kind) => kind === "reasoning-delta").length).toBeGreaterThan(2);
    expect(kinds.filter((kind) => kind === "tool-input-delta").length).toBeGreaterThan(0);
    expect(kinds.filter((kind) => kind === "start-step")).toHaveLength(2);
    expect(kinds.filter((kind) => kind === "finish-step")).toHaveLength(2);
    expect(kinds.at(-1)).toBe("finish");
    const inputs = chunks.filter((chunk) => chunk.type === "tool-input-available");
    expect(inputs.map((chunk) => [chunk.toolCallId, chunk.toolName, chunk.input])).toEqual([
      ["call_paris", "weather", { city: "Paris" }],
      ["call_tokyo", "weather", { city: "Tokyo" }],
    ]);
    const outputs = chunks.filter((chunk) => chunk.type === "tool-output-available");
    expect(outputs.map((chunk) => [chunk.toolCallId, chunk.output])).toEqual([
      ["call_paris", "Paris: 21°C"],
      ["call_tokyo", "Tokyo: 21°C"],
    ]);
    // The batch's plan: both calls in one concurrent run; each call's timing, updated by id.
    const batch = chunks.find((chunk) => chunk.type === "data-lattice-batch");
    expect(batch?.data).toMatchObject({
      turn: 1,
      mode: "safe",
      runs: [{ concurrent: true, toolCallIds: ["call_paris", "call_tokyo"] }],
    });
    const paris = chunks
      .filter((chunk) => chunk.type === "data-lattice-tool-call" && chunk.id === "call_paris")
      .map((chunk) => (chunk as { data: { status: string } }).data.status);
    expect(paris).toEqual(["queued", "running", "completed"]);
    const finish = chunks.at(-1) as Extract<LatticeUIMessageChunk, { type: "finish" }>;
    expect(finish.finishReason).toBe("stop");
    expect(finish.messageMetadata).toMatchObject({
      sessionId: "w2",
      subtype: "success",
      usage: { outputTokens: expect.any(Number) },
    });
    const start = chunks[0] as Extract<LatticeUIMessageChunk, { type: "start" }>;
    expect(start.messageId).toBe(finish.messageMetadata?.runId);

    // The official reader accepts every chunk and assembles the run's messages.
    const { message, errors } = await assembleWithAiSdk(chunks);
    expect(errors).toEqual([]);
    expect(
      message?.parts.map((part) => part.type).filter((type) => !type.startsWith("data-")),
    ).toEqual([
      "step-start",
      "reasoning",
      "text",
      "tool-weather",
      "tool-weather",
      "step-start",
      "text",
    ]);
    const { entries } = await agent.sessionStore.load("w2");
    const fromLog = uiMessagesOfSession(entries, "w2").at(-1);
    expect(comparable(message)).toEqual(comparable(fromLog));
  });

  it("W2: a failing call is tool-output-error with its is_error text, a refused batch a data-lattice-refusal", async () => {
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "call_a", name: "weather", input: { city: "Atlantis" } },
          { type: "tool_use", id: "call_b", name: "weather", input: { city: "Rome" } },
        ],
        stopReason: "tool_use",
      },
      {
        content: [
          { type: "tool_use", id: "call_c", name: "weather", input: { city: "Oslo" } },
          { type: "tool_use", id: "call_d", name: "weather", input: { city: "Lima" } },
        ],
        stopReason: "tool_use",
      },
      answer("Done."),
    );
    const relay = traceRelay();
    let batches = 0;
    const agent = createAgent(
      agentOptions({
        tools: weatherTools(),
        onTrace: relay.onTrace,
        toolBatchPolicy: {
          validate: () =>
            ++batches === 2
              ? {
                  allowed: false,
                  code: "one_city_at_a_time",
                  message: "Ask for one city per reply.",
                }
              : { allowed: true },
        },
      }),
    );
    const chunks = await readChunks(toUIMessageStream(agent.query("Weather?"), { trace: relay }));
    const errorsOf = chunks.filter((chunk) => chunk.type === "tool-output-error");
    expect(errorsOf.map((chunk) => chunk.toolCallId)).toEqual(["call_a", "call_c", "call_d"]);
    expect((errorsOf[0] as { errorText: string }).errorText).toContain("no station in Atlantis");
    expect((errorsOf[1] as { errorText: string }).errorText).toContain(
      "Ask for one city per reply.",
    );
    const refusal = chunks.find((chunk) => chunk.type === "data-lattice-refusal");
    expect(refusal?.data).toEqual({
      turn: 2,
      code: "one_city_at_a_time",
      message: "Ask for one city per reply.",
      toolCallIds: ["call_c", "call_d"],
    });
    const { errors } = await assembleWithAiSdk(chunks);
    expect(errors).toEqual([]);
  });

  it("W2: without includePartialMessages each step's text arrives whole; a failed run sends an error chunk before finish", async () => {
    server.enqueue(parallelWeather, answer("one"), parallelWeather);
    const agent = createAgent(
      agentOptions({ tools: weatherTools(), includePartialMessages: false, maxTurns: 1 }),
    );
    const chunks = await readChunks(toUIMessageStream(agent.query("Weather?")));
    expect(chunks.filter((chunk) => chunk.type === "text-delta")).toHaveLength(1);
    expect(chunks.filter((chunk) => chunk.type === "reasoning-end")[0]).toMatchObject({
      providerMetadata: { lattice: { signature: "sig-1" } },
    });
    const kinds = chunks.map((chunk) => chunk.type);
    expect(kinds.slice(-2)).toEqual(["error", "finish"]);
    expect(chunks.at(-1)).toMatchObject({
      finishReason: "length",
      messageMetadata: { subtype: "error_max_turns" },
    });
    const { errors } = await assembleWithAiSdk(chunks);
    expect(errors).toHaveLength(1);
  });

  it("W1: toUIMessageStreamResponse is an SSE response with the protocol's headers that useChat's transport reads", async () => {
    server.enqueue(answer("Hello from the web."));
    const agent = createAgent(agentOptions());
    http = createServer(async (req, res) => {
      // A web route handler behind a Node server, as a framework would run it.
      const response = toUIMessageStreamResponse(agent.query("Hi"), {
        headers: { "x-extra": "1" },
      });
      res.writeHead(response.status, headersOf(response));
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      for (;;) {
        const next = await reader.read();
        if (next.done) break;
        res.write(next.value);
      }
      res.end();
      void req;
    });
    const url = await listen(http);
    const raw = await fetch(url, { method: "POST", body: "{}" });
    expect(raw.headers.get("content-type")).toBe("text/event-stream");
    expect(raw.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    expect(raw.headers.get("x-extra")).toBe("1");
    const text = await raw.text();
    expect(text.startsWith('data: {"type":"start"')).toBe(true);
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);

    server.enqueue(answer("Hello from the web."));
    const chunks = await readChunks(await transport(url).sendMessages(newMessage("Hi")));
    const { message, errors } = await assembleWithAiSdk(chunks as LatticeUIMessageChunk[]);
    expect(errors).toEqual([]);
    expect(message?.parts.filter((part) => part.type === "text")).toEqual([
      expect.objectContaining({ text: "Hello from the web.", state: "done" }),
    ]);
  });

  it("W1: pipeUIMessageStreamToResponse writes the stream to a node:http response", async () => {
    server.enqueue(parallelWeather, answer("Both 21°C."));
    const agent = createAgent(agentOptions({ tools: weatherTools() }));
    http = createServer((_req, res) => {
      void pipeUIMessageStreamToResponse(agent.query("Weather?"), res);
    });
    const url = await listen(http);
    const chunks = await readChunks(await transport(url).sendMessages(newMessage("Weather?")));
    const { message, errors } = await assembleWithAiSdk(chunks as LatticeUIMessageChunk[]);
    expect(errors).toEqual([]);
    expect(message?.parts.filter((part) => part.type === "tool-weather")).toHaveLength(2);
    expect(message?.metadata).toMatchObject({ subtype: "success" });
  });
});

describe("approvals across the page (W3)", () => {
  it("W3: a paused run sends tool-approval-request; the page's answers resume it, denied calls end tool-output-denied", async () => {
    server.enqueue(
      {
        content: [
          { type: "text", text: "Sending both." },
          { type: "tool_use", id: "call_ann", name: "send_email", input: { to: "ann" } },
          { type: "tool_use", id: "call_bob", name: "send_email", input: { to: "bob" } },
        ],
        stopReason: "tool_use",
      },
      answer("Sent to ann; bob was denied."),
    );
    const ran: string[] = [];
    const relay = traceRelay();
    const agent = createAgent(
      agentOptions({
        tools: weatherTools(ran),
        onTrace: relay.onTrace,
        sessionStore: memorySessionStore(),
      }),
    );
    const chat = chatEndpoint(agent, { trace: relay });
    const first = await readChunks(
      await sse(chat.handle(post({ id: "chat-1", messages: [userMessage("Email ann and bob")] }))),
    );
    const requests = first.filter((chunk) => chunk.type === "tool-approval-request");
    expect(requests.map((chunk) => chunk.toolCallId)).toEqual(["call_ann", "call_bob"]);
    expect(first.at(-1)).toMatchObject({
      type: "finish",
      finishReason: "tool-calls",
      messageMetadata: { subtype: "interrupted" },
    });
    const paused = await assembleWithAiSdk(first);
    expect(paused.errors).toEqual([]);
    const assistant = paused.message as UIMessage;
    const states = assistant.parts
      .filter((part) => part.type === "tool-send_email")
      .map((part) => (part as { state: string }).state);
    expect(states).toEqual(["approval-requested", "approval-requested"]);
    expect(ran).toEqual([]);

    // What addToolApprovalResponse does on the page: approve ann, deny bob.
    const answered = structuredClone(assistant);
    for (const part of answered.parts as {
      type: string;
      toolCallId?: string;
      state?: string;
      approval?: { id: string };
    }[]) {
      if (part.type !== "tool-send_email") continue;
      const approved = part.toolCallId === "call_ann";
      part.state = "approval-responded";
      part.approval = {
        ...part.approval,
        approved,
        ...(approved ? {} : { reason: "not bob" }),
      } as never;
    }
    const second = await readChunks(
      await sse(
        chat.handle(post({ id: "chat-1", messages: [userMessage("Email ann and bob"), answered] })),
      ),
    );
    expect(
      second
        .filter((chunk) => chunk.type === "tool-output-available")
        .map((chunk) => chunk.toolCallId),
    ).toEqual(["call_ann"]);
    expect(
      second
        .filter((chunk) => chunk.type === "tool-output-denied")
        .map((chunk) => chunk.toolCallId),
    ).toEqual(["call_bob"]);
    expect(ran).toEqual(["email ann"]);
    // The resumed batch starts before the stream reads the run's first message: the relay
    // kept its events, so its plan names the real calls and each call has its timing.
    const plan = second.find((chunk) => chunk.type === "data-lattice-batch");
    expect(JSON.stringify(plan?.data.runs)).not.toContain("#");
    expect(plan?.data.runs.flatMap((run) => run.toolCallIds)).toContain("call_ann");
    const annStatus = second
      .filter((chunk) => chunk.type === "data-lattice-tool-call" && chunk.id === "call_ann")
      .map((chunk) => (chunk as { data: { status: string } }).data.status);
    expect(annStatus.at(-1)).toBe("completed");
    // The model read the denial, with the reason, as an is_error result.
    const lastRequest = server.requests.at(-1)?.body as { messages: { content: unknown }[] };
    expect(JSON.stringify(lastRequest.messages.at(-1))).toContain("not bob");

    const resumed = await assembleWithAiSdk(second, answered);
    expect(resumed.errors).toEqual([]);
    const final = resumed.message as UIMessage;
    expect(
      final.parts
        .filter((part) => part.type === "tool-send_email")
        .map((part) => (part as { state: string }).state),
    ).toEqual(["output-available", "output-denied"]);
    expect(final.metadata).toMatchObject({ subtype: "success" });
    // The reloaded chat is the same conversation.
    const history = await chat.history("chat-1");
    expect(comparable(history.at(-1))).toEqual(comparable(final));
  });
});

describe("a client that goes away (W6)", () => {
  it("W6: cancelling the stream aborts the run, its sleeping tool sees the signal, and the session resumes cleanly", async () => {
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "call_long", name: "long_job", input: {} }],
        stopReason: "tool_use",
      },
      answer("The job finished."),
    );
    const log: string[] = [];
    const relay = traceRelay();
    const agent = createAgent(
      agentOptions({ tools: weatherTools(log), onTrace: relay.onTrace, abortGraceMs: 2_000 }),
    );
    const reader = toUIMessageStream(agent.query("Run the long job", { sessionId: "w6" }), {
      trace: relay,
    }).getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) throw new Error("the stream ended before the tool started");
      if (next.value.type === "data-lattice-tool-call" && next.value.data.status === "running")
        break;
    }
    await reader.cancel();
    // cancel() resolved after the handler settled: nothing of the run is left running.
    expect(log).toEqual(["long_job started", "long_job aborted"]);
    const requestsBefore = server.requests.length;
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.requests.length).toBe(requestsBefore);

    const resumed = await agent.resume("w6").finalResult();
    expect(resumed.subtype).toBe("success");
    expect(resumed.result).toBe("The job finished.");
    expect(JSON.stringify(resumed.messages)).toContain("done at once");
  });

  it("W6: a fetch aborted by the page aborts the run; the chat's next message ends the stopped run and goes on", async () => {
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "call_long", name: "long_job", input: {} }],
        stopReason: "tool_use",
      },
      answer("Hello again."),
    );
    const log: string[] = [];
    const relay = traceRelay();
    const agent = createAgent(agentOptions({ tools: weatherTools(log), onTrace: relay.onTrace }));
    const chat = chatEndpoint(agent, { trace: relay });
    http = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const controller = new AbortController();
      res.once("close", () => controller.abort());
      const response = await chat.handle(
        new Request("http://localhost/api/chat", {
          method: "POST",
          body: Buffer.concat(chunks),
          signal: controller.signal,
        }),
      );
      res.writeHead(response.status, headersOf(response));
      const reader = (response.body as ReadableStream<Uint8Array>).getReader();
      res.once("close", () => void reader.cancel().catch(() => {}));
      for (;;) {
        const next = await reader.read().catch(() => ({ done: true as const, value: undefined }));
        if (next.done) break;
        res.write(next.value);
      }
      res.end();
    });
    const url = await listen(http);
    const stop = new AbortController();
    const stream = await transport(url).sendMessages({
      ...newMessage("Run the long job"),
      chatId: "chat-w6",
      abortSignal: stop.signal,
    });
    const reader = stream.getReader();
    for (;;) {
      const next = await reader.read();
      if (next.done) throw new Error("the stream ended before the tool started");
      if (
        next.value.type === "data-lattice-tool-call" &&
        (next.value as { data: { status: string } }).data.status === "running"
      )
        break;
    }
    stop.abort();
    await expect
      .poll(() => log, { timeout: 10_000 })
      .toEqual(["long_job started", "long_job aborted"]);

    const next = await readChunks(
      await transport(url).sendMessages({ ...newMessage("Hello?"), chatId: "chat-w6" }),
    );
    expect(next.at(-1)).toMatchObject({ type: "finish", messageMetadata: { subtype: "success" } });
    const history = await chat.history("chat-w6");
    expect(history.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    const stopped = history[1]?.parts.find((part) => part.type === "tool-long_job") as {
      state: string;
      errorText: string;
    };
    expect(stopped.state).toBe("output-error");
    expect(history[1]?.metadata).toMatchObject({ subtype: "error_during_execution" });
  });
});

describe("the request side (W4)", () => {
  it("W4: fromUIMessages is the inverse of toUIMessages on a run's conversation", async () => {
    server.enqueue(parallelWeather, answer("Both 21°C."));
    const agent = createAgent(agentOptions({ tools: weatherTools() }));
    const result: SDKResultMessage = await agent.run("Weather?");
    const ui = toUIMessages(result.messages);
    expect(ui.map((message) => message.role)).toEqual(["user", "assistant"]);
    expect(fromUIMessages(ui)).toEqual(
      result.messages.map((message) => ({
        role: message.role,
        content:
          typeof message.content === "string"
            ? [{ type: "text", text: message.content }]
            : message.content,
      })),
    );
  });

  it("W4: a history that breaks R4 is refused, naming the message and the rule", () => {
    const dangling: UIMessage[] = [
      userMessage("Hi"),
      {
        id: "a1",
        role: "assistant",
        parts: [
          { type: "step-start" },
          {
            type: "tool-weather",
            toolCallId: "c1",
            state: "input-available",
            input: { city: "Paris" },
          } as never,
        ],
      },
    ];
    expect(() => fromUIMessages(dangling)).toThrow(/tool_use|answer|unfinished/i);
    expect(() =>
      fromUIMessages([{ id: "s", role: "system", parts: [{ type: "text", text: "be nice" }] }]),
    ).toThrow(/message 0 \(id "s"\) has role "system"/);
    expect(() =>
      fromUIMessages([
        {
          id: "u",
          role: "user",
          parts: [
            { type: "file", mediaType: "application/zip", url: "data:application/zip;base64,AA==" },
          ],
        },
      ]),
    ).toThrow(/message 0 \(id "u"\), part 0 is a file of type "application\/zip"/);
  });
});

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function transport(url: string): DefaultChatTransport<UIMessage> {
  return new DefaultChatTransport({ api: url });
}

function userMessage(text: string): UIMessage {
  return { id: `u-${text.length}`, role: "user", parts: [{ type: "text", text }] };
}

function newMessage(text: string) {
  return {
    chatId: "chat",
    messages: [userMessage(text)],
    trigger: "submit-message" as const,
    messageId: undefined,
    abortSignal: undefined,
  };
}

function post(body: unknown): Request {
  return new Request("http://localhost/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
}

/** The chunks of a chat response, parsed from its SSE body. */
async function sse(response: Promise<Response>): Promise<ReadableStream<LatticeUIMessageChunk>> {
  const answered = await response;
  expect(answered.status, await peekError(answered)).toBe(200);
  const text = await answered.text();
  const chunks = text
    .split("\n\n")
    .filter((event) => event.startsWith("data: ") && event !== "data: [DONE]")
    .map((event) => JSON.parse(event.slice("data: ".length)) as LatticeUIMessageChunk);
  return new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(chunk);
      controller.close();
    },
  });
}

async function peekError(response: Response): Promise<string> {
  return response.status === 200 ? "" : await response.clone().text();
}

function headersOf(response: Response): Record<string, string> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}
