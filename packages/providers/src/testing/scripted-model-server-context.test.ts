import { InvalidOptionError } from "@lattice/tools";
import { afterEach, describe, expect, it } from "vitest";
import {
  createScriptedModelServer,
  estimateRequestTokens,
  type ScriptedModelServer,
  type ScriptedModelServerOptions,
} from "./index.js";
import { validateAnthropicRequest } from "./validate-anthropic-request.js";

const BETA = "context-management-2025-06-27";
const MESSAGES = {
  model: "claude-sonnet-4-6",
  max_tokens: 64,
  messages: [{ role: "user", content: "z".repeat(1_000) }],
};
const COUNT = { model: "claude-sonnet-4-6", messages: MESSAGES.messages };
const CHAT = {
  model: "gpt-4.1",
  messages: [{ role: "user", content: "z".repeat(1_000) }],
};
const EDITS = {
  edits: [
    { type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 1 } },
    {
      type: "clear_tool_uses_20250919",
      trigger: { type: "tool_uses", value: 10 },
      keep: { type: "tool_uses", value: 2 },
      clear_at_least: null,
      clear_tool_inputs: ["read_file"],
      exclude_tools: null,
    },
  ],
};

interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
  readonly text: string;
}

async function post(
  server: ScriptedModelServer,
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {}
  return { status: response.status, json, text };
}

