import { InvalidOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ContentBlock, ModelMessage } from "../content-blocks.js";
import type { ModelRequest, ModelToolSpec } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { anthropic } from "./anthropic.js";
import { toAnthropicBody } from "./to-anthropic-body.js";

const EPHEMERAL = { type: "ephemeral" };
const LOOKUP: ModelToolSpec = {
  name: "lookup",
  description: "Look a word up",
  inputSchema: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
};
const SPELL: ModelToolSpec = {
  name: "spell",
  description: "Spell a word",
  inputSchema: { type: "object", properties: { word: { type: "string" } } },
};
const SYSTEM = "You are a careful lexicographer. ".repeat(40);

/** A tool loop's history after `turns` tool calls, ending with the latest tool result. */
function toolLoop(turns: number): ModelMessage[] {
  const messages: ModelMessage[] = [{ role: "user", content: "Define these words." }];
  for (let turn = 0; turn < turns; turn++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Next word.", signature: `sig-${turn}` },
        { type: "tool_use", id: `toolu_${turn}`, name: "lookup", input: { word: `w${turn}` } },
      ],
    });
    messages.push({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: `toolu_${turn}`, content: `meaning ${turn}` }],
    });
  }
  return messages;
}

function request(messages: ModelMessage[], extra: Partial<ModelRequest> = {}): ModelRequest {
  return { model: "m", maxTokens: 100, system: SYSTEM, tools: [LOOKUP, SPELL], messages, ...extra };
}

/** Every path in a body whose object carries cache_control. */
function breakpoints(value: unknown, path = ""): string[] {
  if (value === null || typeof value !== "object") return [];
  const here = "cache_control" in value ? [path] : [];
  return [
    ...here,
    ...Object.entries(value).flatMap(([key, inner]) =>
      key === "cache_control" ? [] : breakpoints(inner, path === "" ? key : `${path}.${key}`),
    ),
  ];
}

/** A fetch that records request bodies and answers each with a short text message. */
function recordingFetch(): { fetch: typeof fetch; bodies: Record<string, unknown>[] } {
  const bodies: Record<string, unknown>[] = [];
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    return new Response(
      JSON.stringify({
        id: "msg_1",
        type: "message",
        role: "assistant",
        model: "m",
        content: [{ type: "text", text: "ok" }],
        stop_reason: "end_turn",
        usage: { input_tokens: 1, output_tokens: 1 },
      }),
      { status: 200, headers: { "content-type": "application/json" } },
    );
  }) as unknown as typeof fetch;
  return { fetch: fetchImpl, bodies };
}

async function send(provider: ReturnType<typeof anthropic>, req: ModelRequest) {
  let response: ModelResponse | undefined;
  for await (const event of provider.stream(req)) {
    if (event.type === "response") response = event.response;
  }
  return response!;
}

