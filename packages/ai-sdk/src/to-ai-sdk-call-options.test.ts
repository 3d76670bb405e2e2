import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { ModelRequest } from "@lattice/providers";
import { describe, expect, it } from "vitest";
import { fromAiSdk } from "./index.js";
import { collect, finish, request, responseOf, streamingModel } from "./mock-model.test-helpers.js";

describe("fromAiSdk: request mapping", () => {
  it("sends system, messages, tools, toolChoice, maxTokens, temperature, stop sequences, signal and options", async () => {
    const model = streamingModel([{ type: "text-delta", id: "t", delta: "ok" }, finish("stop")]);
    const controller = new AbortController();
    const provider = fromAiSdk(model, {
      providerOptions: { google: { thinkingConfig: { thinkingBudget: 1024 } } },
      headers: { "x-trace": "1" },
    });
    await collect(
      provider.stream({
        model: "ignored",
        system: "Be brief.",
        maxTokens: 100,
        temperature: 0.2,
        stopSequences: ["END"],
        toolChoice: { type: "any" },
        tools: [
          {
            name: "lookup",
            description: "Looks things up.",
            inputSchema: {
              $schema: "https://json-schema.org/draft/2020-12/schema",
              type: "object",
              properties: { q: { type: "string" } },
              required: ["q"],
            },
            strict: true,
          },
        ] as unknown as ModelRequest["tools"],
        signal: controller.signal,
        messages: [
          {
            role: "user",
            content: [
              { type: "text", text: "What is this?" },
              {
                type: "image",
                source: { type: "base64", media_type: "image/png", data: "iVBORw0K" },
              },
              { type: "image", source: { type: "url", url: "https://example.com/cat.jpg" } },
            ],
          },
          {
            role: "assistant",
            content: [
              { type: "thinking", thinking: "Hmm", signature: "" },
              { type: "redacted_thinking", data: "xyz" },
              { type: "text", text: "Checking." },
              { type: "tool_use", id: "c1", name: "lookup", input: { q: "cat" } },
              { type: "tool_use", id: "c2", name: "lookup", input: {}, inputError: "bad" },
            ],
          },
          {
            role: "user",
            content: [
              {
                type: "tool_result",
                tool_use_id: "c1",
                content: [
                  { type: "text", text: "a" },
                  { type: "text", text: "b" },
                ],
              },
              { type: "tool_result", tool_use_id: "c2", content: "bad input", is_error: true },
              { type: "text", text: "And?" },
            ],
          },
        ],
      }),
    );
    const call = model.doStreamCalls[0] as LanguageModelV3CallOptions;
    expect(call.maxOutputTokens).toBe(100);
    expect(call.temperature).toBe(0.2);
    expect(call.stopSequences).toEqual(["END"]);
    expect(call.toolChoice).toEqual({ type: "required" });
    expect(call.providerOptions).toEqual({ google: { thinkingConfig: { thinkingBudget: 1024 } } });
    expect(call.headers).toEqual({ "x-trace": "1" });
    expect(call.abortSignal).toBeInstanceOf(AbortSignal);
    expect(call.tools).toEqual([
      {
        type: "function",
        name: "lookup",
        description: "Looks things up.",
        inputSchema: { type: "object", properties: { q: { type: "string" } }, required: ["q"] },
        strict: true,
      },
    ]);
    expect(call.prompt).toEqual([
      { role: "system", content: "Be brief." },
      {
        role: "user",
        content: [
          { type: "text", text: "What is this?" },
          { type: "file", mediaType: "image/png", data: "iVBORw0K" },
          { type: "file", mediaType: "image/*", data: new URL("https://example.com/cat.jpg") },
        ],
      },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "Hmm" },
          { type: "text", text: "Checking." },
          { type: "tool-call", toolCallId: "c1", toolName: "lookup", input: { q: "cat" } },
          { type: "tool-call", toolCallId: "c2", toolName: "lookup", input: {} },
        ],
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "lookup",
            output: { type: "text", value: "a\nb" },
          },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "lookup",
            output: { type: "error-text", value: "bad input" },
          },
        ],
      },
      { role: "user", content: [{ type: "text", text: "And?" }] },
    ]);
  });

  it("sends tool results with images as content parts (image-data, image-url), led by Error: when is_error", async () => {
    const model = streamingModel([{ type: "text-delta", id: "t", delta: "ok" }, finish("stop")]);
    await collect(
      fromAiSdk(model).stream(
        request({
          messages: [
            { role: "user", content: "Shot?" },
            {
              role: "assistant",
              content: [{ type: "tool_use", id: "s", name: "screenshot", input: {} }],
            },
            {
              role: "user",
              content: [
                {
                  type: "tool_result",
                  tool_use_id: "s",
                  is_error: true,
                  content: [
                    { type: "text", text: "partial" },
                    {
                      type: "image",
                      source: { type: "base64", media_type: "image/png", data: "AAAA" },
                    },
                    { type: "image", source: { type: "url", url: "https://example.com/b.png" } },
                  ],
                },
              ],
            },
          ],
        }),
      ),
    );
    expect(model.doStreamCalls[0]!.prompt[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "s",
          toolName: "screenshot",
          output: {
            type: "content",
            value: [
              { type: "text", text: "Error:" },
              { type: "text", text: "partial" },
              { type: "image-data", data: "AAAA", mediaType: "image/png" },
              { type: "image-url", url: "https://example.com/b.png" },
            ],
          },
        },
      ],
    });
  });

  it("sends reasoning back with its provider metadata as providerOptions (signature round trip)", async () => {
    const model = streamingModel(
      [
        { type: "reasoning-start", id: "r" },
        { type: "reasoning-delta", id: "r", delta: "plan" },
        {
          type: "reasoning-delta",
          id: "r",
          delta: "",
          providerMetadata: { anthropic: { signature: "SIG" } },
        },
        { type: "reasoning-end", id: "r" },
        { type: "tool-call", toolCallId: "t1", toolName: "lookup", input: '{"q":"a"}' },
        finish("tool-calls"),
      ],
      [{ type: "text-delta", id: "t", delta: "done" }, finish("stop")],
    );
    const provider = fromAiSdk(model);
    const first = responseOf(await collect(provider.stream(request())));
    // Through JSON, as a session store keeps it.
    const stored = JSON.parse(JSON.stringify(first.message));
    await collect(
      provider.stream(
        request({
          messages: [
            { role: "user", content: "Hi" },
            stored,
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "A" }] },
          ],
        }),
      ),
    );
    expect(model.doStreamCalls[1]!.prompt[1]).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "plan", providerOptions: { anthropic: { signature: "SIG" } } },
        { type: "tool-call", toolCallId: "t1", toolName: "lookup", input: { q: "a" } },
      ],
    });
  });
});