describe("scripted model server: context (issue 24)", () => {
  let server: ScriptedModelServer | undefined;
  const start = async (options: ScriptedModelServerOptions): Promise<ScriptedModelServer> => {
    server = await createScriptedModelServer(options);
    return server;
  };
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  it("C1: estimateRequestTokens is a quarter of the body's JSON text, at least 1, and the reply's default input tokens", async () => {
    const text = JSON.stringify(MESSAGES);
    expect(estimateRequestTokens(text)).toBe(Math.ceil(text.length / 4));
    expect(estimateRequestTokens(MESSAGES)).toBe(estimateRequestTokens(text));
    expect(estimateRequestTokens("")).toBe(1);
    const scripted = await start({ turns: [{ content: [{ type: "text", text: "ok" }] }] });
    const answer = await post(scripted, "/v1/messages", text);
    expect((answer.json.usage as { input_tokens: number }).input_tokens).toBe(
      estimateRequestTokens(text),
    );
  });

  it("C4: contextWindow refuses a larger Anthropic request with the API's error, recorded, without using a turn", async () => {
    const scripted = await start({
      contextWindow: 100,
      turns: [{ content: [{ type: "text", text: "ok" }] }],
    });
    for (const stream of [false, true]) {
      const sent = estimateRequestTokens({ ...MESSAGES, stream });
      const answer = await post(scripted, "/v1/messages", { ...MESSAGES, stream });
      expect(answer.status).toBe(400);
      expect(answer.json).toEqual({
        type: "error",
        error: {
          type: "invalid_request_error",
          message: `prompt is too long: ${sent} tokens > 100 maximum`,
        },
        request_id: expect.stringMatching(/^req_scripted_/),
      });
    }
    expect(scripted.requests.map((request) => request.path)).toEqual([
      "/v1/messages",
      "/v1/messages",
    ]);
    expect(scripted.requests[1]!.stream).toBe(true);
    expect(scripted.pendingTurns).toBe(1);
    // Under the window (the cached part counts too): served.
    const small = { ...MESSAGES, messages: [{ role: "user", content: "hi" }] };
    expect((await post(scripted, "/v1/messages", small)).status).toBe(200);
    expect(scripted.pendingTurns).toBe(0);
  });

  it("C4: contextWindow refuses a larger OpenAI request with context_length_exceeded", async () => {
    const scripted = await start({
      contextWindow: 200,
      turns: [{ content: [{ type: "text", text: "ok" }] }],
    });
    const answer = await post(scripted, "/v1/chat/completions", CHAT);
    const sent = estimateRequestTokens(CHAT);
    expect(sent).toBeGreaterThan(200);
    expect(answer.status).toBe(400);
    expect(answer.json).toEqual({
      error: {
        message: `This model's maximum context length is 200 tokens. However, your messages resulted in ${sent} tokens. Please reduce the length of the messages.`,
        type: "invalid_request_error",
        param: "messages",
        code: "context_length_exceeded",
      },
    });
    expect(scripted.requests).toHaveLength(1);
    expect(scripted.pendingTurns).toBe(1);
  });

  it("C4: contextWindow must be a positive integer", async () => {
    await expect(createScriptedModelServer({ contextWindow: 0 })).rejects.toThrow(
      InvalidOptionError,
    );
    await expect(createScriptedModelServer({ contextWindow: 1.5 })).rejects.toThrow(
      /contextWindow/,
    );
  });

  it("C1: POST /v1/messages/count_tokens answers the estimate, is recorded, and never uses a turn", async () => {
    const scripted = await start({
      apiKey: "sk-ant-count-0000",
      contextWindow: 10,
      turns: [{ content: [{ type: "text", text: "ok" }] }],
      respond: () => {
        throw new Error("count_tokens must not ask for a turn");
      },
    });
    const answer = await post(scripted, "/v1/messages/count_tokens", COUNT, {
      "x-api-key": "sk-ant-count-0000",
    });
    expect(answer).toMatchObject({
      status: 200,
      json: { input_tokens: estimateRequestTokens(COUNT) },
    });
    expect(scripted.requests[0]).toMatchObject({
      protocol: "anthropic",
      path: "/v1/messages/count_tokens",
      stream: false,
      body: COUNT,
    });
    expect(scripted.pendingTurns).toBe(1);
    const unauthorised = await post(scripted, "/v1/messages/count_tokens", COUNT);
    expect(unauthorised.status).toBe(401);
  });

  it("C1: count_tokens is validated as the endpoint's params: no max_tokens, stream or sampling", async () => {
    const scripted = await start({});
    const cases: [unknown, string][] = [
      [{ ...COUNT, max_tokens: 64 }, "max_tokens: Extra inputs are not permitted"],
      [{ ...COUNT, stream: true }, "stream: Extra inputs are not permitted"],
      [{ ...COUNT, temperature: 0.5 }, "temperature: Extra inputs are not permitted"],
      [{ ...COUNT, stop_sequences: ["x"] }, "stop_sequences: Extra inputs are not permitted"],
      [{ messages: COUNT.messages }, "model: Field required"],
      [{ model: "m", messages: [] }, "messages: at least one message is required"],
    ];
    for (const [body, message] of cases) {
      const answer = await post(scripted, "/v1/messages/count_tokens", body);
      expect(answer.status, message).toBe(400);
      expect((answer.json.error as { message: string }).message).toBe(message);
    }
    const full = {
      ...COUNT,
      system: [{ type: "text", text: "s", cache_control: { type: "ephemeral" } }],
      tools: [{ name: "t", description: "d", input_schema: { type: "object" } }],
      tool_choice: { type: "auto" },
      thinking: { type: "enabled", budget_tokens: 2048 },
      context_management: EDITS,
    };
    const answer = await post(scripted, "/v1/messages/count_tokens", full, {
      "anthropic-beta": BETA,
    });
    expect(answer.status).toBe(200);
  });

  it("C7: context_management is validated: the beta header, known edits, known fields, right types", () => {
    const check = (value: unknown, betas: string | undefined = BETA): string | undefined =>
      validateAnthropicRequest({ ...MESSAGES, context_management: value }, { betas });
    const withoutBeta = validateAnthropicRequest({ ...MESSAGES, context_management: EDITS });
    expect(check(EDITS)).toBeUndefined();
    expect(check(EDITS, `files-api-2025-04-14, ${BETA}`)).toBeUndefined();
    expect(check({ edits: [{ type: "clear_thinking_20251015", keep: "all" }] })).toBeUndefined();
    expect(check({ edits: [{ type: "clear_thinking_20251015", keep: { type: "all" } }] })).toBe(
      undefined,
    );
    expect(check({})).toBeUndefined();
    expect(withoutBeta).toMatch(/^context_management: Extra inputs are not permitted/);
    expect(check(EDITS, "files-api-2025-04-14")).toMatch(/anthropic-beta/);
    expect(check([])).toBe("context_management: Input should be a valid dictionary");
    expect(check({ edits: [], extra: 1 })).toBe(
      "context_management.extra: Extra inputs are not permitted",
    );
    expect(check({ edits: {} })).toBe("context_management.edits: Input should be a valid list");
    expect(check({ edits: [{ type: "clear_everything" }] })).toMatch(
      /^context_management\.edits\.0: Input tag 'clear_everything'/,
    );
    expect(check({ edits: [{ type: "clear_tool_uses_20250919", keep_last: 3 }] })).toBe(
      "context_management.edits.0.clear_tool_uses_20250919.keep_last: Extra inputs are not permitted",
    );
    expect(
      check({
        edits: [{ type: "clear_tool_uses_20250919", trigger: { type: "turns", value: 3 } }],
      }),
    ).toMatch(/trigger: Input tag 'turns'/);
    expect(
      check({
        edits: [{ type: "clear_tool_uses_20250919", keep: { type: "tool_uses", value: -1 } }],
      }),
    ).toMatch(/keep\.tool_uses\.value: Input should be a valid integer/);
    expect(
      check({ edits: [{ type: "clear_tool_uses_20250919", keep: { type: "tool_uses" } }] }),
    ).toMatch(/keep\.tool_uses\.value: Field required/);
    expect(
      check({ edits: [{ type: "clear_tool_uses_20250919", clear_tool_inputs: "yes" }] }),
    ).toMatch(/clear_tool_inputs/);
    expect(check({ edits: [{ type: "clear_tool_uses_20250919", exclude_tools: [1] }] })).toMatch(
      /exclude_tools/,
    );
    expect(check({ edits: [{ type: "clear_thinking_20251015", keep: 2 }] })).toMatch(/keep/);
  });

  it("C7: a request with context_management gets the scripted applied edits (or none), in both modes", async () => {
    const edits = [
      { type: "clear_tool_uses_20250919", clearedInputTokens: 900, clearedToolUses: 2 },
      { type: "clear_thinking_20251015", clearedInputTokens: 300, clearedThinkingTurns: 1 },
    ];
    const scripted = await start({
      turns: [
        { content: [{ type: "text", text: "a" }], contextEdits: edits },
        { content: [{ type: "text", text: "b" }], contextEdits: edits },
        { content: [{ type: "text", text: "c" }] },
        { content: [{ type: "text", text: "d" }] },
      ],
    });
    const headers = { "anthropic-beta": BETA };
    const body = { ...MESSAGES, context_management: EDITS };
    const wire = {
      applied_edits: [
        { type: "clear_tool_uses_20250919", cleared_input_tokens: 900, cleared_tool_uses: 2 },
        { type: "clear_thinking_20251015", cleared_input_tokens: 300, cleared_thinking_turns: 1 },
      ],
    };
    const plain = await post(scripted, "/v1/messages", body, headers);
    expect(plain.json.context_management).toEqual(wire);
    const streamed = await post(scripted, "/v1/messages", { ...body, stream: true }, headers);
    const delta = streamed.text
      .split("\n")
      .filter((line) => line.startsWith("data: "))
      .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>)
      .find((event) => event.type === "message_delta");
    expect(delta?.context_management).toEqual(wire);
    const none = await post(scripted, "/v1/messages", body, headers);
    expect(none.json.context_management).toEqual({ applied_edits: [] });
    const without = await post(scripted, "/v1/messages", MESSAGES);
    expect(without.json).not.toHaveProperty("context_management");
  });
});
