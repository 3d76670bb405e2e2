import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { createAgent, type SDKMessage, type TraceEvent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { fromAiSdk } from "./index.js";

// A real AI SDK provider package (@ai-sdk/openai-compatible 2.x, LanguageModelV3) over real
// HTTP on loopback, driving a real Lattice agent.

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer({ apiKey: "sk-bridge-test" });
});
afterEach(async () => {
  await server.close();
});

function bridged(options: { maxRetries?: number } = {}) {
  const provider = createOpenAICompatible({
    name: "scripted",
    baseURL: server.openaiBaseURL,
    apiKey: "sk-bridge-test",
    includeUsage: true,
  });
  return fromAiSdk(provider("scripted-model"), options);
}

const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => ({
  content: text,
}));

async function collect(iterable: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

interface WireMessage {
  role: string;
  content?: unknown;
  tool_call_id?: string;
  reasoning_content?: string;
  tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>;
}
const wireMessages = (index: number): WireMessage[] =>
  (server.requests[index]!.body as { messages: WireMessage[] }).messages;

describe("fromAiSdk + @ai-sdk/openai-compatible driving createAgent", () => {
  it("runs a tool round trip, streaming, with usage summed over the turns", async () => {
    server.enqueue(
      {
        content: [
          { type: "text", text: "Let me echo that." },
          { type: "tool_use", id: "call_1", name: "echo", input: { text: "via the AI SDK" } },
        ],
        usage: { inputTokens: 30, outputTokens: 12 },
      },
      { content: [{ type: "text", text: "done" }], usage: { inputTokens: 50, outputTokens: 2 } },
    );
    const agent = createAgent({ provider: bridged(), model: "scripted-model", tools: [echo] });
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "done", numTurns: 2 });
    expect(result.usage).toMatchObject({ inputTokens: 80, outputTokens: 14 });
    expect(server.requests.map((request) => request.stream)).toEqual([true, true]);
    const second = wireMessages(1).filter((message) => message.role !== "system");
    expect(second.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
    expect(second[1]).toMatchObject({
      content: "Let me echo that.",
      tool_calls: [
        { id: "call_1", function: { name: "echo", arguments: '{"text":"via the AI SDK"}' } },
      ],
    });
    expect(second[2]).toEqual({ role: "tool", tool_call_id: "call_1", content: "via the AI SDK" });
    const first = server.requests[0]?.body as { tools: unknown[]; max_tokens: number };
    expect(first.tools).toEqual([
      {
        type: "function",
        function: {
          name: "echo",
          description: "Echo the text",
          parameters: expect.objectContaining({ type: "object", required: ["text"] }),
        },
      },
    ]);
    expect(first.max_tokens).toBe(4096);
  });

  it("runs parallel tool calls concurrently and answers them in tool_use order", async () => {
    const spans: Record<string, { start: number; end: number }> = {};
    const slow = tool(
      "slow",
      "Waits",
      z.object({ label: z.string(), ms: z.number() }),
      async ({ label, ms }) => {
        const start = performance.now();
        await new Promise((resolve) => setTimeout(resolve, ms));
        spans[label] = { start, end: performance.now() };
        return { content: `slept ${label}` };
      },
      { isConcurrencySafe: () => true },
    );
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "call_a", name: "slow", input: { label: "a", ms: 150 } },
          { type: "tool_use", id: "call_b", name: "slow", input: { label: "b", ms: 50 } },
          { type: "tool_use", id: "call_c", name: "slow", input: { label: "c", ms: 100 } },
        ],
        chunkSize: 7,
      },
      { content: [{ type: "text", text: "all done" }] },
    );
    const agent = createAgent({ provider: bridged(), model: "scripted-model", tools: [slow] });
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "all done" });
    // Overlap: every call started before the first one finished.
    const firstEnd = Math.min(...Object.values(spans).map((span) => span.end));
    for (const span of Object.values(spans)) expect(span.start).toBeLessThan(firstEnd);
    const tools = wireMessages(1).filter((message) => message.role === "tool");
    expect(tools.map((message) => [message.tool_call_id, message.content])).toEqual([
      ["call_a", "slept a"],
      ["call_b", "slept b"],
      ["call_c", "slept c"],
    ]);
  });

  it("streams partial events: text, tool input and thinking deltas", async () => {
    server.enqueue(
      {
        content: [
          { type: "thinking", thinking: "The user wants an echo.", signature: "" },
          { type: "text", text: "Echoing now." },
          { type: "tool_use", id: "call_1", name: "echo", input: { text: "streamed" } },
        ],
        chunkSize: 4,
      },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent({
      provider: bridged(),
      model: "scripted-model",
      tools: [echo],
      includePartialMessages: true,
    });
    const messages = await collect(agent.query("go"));
    const events = messages.flatMap((message) =>
      message.type === "stream_event" ? [message.event] : [],
    );
    const text = events.flatMap((event) => (event.type === "text_delta" ? [event.text] : []));
    const thinking = events.flatMap((event) =>
      event.type === "thinking_delta" ? [event.thinking] : [],
    );
    const json = events.flatMap((event) =>
      event.type === "tool_input_delta" ? [event.partialJson] : [],
    );
    expect(text.join("")).toBe("Echoing now.done");
    expect(text.length).toBeGreaterThan(3);
    expect(thinking.join("")).toBe("The user wants an echo.");
    expect(JSON.parse(json.join(""))).toEqual({ text: "streamed" });
    const assistant = messages.find((message) => message.type === "assistant");
    expect(assistant?.type === "assistant" && assistant.message.content[0]).toMatchObject({
      type: "thinking",
      thinking: "The user wants an echo.",
    });
    // The reasoning goes back on the next turn the way the AI SDK provider sends it.
    const replayed = wireMessages(1).find((message) => message.role === "assistant");
    expect(replayed?.reasoning_content).toBe("The user wants an echo.");
  });

  it("makes one JSON request per call with stream: false", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "j1", name: "echo", input: { text: "json" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent({
      provider: bridged(),
      model: "scripted-model",
      tools: [echo],
      stream: false,
    });
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "done" });
    expect(server.requests.map((request) => request.stream)).toEqual([false, false]);
    expect(wireMessages(1).at(-1)).toEqual({ role: "tool", tool_call_id: "j1", content: "json" });
  });

  it("answers a malformed tool input with an is_error result and runs on", async () => {
    let ran = false;
    const read = tool("read", "Reads", z.object({ path: z.string() }), async () => {
      ran = true;
      return { content: "x" };
    });
    server.enqueue(
      { fault: "malformed_json", name: "read", id: "call_bad" },
      { content: [{ type: "text", text: "sorry" }] },
    );
    const agent = createAgent({ provider: bridged(), model: "scripted-model", tools: [read] });
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "sorry" });
    expect(ran).toBe(false);
    const answer = wireMessages(1).find((message) => message.role === "tool");
    expect(answer?.content).toMatch(/The input for tool "read" is not valid JSON/);
  });

  it("retries a 503 with a retry event in the trace, then succeeds", async () => {
    server.enqueue(
      { status: 503, headers: { "retry-after-ms": "1" } },
      { content: [{ type: "text", text: "recovered" }] },
    );
    const trace: TraceEvent[] = [];
    const agent = createAgent({
      provider: bridged(),
      model: "scripted-model",
      onTrace: (event) => trace.push(event),
    });
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "recovered" });
    expect(trace.filter((event) => event.type === "model_retry")).toEqual([
      expect.objectContaining({ attempt: 1, delayMs: 1, status: 503 }),
    ]);
  });

  it("retries a stream cut before any event, and fails a stream cut after one", async () => {
    server.enqueue(
      { fault: "cut", afterBytes: 10 },
      { content: [{ type: "text", text: "second try" }] },
    );
    const trace: TraceEvent[] = [];
    const agent = createAgent({
      provider: bridged(),
      model: "scripted-model",
      onTrace: (event) => trace.push(event),
    });
    expect(await agent.run("go")).toMatchObject({ subtype: "success", result: "second try" });
    expect(trace.filter((event) => event.type === "model_retry")).toHaveLength(1);

    server.enqueue({
      fault: "cut",
      reply: { content: [{ type: "text", text: "x".repeat(2000) }], chunkSize: 100 },
      afterBytes: 1500,
    });
    const cut = await agent.run("again");
    expect(cut.subtype).toBe("error_during_execution");
    expect(cut.errors[0]).toMatch(
      /AI SDK model "scripted-model" \(scripted\.chat\) stream from .* was cut before the message was complete \(terminated\)/,
    );
  });

  it("ends the run with a clear error naming the model on a 401", async () => {
    const provider = createOpenAICompatible({
      name: "scripted",
      baseURL: server.openaiBaseURL,
      apiKey: "sk-wrong",
    });
    const agent = createAgent({
      provider: fromAiSdk(provider("scripted-model")),
      model: "scripted-model",
    });
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toMatch(
      /AI SDK model "scripted-model" \(scripted\.chat\) at http:\/\/127\.0\.0\.1:\d+\/v1\/chat\/completions answered 401/,
    );
    expect(server.requests).toHaveLength(1);
  });

  it("aborts a hanging model call promptly with an AbortError", async () => {
    server.enqueue({ fault: "hang" });
    const agent = createAgent({ provider: bridged(), model: "scripted-model" });
    const controller = new AbortController();
    const started = performance.now();
    setTimeout(() => controller.abort(), 50);
    await expect(agent.run("go", { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(performance.now() - started).toBeLessThan(2000);
  });

  it("aborts mid-stream, after the first text delta", async () => {
    server.enqueue({
      content: [{ type: "text", text: "a long answer that streams slowly" }],
      chunkSize: 2,
      chunkDelayMs: 30,
    });
    const agent = createAgent({
      provider: bridged(),
      model: "scripted-model",
      includePartialMessages: true,
    });
    const controller = new AbortController();
    const seen: string[] = [];
    const run = (async () => {
      for await (const message of agent.query("go", { signal: controller.signal })) {
        if (message.type === "stream_event" && message.event.type === "text_delta") {
          seen.push(message.event.text);
          controller.abort();
        }
      }
    })();
    await expect(run).rejects.toMatchObject({ name: "AbortError" });
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.join("").length).toBeLessThan("a long answer that streams slowly".length);
  });
});