describe("Anthropic prompt caching", () => {
  it("auto places breakpoints on the latest message's last block, the system prompt, the last tool and the previous user message", () => {
    const body = toAnthropicBody(request(toolLoop(2)), true, true);
    expect(breakpoints(body).sort()).toEqual(
      ["messages.2.content.0", "messages.4.content.0", "system.0", "tools.1"].sort(),
    );
    expect(body.system).toEqual([{ type: "text", text: SYSTEM, cache_control: EPHEMERAL }]);
    expect(body.tools?.[1]).toMatchObject({ name: "spell", cache_control: EPHEMERAL });
    expect(body.tools?.[0]).not.toHaveProperty("cache_control");
  });

  it("off (the default of toAnthropicBody) sends the request without any breakpoint", () => {
    const body = toAnthropicBody(request(toolLoop(2)), true);
    expect(breakpoints(body)).toEqual([]);
    expect(body.system).toBe(SYSTEM);
  });

  it("turns a string message into a text block and skips blocks that cannot carry cache_control", () => {
    const first = toAnthropicBody(request([{ role: "user", content: "Hello" }]), false, true);
    expect(first.messages[0]).toEqual({
      role: "user",
      content: [{ type: "text", text: "Hello", cache_control: EPHEMERAL }],
    });
    const prefill = toAnthropicBody(
      request([
        { role: "user", content: "Hello" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me think." },
            { type: "thinking", thinking: "…", signature: "s" },
          ],
        },
      ]),
      false,
      true,
    );
    expect(prefill.messages[1]!.content).toEqual([
      { type: "text", text: "Let me think.", cache_control: EPHEMERAL },
      { type: "thinking", thinking: "…", signature: "s" },
    ]);
  });

  it("counts the caller's breakpoints and never places more than four in total", () => {
    const marked = (text: string) =>
      ({ type: "text", text, cache_control: { type: "ephemeral" } }) as unknown as ContentBlock;
    for (const existing of [0, 1, 2, 3, 4]) {
      const messages: ModelMessage[] = [
        {
          role: "user",
          content: [
            ...Array.from({ length: existing }, (_, index) => marked(`mark ${index}`)),
            { type: "text", text: "question" },
          ],
        },
        ...toolLoop(2).slice(1),
      ];
      const body = toAnthropicBody(request(messages), true, true);
      const found = breakpoints(body);
      expect(found.length, `${existing} already placed`).toBe(Math.min(4, existing + 4));
      expect(found.length).toBeLessThanOrEqual(4);
      // Priority: latest message, then system, then tools, then the previous user message.
      const placed = found.filter((path) => !path.startsWith("messages.0."));
      const order = ["messages.4.content.0", "system.0", "tools.1", "messages.2.content.0"];
      expect(placed.sort()).toEqual(order.slice(0, Math.max(0, 4 - existing)).sort());
    }
  });

  it("never changes the caller's messages or the cached tool conversion", () => {
    const messages = toolLoop(1);
    const snapshot = structuredClone(messages);
    const cached = toAnthropicBody(request(messages), false, true);
    const plain = toAnthropicBody(request(messages), false, false);
    expect(messages).toEqual(snapshot);
    expect(breakpoints(plain)).toEqual([]);
    expect(cached.tools?.[0]).toBe(plain.tools?.[0]);
  });

  it("defaults to auto for api.anthropic.com and off for other base URLs; the option and the request override it", async () => {
    const cases: {
      options: Parameters<typeof anthropic>[0];
      promptCaching?: "auto" | "off";
      expected: boolean;
    }[] = [
      { options: {}, expected: true },
      { options: { baseURL: "https://api.anthropic.com/" }, expected: true },
      { options: { baseURL: "https://api.deepseek.com/anthropic" }, expected: false },
      { options: { baseURL: "https://gateway.example.com" }, expected: false },
      {
        options: { baseURL: "https://gateway.example.com", promptCaching: "auto" },
        expected: true,
      },
      { options: { promptCaching: "off" }, expected: false },
      { options: {}, promptCaching: "off", expected: false },
      { options: { promptCaching: "off" }, promptCaching: "auto", expected: true },
      {
        options: { baseURL: "https://api.deepseek.com/anthropic" },
        promptCaching: "auto",
        expected: true,
      },
    ];
    for (const { options, promptCaching, expected } of cases) {
      const { fetch, bodies } = recordingFetch();
      const provider = anthropic({ apiKey: "k", ...options, fetch });
      await send(provider, request(toolLoop(1), { stream: false, promptCaching }));
      expect(breakpoints(bodies[0]).length > 0, JSON.stringify({ options, promptCaching })).toBe(
        expected,
      );
    }
  });

  it("checks the promptCaching option", () => {
    expect(() => anthropic({ apiKey: "k", promptCaching: "on" as "auto" })).toThrow(
      InvalidOptionError,
    );
  });

  describe("with the scripted model server", () => {
    let server: ScriptedModelServer;
    beforeEach(async () => {
      server = await createScriptedModelServer();
    });
    afterEach(async () => {
      await server.close();
    });

    it("a long tool loop re-reads its prefix from the cache on every turn (scripted cache model)", async () => {
      const provider = anthropic({
        apiKey: "k",
        baseURL: server.anthropicBaseURL,
        promptCaching: "auto",
      });
      const messages: ModelMessage[] = [{ role: "user", content: "Define ten words." }];
      const usages: ModelResponse["usage"][] = [];
      for (let turn = 0; turn < 10; turn++) {
        server.enqueue({
          content: [
            { type: "text", text: `Word ${turn}.` },
            { type: "tool_use", id: `toolu_${turn}`, name: "lookup", input: { word: `w${turn}` } },
          ],
        });
        const response = await send(provider, request(messages, { stream: turn % 2 === 0 }));
        usages.push(response.usage);
        messages.push(
          { role: "assistant", content: response.message.content },
          {
            role: "user",
            content: [
              { type: "tool_result", tool_use_id: `toolu_${turn}`, content: `meaning ${turn}` },
            ],
          },
        );
      }
      // Turn 1 writes the whole prefix; every later turn reads the previous turn's prefix
      // and writes only what the turn added.
      expect(usages[0]!.cacheReadInputTokens).toBe(0);
      expect(usages[0]!.cacheCreationInputTokens).toBeGreaterThan(SYSTEM.length / 4);
      for (let turn = 1; turn < 10; turn++) {
        const previous = usages[turn - 1]!;
        const usage = usages[turn]!;
        expect(usage.cacheReadInputTokens).toBe(
          previous.cacheReadInputTokens! + previous.cacheCreationInputTokens!,
        );
        expect(usage.cacheCreationInputTokens).toBeGreaterThan(0);
        // Only the turn's own blocks (about 200 characters) are written.
        expect(usage.cacheCreationInputTokens).toBeLessThan(100);
      }
      for (const recorded of server.requests) {
        expect(breakpoints(recorded.body).length).toBeLessThanOrEqual(4);
      }
    });

    it("the server refuses more than four breakpoints, as the API does", async () => {
      const marked = (text: string) =>
        ({ type: "text", text, cache_control: { type: "ephemeral" } }) as unknown as ContentBlock;
      const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 });
      server.enqueue({ content: [{ type: "text", text: "x" }] });
      const tooMany = [marked("a"), marked("b"), marked("c"), marked("d"), marked("e")];
      await expect(
        send(provider, request([{ role: "user", content: tooMany }], { promptCaching: "off" })),
      ).rejects.toThrow(/A maximum of 4 blocks with cache_control may be provided. Found 5./);
    });

    it("a request without breakpoints gets no cache counts", async () => {
      server.enqueue({ content: [{ type: "text", text: "x" }] });
      const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
      const response = await send(provider, request([{ role: "user", content: "Hi" }]));
      expect(response.usage).not.toHaveProperty("cacheReadInputTokens");
      expect(response.usage).not.toHaveProperty("cacheCreationInputTokens");
    });
  });
});
