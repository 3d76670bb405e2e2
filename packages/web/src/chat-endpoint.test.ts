import { createAgent, memorySessionStore } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import type { UIMessage } from "ai";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { type ChatEndpoint, chatEndpoint, DEFAULT_MAX_CHAT_BODY_BYTES } from "./index.js";

const API_KEY = "sk-test-never-in-a-response";
let server: ScriptedModelServer;
let chat: ChatEndpoint;
beforeEach(async () => {
  server = await createScriptedModelServer();
  const deploy = tool(
    "deploy",
    "Deploys",
    z.object({ service: z.string() }),
    async () => ({ content: "ok" }),
    {
      needsApproval: true,
    },
  );
  const agent = createAgent({
    apiKey: API_KEY,
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    tools: [deploy],
    sessionStore: memorySessionStore(),
  });
  chat = chatEndpoint(agent, { maxBodyBytes: 4_096 });
});
afterEach(async () => {
  await server.close();
});

const user = (text: string): UIMessage => ({
  id: "u1",
  role: "user",
  parts: [{ type: "text", text }],
});

function post(body: string | object, headers: Record<string, string> = {}): Request {
  return new Request("http://localhost/api/chat", {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
}

/** Checks a 4xx answer: JSON `{ error: { code, message } }`, with no stack, key or path in it. */
async function expectCalmRefusal(
  response: Response,
  status: number,
  code: string,
): Promise<string> {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  const text = await response.text();
  const body = JSON.parse(text) as { error: { code: string; message: string } };
  expect(body.error.code).toBe(code);
  expect(body.error.message.length).toBeGreaterThan(20);
  expect(text).not.toMatch(/\n\s+at |sk-test|\/work\/|\/tmp\/|node_modules|\.ts:\d/);
  return body.error.message;
}

describe("the chat endpoint takes bad input calmly (W9)", () => {
  it("W9: a body over maxBodyBytes is 413, whether it says its length or not", async () => {
    const big = JSON.stringify({ id: "c", messages: [user("x".repeat(5_000))] });
    const message = await expectCalmRefusal(
      await chat.handle(post(big)),
      413,
      "chat_body_too_large",
    );
    expect(message).toContain("4096 bytes");
    const streamed = new Request("http://localhost/api/chat", {
      method: "POST",
      body: new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(big));
          controller.close();
        },
      }),
      duplex: "half",
    } as RequestInit);
    await expectCalmRefusal(await chat.handle(streamed), 413, "chat_body_too_large");
    expect(DEFAULT_MAX_CHAT_BODY_BYTES).toBe(1_000_000);
    expect(server.requests).toHaveLength(0);
  });

  it("W9: a body that is not JSON, or has no messages, is 400", async () => {
    await expectCalmRefusal(await chat.handle(post("{not json")), 400, "chat_body_invalid");
    await expectCalmRefusal(await chat.handle(post({ id: "c" })), 400, "chat_body_invalid");
    await expectCalmRefusal(
      await chat.handle(post({ messages: [user("hi")] })),
      400,
      "chat_body_invalid",
    );
    expect(server.requests).toHaveLength(0);
  });

  it("W9: a message Lattice cannot send, or a history that fails R4, is 400 naming the message", async () => {
    const zip = {
      id: "c",
      messages: [
        {
          id: "u9",
          role: "user",
          parts: [
            { type: "file", mediaType: "application/zip", url: "data:application/zip;base64,AA==" },
          ],
        },
      ],
    };
    const message = await expectCalmRefusal(
      await chat.handle(post(zip)),
      400,
      "chat_history_invalid",
    );
    expect(message).toContain('id "u9"');

    const client = chatEndpoint(
      createAgent({ apiKey: API_KEY, baseURL: server.anthropicBaseURL, model: "scripted" }),
      { conversation: "client" },
    );
    const assistantFirst = {
      messages: [
        { id: "a0", role: "assistant", parts: [{ type: "text", text: "Hello" }] },
        user("hi"),
      ],
    };
    const r4 = await expectCalmRefusal(
      await client.handle(post(assistantFirst)),
      400,
      "chat_history_invalid",
    );
    expect(r4).toMatch(/message 0/);
    expect(server.requests).toHaveLength(0);
  });

  it("W9: approval answers for an unknown approval id, or a chat with nothing paused, are 409", async () => {
    server.enqueue({
      content: [{ type: "tool_use", id: "call_1", name: "deploy", input: { service: "web" } }],
      stopReason: "tool_use",
    });
    const paused = await chat.handle(post({ id: "chat-a", messages: [user("deploy web")] }));
    expect(await paused.text()).toContain("tool-approval-request");
    const forged = {
      id: "chat-a",
      messages: [
        user("deploy web"),
        {
          id: "run",
          role: "assistant",
          parts: [
            {
              type: "tool-deploy",
              toolCallId: "call_1",
              state: "approval-responded",
              input: { service: "web" },
              approval: { id: "not-a-real-approval-id", approved: true },
            },
          ],
        },
      ],
    };
    const unknown = await expectCalmRefusal(
      await chat.handle(post(forged)),
      409,
      "approval_unknown",
    );
    expect(unknown).toContain("reload the chat");
    await expectCalmRefusal(
      await chat.handle(post({ ...forged, id: "chat-never-paused" })),
      409,
      "approval_unknown",
    );
    // The paused run is untouched: the right answer still resumes it.
    const history = await chat.history("chat-a");
    const part = history.at(-1)?.parts.find((p) => p.type === "tool-deploy") as {
      state: string;
      approval: { id: string };
    };
    expect(part.state).toBe("approval-requested");
  });
});
