import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { type AgentOptions, agentTool, createAgent, defineAgent } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-controls",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const body = (index: number) => server.requests[index]?.body as Record<string, unknown>;

describe("usage and model controls", () => {
  it("usage keeps cache reads and writes apart, summed over turns and agent tools' child runs", async () => {
    const helper = defineAgent({ name: "helper", description: "Helps" });
    server.enqueue(
      {
        content: [{ type: "tool_use", id: "h1", name: "helper", input: { task: "t" } }],
        usage: { inputTokens: 10, outputTokens: 2, cacheCreationInputTokens: 500 },
      },
      {
        content: [{ type: "text", text: "child" }],
        usage: { inputTokens: 3, outputTokens: 1, cacheReadInputTokens: 40 },
      },
      {
        content: [{ type: "text", text: "done" }],
        usage: { inputTokens: 12, outputTokens: 4, cacheReadInputTokens: 500 },
      },
    );
    const result = await createAgent(agentOptions({ tools: [agentTool(helper)] })).run("go");
    expect(result.usage).toEqual({
      inputTokens: 25,
      outputTokens: 7,
      cacheReadInputTokens: 540,
      cacheCreationInputTokens: 500,
      contextTokens: 516,
    });
  });

  it("promptCaching, thinking, toolChoice and stopSequences reach every request; tools are sent as plain data", async () => {
    const lookup = tool("lookup", "Looks up", z.object({ q: z.string() }), async () => ({
      content: "x",
    }));
    server.enqueue({ content: [{ type: "text", text: "ok" }] });
    await createAgent(
      agentOptions({
        tools: [lookup],
        promptCaching: "auto",
        thinking: { budgetTokens: 2048 },
        toolChoice: { type: "auto" },
        stopSequences: ["END"],
        maxTokens: 1000,
      }),
    ).run("go");
    const sent = body(0);
    expect(sent.thinking).toEqual({ type: "enabled", budget_tokens: 2048 });
    expect(sent.max_tokens as number).toBeGreaterThan(2048);
    expect(sent.tool_choice).toEqual({ type: "auto" });
    expect(sent.stop_sequences).toEqual(["END"]);
    expect(JSON.stringify(sent)).toContain('"cache_control":{"type":"ephemeral"}');
    expect(Object.keys((sent.tools as object[])[0]!).sort()).toEqual(
      ["cache_control", "description", "input_schema", "name"].sort(),
    );
  });

  it("reasoningEffort reaches OpenAI-compatible requests", async () => {
    const { openaiCompatible } = await import("@lattice/providers");
    server.enqueue({ content: [{ type: "text", text: "ok" }] });
    await createAgent({
      model: "scripted",
      provider: openaiCompatible({ baseURL: server.openaiBaseURL, apiKey: "sk-test" }),
      reasoningEffort: "high",
    }).run("go");
    expect(body(0).reasoning_effort).toBe("high");
  });

  it("R22: the model controls are checked strictly", () => {
    expect(() => createAgent(agentOptions({ promptCaching: "always" as never }))).toThrow(
      /AgentOptions: option "promptCaching" must be "auto" or "off"/,
    );
    expect(() => createAgent(agentOptions({ thinking: { budget: 10 } as never }))).toThrow(
      /AgentOptions: option "thinking" must be \{ budgetTokens: <integer> \}/,
    );
    expect(() => createAgent(agentOptions({ toolChoice: { type: "tool", name: "nope" } }))).toThrow(
      /AgentOptions: option "toolChoice" must be .* naming one of the agent's tools/,
    );
    expect(() => createAgent(agentOptions({ stopSequences: [""] }))).toThrow(
      /AgentOptions: option "stopSequences" must be an array of non-empty strings/,
    );
    expect(() => createAgent(agentOptions({ reasoningEffort: "max" as never }))).toThrow(
      /AgentOptions: option "reasoningEffort" must be "low", "medium" or "high"/,
    );
  });
});
