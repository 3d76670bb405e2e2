import type { ModelMessage } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { type AgentOptions, createAgent } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-conversation",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => ({
  content: `echo: ${text}`,
}));

function requestMessages(index: number): unknown {
  return (server.requests[index]?.body as { messages?: unknown } | undefined)?.messages;
}

describe("caller-kept conversations (R4, R5)", () => {
  it("R5: the result carries the whole conversation as plain JSON", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "t1", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const result = await createAgent(agentOptions({ tools: [echo] })).run("first");
    expect(result.messages.map((message) => message.role)).toEqual([
      "user",
      "assistant",
      "user",
      "assistant",
    ]);
    expect(result.messages[0]).toEqual({ role: "user", content: "first" });
    expect(result.messages[2]?.content).toEqual([
      {
        type: "tool_result",
        tool_use_id: "t1",
        content: [{ type: "text", text: "echo: a" }],
      },
    ]);
    expect(JSON.parse(JSON.stringify(result.messages))).toEqual(result.messages);
  });

  it("R5: run(p2, { messages: r1.messages }) sends exactly what one longer conversation sends, also after a JSON round trip", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "t1", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "text", text: "first answer" }] },
      { content: [{ type: "text", text: "second answer" }] },
      { content: [{ type: "text", text: "second answer" }] },
    );
    const agent = createAgent(agentOptions({ tools: [echo] }));
    const first = await agent.run("first");
    const second = await agent.run("second", { messages: first.messages });
    // The history as a chat app would keep it: stored as JSON and read back.
    const stored = JSON.parse(JSON.stringify(first.messages)) as ModelMessage[];
    await agent.run("second", { messages: stored });
    const expected = [...first.messages, { role: "user", content: "second" }];
    expect(requestMessages(2)).toEqual(JSON.parse(JSON.stringify(expected)));
    expect(JSON.stringify(server.requests[3]?.body)).toBe(JSON.stringify(server.requests[2]?.body));
    expect(second.messages).toEqual([
      ...expected,
      { role: "assistant", content: [{ type: "text", text: "second answer" }] },
    ]);
  });

  const badHistories: [string, unknown, string][] = [
    ["not an array", "hello", "must be an array of { role, content } messages"],
    [
      "a bad role",
      [{ role: "system", content: "x" }],
      'message 0 has role "system"; a role is "user" or "assistant".',
    ],
    [
      "an assistant message first",
      [{ role: "assistant", content: "hi" }],
      "message 0 is an assistant message; a conversation starts with a user message.",
    ],
    [
      "an unanswered tool call",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "echo", input: {} }] },
        { role: "user", content: "never mind" },
      ],
      "message 2 does not answer the tool call t1 of message 1: every tool_use needs a tool_result in the next user message.",
    ],
    [
      "a result without its call",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: "ok" },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t9", content: "x" }] },
      ],
      'message 2 holds a tool_result for "t9", but message 1 has no tool_use with that id: a result must follow its call.',
    ],
    [
      "an unfinished run at the end",
      [
        { role: "user", content: "go" },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "echo", input: {} }] },
      ],
      "ends with message 1, an assistant message whose tool calls (t1) have no results: that run is unfinished.",
    ],
  ];
  for (const [name, messages, text] of badHistories) {
    it(`R4: a history with ${name} is refused before any model call, naming the index and the rule`, () => {
      const agent = createAgent(agentOptions({ tools: [echo] }));
      expect(() => agent.query("next", { messages: messages as ModelMessage[] })).toThrow(text);
      expect(() => agent.query("next", { messages: messages as ModelMessage[] })).toThrow(
        /^QueryOptions: option "messages" /,
      );
      expect(server.requests).toHaveLength(0);
    });
  }

  it("R22: query options stay strict", () => {
    const agent = createAgent(agentOptions());
    expect(() => agent.query("hi", { message: [] } as never)).toThrow(
      'QueryOptions: unknown option "message". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });
});
