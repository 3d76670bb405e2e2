import { describe, expect, it } from "vitest";
import type { ContentBlock, ModelMessage } from "../content-blocks.js";
import type { ModelRequest } from "../model-request.js";
import { toOpenAiBody } from "./to-openai-body.js";

function assistantTurn(content: readonly ContentBlock[]): ModelRequest {
  return {
    model: "gpt-4.1",
    maxTokens: 100,
    messages: [
      { role: "user", content: "Hi" },
      { role: "assistant", content },
      { role: "user", content: "Go on" },
    ] satisfies ModelMessage[],
  };
}

describe("OpenAI-compatible history", () => {
  it('keeps a newline between an assistant message\'s text blocks ("A" + "B" is "A\\nB", not "AB")', () => {
    const body = toOpenAiBody(
      assistantTurn([
        { type: "text", text: "A" },
        { type: "text", text: "B" },
      ]),
      false,
      "max_tokens",
    );
    expect(body.messages[1]).toEqual({ role: "assistant", content: "A\nB" });
  });

  it("keeps the separator around skipped blocks and with tool calls", () => {
    const body = toOpenAiBody(
      assistantTurn([
        { type: "text", text: "First." },
        { type: "thinking", thinking: "hmm", signature: "" },
        { type: "text", text: "Second." },
        { type: "tool_use", id: "call_1", name: "t", input: {} },
      ]),
      false,
      "max_tokens",
    );
    expect(body.messages[1]).toEqual({
      role: "assistant",
      content: "First.\nSecond.",
      tool_calls: [{ id: "call_1", type: "function", function: { name: "t", arguments: "{}" } }],
    });
  });

  it("skips opaque blocks (Anthropic server blocks) in assistant and user messages", () => {
    const request = assistantTurn([
      { type: "text", text: "Searching." },
      {
        type: "opaque",
        provider: "anthropic",
        block: {
          type: "server_tool_use",
          id: "srvtoolu_1",
          name: "web_search",
          input: { query: "x" },
        },
      },
      {
        type: "opaque",
        provider: "anthropic",
        block: { type: "web_search_tool_result", tool_use_id: "srvtoolu_1", content: [] },
      },
      { type: "text", text: "Found." },
    ]);
    const body = toOpenAiBody(
      {
        ...request,
        messages: [
          ...request.messages.slice(0, 2),
          {
            role: "user",
            content: [
              { type: "opaque", provider: "anthropic", block: { type: "document", source: {} } },
              { type: "text", text: "Go on" },
            ],
          },
        ],
      },
      false,
      "max_tokens",
    );
    expect(body.messages.slice(1)).toEqual([
      { role: "assistant", content: "Searching.\nFound." },
      { role: "user", content: "Go on" },
    ]);
  });
});
