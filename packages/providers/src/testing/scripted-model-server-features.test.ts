import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createScriptedModelServer, type ScriptedModelServer } from "./index.js";
import { PromptCacheModel } from "./prompt-cache-model.js";

const EPHEMERAL = { type: "ephemeral" };

async function post(
  server: ScriptedModelServer,
  path: string,
  body: unknown,
): Promise<{ status: number; json: Record<string, unknown>; text: string }> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  let json: Record<string, unknown> = {};
  try {
    json = JSON.parse(text) as Record<string, unknown>;
  } catch {}
  return { status: response.status, json, text };
}

describe("PromptCacheModel", () => {
  it("writes the prefix up to the last breakpoint, then reads the longest remembered prefix (tokens = characters / 4)", () => {
    const model = new PromptCacheModel();
    const system = "s".repeat(400);
    const first = {
      model: "m",
      system: [{ type: "text", text: system, cache_control: EPHEMERAL }],
      messages: [
        { role: "user", content: [{ type: "text", text: "q1", cache_control: EPHEMERAL }] },
      ],
    };
    const measured = model.measure(first)!;
    expect(measured.cacheReadInputTokens).toBe(0);
    const total = measured.cacheCreationInputTokens;
    expect(total).toBeGreaterThan(100);
    // The same prefix again: read whole.
    expect(model.measure(first)).toEqual({
      cacheReadInputTokens: total,
      cacheCreationInputTokens: 0,
    });
    // A longer conversation: reads the remembered prefix, writes the rest.
    const second = {
      ...first,
      messages: [
        { role: "user", content: "q1" },
        { role: "assistant", content: "a1" },
        { role: "user", content: [{ type: "text", text: "q2", cache_control: EPHEMERAL }] },
      ],
    };
    const next = model.measure(second)!;
    expect(next.cacheReadInputTokens).toBe(total);
    expect(next.cacheCreationInputTokens).toBeGreaterThan(0);
    // Another model does not share the cache; a request without breakpoints is not measured.
    expect(model.measure({ ...first, model: "other" })!.cacheReadInputTokens).toBe(0);
    expect(model.measure({ model: "m", system, messages: [{ role: "user", content: "q" }] })).toBe(
      undefined,
    );
  });
});

describe("createScriptedModelServer(): thinking, server blocks and cache counts", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it.each([
    [{ budget_tokens: 512 }, {}, /greater than or equal to 1024/],
    [{ budget_tokens: 2048 }, { max_tokens: 2048 }, /max_tokens` must be greater than/],
    [{ budget_tokens: 1024 }, { temperature: 0.5 }, /temperature` may only be set to 1/],
    [{ budget_tokens: 1024 }, { tool_choice: { type: "any" } }, /tool_choice forces tool use/],
  ])("rejects extended thinking %j with %j as the API does", async (thinking, extra, message) => {
    const { status, text } = await post(server, "/v1/messages", {
      model: "m",
      max_tokens: 4096,
      thinking: { type: "enabled", ...thinking },
      tools: [{ name: "t", input_schema: { type: "object" } }],
      messages: [{ role: "user", content: "x" }],
      ...extra,
    });
    expect(status).toBe(400);
    expect(text).toMatch(message);
  });

  it("rejects a cache_control that is not ephemeral and system blocks that are not text", async () => {
    const bad = await post(server, "/v1/messages", {
      model: "m",
      max_tokens: 10,
      system: [{ type: "text", text: "s", cache_control: { type: "persistent" } }],
      messages: [{ role: "user", content: "x" }],
    });
    expect(bad.status).toBe(400);
    expect(bad.text).toContain("system.0.cache_control.type");
    const image = await post(server, "/v1/messages", {
      model: "m",
      max_tokens: 10,
      system: [{ type: "image", source: {} }],
      messages: [{ role: "user", content: "x" }],
    });
    expect(image.status).toBe(400);
  });

  it("renders anthropic_block blocks for Anthropic requests and leaves them out for OpenAI requests", async () => {
    const block = { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] };
    const reply = {
      content: [
        { type: "anthropic_block" as const, block },
        { type: "text" as const, text: "Done." },
      ],
    };
    server.enqueue(reply, reply);
    const fromAnthropic = await post(server, "/v1/messages", {
      model: "m",
      max_tokens: 10,
      messages: [{ role: "user", content: "x" }],
    });
    expect(fromAnthropic.json.content).toEqual([block, { type: "text", text: "Done." }]);
    const fromOpenAi = await post(server, "/v1/chat/completions", {
      model: "m",
      messages: [{ role: "user", content: "x" }],
    });
    expect(
      (fromOpenAi.json.choices as { message: { content: string } }[])[0]!.message.content,
    ).toBe("Done.");
  });

  it("answers requests with breakpoints with cache counts, and a scripted usage overrides them", async () => {
    const body = {
      model: "m",
      max_tokens: 10,
      system: [{ type: "text", text: "s".repeat(800), cache_control: EPHEMERAL }],
      messages: [{ role: "user", content: "x" }],
    };
    const reply = { content: [{ type: "text" as const, text: "ok" }] };
    server.enqueue(reply, reply, { ...reply, usage: { cacheReadInputTokens: 7 } });
    const first = (await post(server, "/v1/messages", body)).json.usage as Record<string, number>;
    const second = (await post(server, "/v1/messages", body)).json.usage as Record<string, number>;
    const forced = (await post(server, "/v1/messages", body)).json.usage as Record<string, number>;
    expect(first.cache_read_input_tokens).toBe(0);
    expect(first.cache_creation_input_tokens).toBeGreaterThanOrEqual(200);
    expect(second.cache_read_input_tokens).toBe(first.cache_creation_input_tokens);
    expect(second.cache_creation_input_tokens).toBe(0);
    expect(forced.cache_read_input_tokens).toBe(7);
    // Input tokens leave out the cached part.
    expect(second.input_tokens).toBeLessThan(first.cache_creation_input_tokens!);
  });
});
