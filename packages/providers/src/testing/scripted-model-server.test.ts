import { UnknownOptionError } from "@lattice/tools";
import { afterEach, describe, expect, it } from "vitest";
import { createScriptedModelServer, type ScriptedModelServer } from "./scripted-model-server.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; json: unknown; text: string; headers: Headers }> {
  const response = await fetch(`${server!.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: response.status, json, text, headers: response.headers };
}

const TOOL_A = { name: "a", description: "A", input_schema: { type: "object", properties: {} } };

describe("createScriptedModelServer(): Anthropic request validation", () => {
  const cases: [string, unknown, string][] = [
    [
      "a missing model",
      { max_tokens: 5, messages: [{ role: "user", content: "x" }] },
      "model: Field required",
    ],
    [
      "a missing max_tokens",
      { model: "m", messages: [{ role: "user", content: "x" }] },
      "max_tokens: Field required",
    ],
    [
      "a bad role",
      { model: "m", max_tokens: 5, messages: [{ role: "system", content: "x" }] },
      "messages.0.role",
    ],
    [
      "duplicate tool names",
      {
        model: "m",
        max_tokens: 5,
        tools: [TOOL_A, TOOL_A],
        messages: [{ role: "user", content: "x" }],
      },
      "Tool names must be unique",
    ],
    [
      "a tool_use without its tool_result right after it",
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
          { role: "user", content: "next" },
        ],
      },
      "`tool_use` ids were found without `tool_result` blocks immediately after: t1",
    ],
    [
      "tool_result blocks after text",
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: "x" },
          { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "a", input: {} }] },
          {
            role: "user",
            content: [
              { type: "text", text: "here" },
              { type: "tool_result", tool_use_id: "t1", content: "r" },
            ],
          },
        ],
      },
      "tool_result blocks must come before any other content",
    ],
    [
      "a tool_result answering no tool_use",
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: [{ type: "tool_result", tool_use_id: "zz", content: "r" }] },
        ],
      },
      "unexpected `tool_use_id`",
    ],
    [
      "an SDK-internal key on a block",
      {
        model: "m",
        max_tokens: 5,
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            content: [{ type: "tool_use", id: "t1", name: "a", input: {}, inputError: "bad" }],
          },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "r" }] },
        ],
      },
      "inputError: Extra inputs are not permitted",
    ],
    [
      "an empty text block",
      {
        model: "m",
        max_tokens: 5,
        messages: [{ role: "user", content: [{ type: "text", text: "" }] }],
      },
      "text content blocks must be non-empty",
    ],
  ];
  it.each(cases)("answers 400 for %s", async (_name, body, message) => {
    server = await createScriptedModelServer({
      turns: [{ content: [{ type: "text", text: "unused" }] }],
    });
    const response = await post("/v1/messages", body);
    expect(response.status).toBe(400);
    expect(response.json).toMatchObject({
      type: "error",
      error: { type: "invalid_request_error" },
    });
    expect((response.json as { error: { message: string } }).error.message).toContain(message);
    expect(server.pendingTurns).toBe(1);
  });
});

describe("createScriptedModelServer(): OpenAI request validation", () => {
  const fn = (name: string) => ({
    type: "function",
    function: { name, parameters: { type: "object", properties: {} } },
  });
  const cases: [string, unknown, string][] = [
    ["a missing model", { messages: [{ role: "user", content: "x" }] }, "model"],
    [
      "a bad role",
      { model: "m", messages: [{ role: "robot", content: "x" }] },
      "Invalid value: 'robot'",
    ],
    [
      "duplicate tool names",
      { model: "m", tools: [fn("a"), fn("a")], messages: [{ role: "user", content: "x" }] },
      "duplicate function name 'a'",
    ],
    [
      "tool_calls without tool messages for each id",
      {
        model: "m",
        messages: [
          { role: "user", content: "x" },
          {
            role: "assistant",
            content: null,
            tool_calls: [{ id: "c1", type: "function", function: { name: "a", arguments: "{}" } }],
          },
          { role: "user", content: "next" },
        ],
      },
      "did not have response messages: c1",
    ],
    [
      "a tool message answering nothing",
      {
        model: "m",
        messages: [
          { role: "user", content: "x" },
          { role: "tool", tool_call_id: "c9", content: "r" },
        ],
      },
      "must be a response to a preceeding message",
    ],
    [
      "a strict function with a non-strict schema",
      {
        model: "m",
        tools: [
          {
            type: "function",
            function: {
              name: "a",
              strict: true,
              parameters: { type: "object", properties: { x: { type: "string" } } },
            },
          },
        ],
        messages: [{ role: "user", content: "x" }],
      },
      "additionalProperties",
    ],
    [
      "stream_options without stream",
      {
        model: "m",
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "x" }],
      },
      "stream_options",
    ],
  ];
  it.each(cases)("answers 400 for %s", async (_name, body, message) => {
    server = await createScriptedModelServer();
    const response = await post("/v1/chat/completions", body);
    expect(response.status).toBe(400);
    expect((response.json as { error: { message: string } }).error.message).toContain(message);
  });
});

describe("createScriptedModelServer()", () => {
  it("checks its options strictly", async () => {
    const attempt = createScriptedModelServer({ turnz: [] } as never);
    await expect(attempt).rejects.toThrow(UnknownOptionError);
    await expect(attempt).rejects.toThrow(
      'createScriptedModelServer(): unknown option "turnz". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("serves turns in order across both protocols and logs requests with keys redacted", async () => {
    server = await createScriptedModelServer({
      turns: [
        { content: [{ type: "text", text: "one" }] },
        { content: [{ type: "text", text: "two" }] },
      ],
    });
    expect(server.anthropicBaseURL).toBe(server.url);
    expect(server.openaiBaseURL).toBe(`${server.url}/v1`);
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const first = await post(
      "/v1/messages",
      { model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] },
      { "x-api-key": "secret-1" },
    );
    const second = await post(
      "/v1/chat/completions",
      { model: "m", messages: [{ role: "user", content: "x" }] },
      { authorization: "Bearer secret-2" },
    );
    expect(first.json).toMatchObject({
      type: "message",
      content: [{ type: "text", text: "one" }],
      stop_reason: "end_turn",
    });
    expect(second.json).toMatchObject({
      object: "chat.completion",
      choices: [{ message: { content: "two" }, finish_reason: "stop" }],
    });
    expect(
      server.requests.map((request) => [request.protocol, request.path, request.stream]),
    ).toEqual([
      ["anthropic", "/v1/messages", false],
      ["openai", "/v1/chat/completions", false],
    ]);
    expect(JSON.stringify(server.requests)).not.toMatch(/secret-[12]/);
  });

  it("redacts every credential header in the request log", async () => {
    server = await createScriptedModelServer({
      turns: [{ content: [{ type: "text", text: "one" }] }],
    });
    await post(
      "/v1/messages",
      { model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] },
      {
        "proxy-authorization": "Basic secret-3",
        "api-key": "secret-4",
        cookie: "session=secret-5",
        "x-goog-api-key": "secret-6",
        "x-auth-token": "secret-7",
        "anthropic-beta": "tools-2024",
      },
    );
    const headers = server.requests[0]!.headers;
    expect(JSON.stringify(server.requests)).not.toMatch(/secret-\d/);
    expect(headers["proxy-authorization"]).toBe("[redacted]");
    expect(headers["api-key"]).toBe("[redacted]");
    expect(headers.cookie).toBe("[redacted]");
    expect(headers["anthropic-beta"]).toBe("tools-2024");
  });

  it("uses respond() when the queue is empty, and answers 500 without retry when there is nothing", async () => {
    server = await createScriptedModelServer({
      respond: (request) => ({ content: [{ type: "text", text: `echo ${request.protocol}` }] }),
    });
    const answered = await post("/v1/messages", {
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    });
    expect(answered.json).toMatchObject({ content: [{ type: "text", text: "echo anthropic" }] });
    await server.close();
    server = await createScriptedModelServer();
    const empty = await post("/v1/messages", {
      model: "m",
      max_tokens: 5,
      messages: [{ role: "user", content: "x" }],
    });
    expect(empty.status).toBe(500);
    expect(empty.headers.get("x-should-retry")).toBe("false");
  });

  it("answers 401 with an API-shaped body for a wrong key, and 404 for unknown paths", async () => {
    server = await createScriptedModelServer({
      apiKey: "right",
      turns: [{ content: [{ type: "text", text: "ok" }] }],
    });
    const wrong = await post(
      "/v1/messages",
      { model: "m", max_tokens: 5, messages: [{ role: "user", content: "x" }] },
      { "x-api-key": "wrong" },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.json).toMatchObject({ type: "error", error: { type: "authentication_error" } });
    const missing = await post("/v1/other", {});
    expect(missing.status).toBe(404);
    const right = await post(
      "/v1/chat/completions",
      { model: "m", messages: [{ role: "user", content: "x" }] },
      { authorization: "Bearer right" },
    );
    expect(right.status).toBe(200);
  });

  it("renders HTTP error turns with their headers and body", async () => {
    server = await createScriptedModelServer({
      turns: [
        { status: 429, headers: { "retry-after": "3" }, body: { error: { message: "slow down" } } },
      ],
    });
    const response = await post("/v1/chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect(response.status).toBe(429);
    expect(response.headers.get("retry-after")).toBe("3");
    expect(response.json).toEqual({ error: { message: "slow down" } });
  });

  it("streams SSE in both protocols", async () => {
    server = await createScriptedModelServer({
      turns: [
        { content: [{ type: "text", text: "hi" }] },
        { content: [{ type: "text", text: "hi" }] },
      ],
    });
    const anthropicStream = await post("/v1/messages", {
      model: "m",
      max_tokens: 5,
      stream: true,
      messages: [{ role: "user", content: "x" }],
    });
    expect(anthropicStream.headers.get("content-type")).toContain("text/event-stream");
    expect(anthropicStream.text).toContain("event: message_stop");
    const openaiStream = await post("/v1/chat/completions", {
      model: "m",
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: "user", content: "x" }],
    });
    expect(openaiStream.text).toContain('"usage":{"prompt_tokens"');
    expect(openaiStream.text.trimEnd().endsWith("data: [DONE]")).toBe(true);
  });
});
