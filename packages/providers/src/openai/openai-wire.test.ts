import type { AnyToolDefinition } from "@lattice/tools";
import type OpenAI from "openai";
import { describe, expect, expectTypeOf, it } from "vitest";
import type { ModelRequest } from "../model-request.js";
import type { OpenAiChatBody, OpenAiMessage, OpenAiTool, OpenAiToolChoice } from "./openai-wire.js";
import { toOpenAiBody } from "./to-openai-body.js";

const TOOL = {
  name: "get_weather",
  description: "Weather for a place",
  inputSchema: {
    type: "object",
    properties: { location: { type: "string" } },
    required: ["location"],
  },
  kind: "tool",
  handler: () => ({ content: "" }),
} as unknown as AnyToolDefinition;

const FULL_REQUEST: ModelRequest = {
  model: "gpt-4.1",
  system: "Be brief.",
  maxTokens: 512,
  temperature: 0.2,
  stopSequences: ["END"],
  toolChoice: { type: "any" },
  tools: [TOOL],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Weather?" },
        { type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Need the tool.", signature: "" },
        { type: "text", text: "Checking." },
        { type: "tool_use", id: "call_1", name: "get_weather", input: { location: "Paris" } },
        { type: "tool_use", id: "call_2", name: "get_weather", input: {}, inputError: "bad" },
      ],
    },
    {
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "call_1", content: "Sunny" },
        {
          type: "tool_result",
          tool_use_id: "call_2",
          content: [
            { type: "text", text: "bad input" },
            { type: "image", source: { type: "url", url: "https://example.com/x.png" } },
          ],
          is_error: true,
        },
        { type: "text", text: "Thanks" },
      ],
    },
  ],
};

describe("OpenAI wire shapes", () => {
  it("type-check against the official openai request types", () => {
    const streaming = toOpenAiBody(FULL_REQUEST, true, "max_tokens");
    streaming satisfies OpenAI.Chat.ChatCompletionCreateParams;
    const plain = toOpenAiBody(FULL_REQUEST, false, "max_completion_tokens");
    plain satisfies OpenAI.Chat.ChatCompletionCreateParams;
    expectTypeOf<OpenAiChatBody>().toExtend<OpenAI.Chat.ChatCompletionCreateParams>();
    expectTypeOf<OpenAiMessage>().toExtend<OpenAI.Chat.ChatCompletionMessageParam>();
    expectTypeOf<OpenAiTool>().toExtend<OpenAI.Chat.ChatCompletionTool>();
    expectTypeOf<OpenAiToolChoice>().toExtend<OpenAI.Chat.ChatCompletionToolChoiceOption>();
    expect(plain.max_completion_tokens).toBe(512);
    expect(plain.stream).toBeUndefined();
    expect(streaming).toMatchObject({
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 512,
    });
  });

  it("maps messages: system first, tool calls as functions, tool results as role tool, images after them", () => {
    const body = toOpenAiBody(FULL_REQUEST, true, "max_tokens");
    expect(body.messages).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "Weather?" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
      {
        role: "assistant",
        content: "Checking.",
        tool_calls: [
          {
            id: "call_1",
            type: "function",
            function: { name: "get_weather", arguments: '{"location":"Paris"}' },
          },
          { id: "call_2", type: "function", function: { name: "get_weather", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "Sunny" },
      {
        role: "tool",
        tool_call_id: "call_2",
        content: "Error: bad input\n[1 image attached in the next user message]",
      },
      {
        role: "user",
        content: [
          { type: "image_url", image_url: { url: "https://example.com/x.png" } },
          { type: "text", text: "Thanks" },
        ],
      },
    ]);
    expect(body.tool_choice).toBe("required");
    expect(body.stop).toEqual(["END"]);
    expect(body.tools).toEqual([
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "Weather for a place",
          parameters: TOOL.inputSchema,
        },
      },
    ]);
  });

  it("maps tool choices", () => {
    const pick = (toolChoice: ModelRequest["toolChoice"]) =>
      toOpenAiBody({ ...FULL_REQUEST, toolChoice }, false, "max_tokens").tool_choice;
    expect(pick({ type: "auto" })).toBe("auto");
    expect(pick({ type: "none" })).toBe("none");
    expect(pick({ type: "tool", name: "get_weather" })).toEqual({
      type: "function",
      function: { name: "get_weather" },
    });
  });
});
