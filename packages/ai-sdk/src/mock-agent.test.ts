import type { LanguageModelV3StreamPart } from "@ai-sdk/provider";
import { createAgent } from "@lattice/core";
import { tool } from "@lattice/tools";
import { convertArrayToReadableStream, MockLanguageModelV3 } from "ai/test";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { fromAiSdk } from "./index.js";

const finish = (unified: "stop" | "tool-calls", cacheRead: number): LanguageModelV3StreamPart => ({
  type: "finish",
  finishReason: { unified, raw: undefined },
  usage: {
    inputTokens: { total: 10 + cacheRead, noCache: 10, cacheRead, cacheWrite: undefined },
    outputTokens: { total: 4, text: 4, reasoning: undefined },
  },
});

describe("fromAiSdk + MockLanguageModelV3 driving createAgent", () => {
  it("runs a tool loop whose reasoning signatures reach the next turn through the run log", async () => {
    const model = new MockLanguageModelV3({
      provider: "mock.anthropic",
      modelId: "claude-mock",
      doStream: [
        {
          stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
            { type: "reasoning-start", id: "r" },
            { type: "reasoning-delta", id: "r", delta: "I should add." },
            {
              type: "reasoning-end",
              id: "r",
              providerMetadata: { anthropic: { signature: "sig-turn-1" } },
            },
            { type: "tool-call", toolCallId: "t1", toolName: "add", input: '{"a":2,"b":3}' },
            { type: "tool-call", toolCallId: "t2", toolName: "add", input: '{"a":1}' },
            finish("tool-calls", 0),
          ]),
        },
        {
          stream: convertArrayToReadableStream<LanguageModelV3StreamPart>([
            { type: "text-start", id: "0" },
            { type: "text-delta", id: "0", delta: "2 + 3 = 5" },
            { type: "text-end", id: "0" },
            finish("stop", 90),
          ]),
        },
      ],
    });
    const add = tool(
      "add",
      "Adds",
      z.object({ a: z.number(), b: z.number() }),
      async ({ a, b }) => ({
        content: String(a + b),
      }),
    );
    const agent = createAgent({ provider: fromAiSdk(model), model: "claude-mock", tools: [add] });
    const result = await agent.run("What is 2 + 3?");
    expect(result).toMatchObject({ subtype: "success", result: "2 + 3 = 5", numTurns: 2 });
    expect(result.usage).toMatchObject({
      inputTokens: 20,
      outputTokens: 8,
      cacheReadInputTokens: 90,
    });
    const second = model.doStreamCalls[1]!.prompt;
    expect(second.filter((message) => message.role !== "system")).toEqual([
      { role: "user", content: [{ type: "text", text: "What is 2 + 3?" }] },
      {
        role: "assistant",
        content: [
          {
            type: "reasoning",
            text: "I should add.",
            providerOptions: { anthropic: { signature: "sig-turn-1" } },
          },
          { type: "tool-call", toolCallId: "t1", toolName: "add", input: { a: 2, b: 3 } },
          { type: "tool-call", toolCallId: "t2", toolName: "add", input: { a: 1 } },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "t1",
            toolName: "add",
            output: { type: "text", value: "5" },
          },
          {
            type: "tool-result",
            toolCallId: "t2",
            toolName: "add",
            output: { type: "error-text", value: expect.stringContaining("b") },
          },
        ],
      },
    ]);
  });
});
