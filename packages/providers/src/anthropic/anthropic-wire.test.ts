import type Anthropic from "@anthropic-ai/sdk";
import type { AnyToolDefinition } from "@lattice/tools";
import { describe, expect, expectTypeOf, it } from "vitest";
import type {
  AnthropicClearThinkingEdit,
  AnthropicClearToolUsesEdit,
  AnthropicContextManagement,
  ModelRequest,
} from "../model-request.js";
import type {
  AnthropicCacheControl,
  AnthropicContentParam,
  AnthropicCountTokensBody,
  AnthropicMessageParam,
  AnthropicMessagesBody,
  AnthropicThinkingConfigParam,
  AnthropicToolChoiceParam,
  AnthropicToolParam,
} from "./anthropic-wire.js";
import { toAnthropicBody, toAnthropicCountTokensBody } from "./to-anthropic-body.js";

type BetaMessages = Anthropic.Beta.Messages.MessageCreateParams;

/**
 * `T` with its readonly arrays made mutable. The SDK's request types use mutable arrays; the
 * adapter's readonly ones say only that it never changes them, which has no wire form.
 */
type Mutable<T> = T extends readonly (infer Item)[]
  ? Mutable<Item>[]
  : T extends object
    ? { -readonly [Key in keyof T]: Mutable<T[Key]> }
    : T;

const MODELLED: ReadonlySet<string> = new Set([
  "text",
  "image",
  "thinking",
  "redacted_thinking",
  "tool_use",
  "tool_result",
]);

/**
 * The body typed with modelled blocks only, after checking at run time that it has no opaque
 * block (whose shape is the API's own, checked in anthropic-server-blocks.test.ts).
 */
function modelled(body: AnthropicMessagesBody): AnthropicMessagesBody<AnthropicContentParam> {
  for (const message of body.messages) {
    if (typeof message.content === "string") continue;
    for (const block of message.content) expect(MODELLED).toContain(block.type);
  }
  return body as AnthropicMessagesBody<AnthropicContentParam>;
}

const TOOL = {
  name: "get_weather",
  description: "Weather for a place",
  inputSchema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: { location: { type: "string" } },
    required: ["location"],
  },
  kind: "tool",
  handler: () => ({ content: "" }),
} as unknown as AnyToolDefinition;

const FULL_REQUEST: ModelRequest = {
  model: "claude-sonnet-4-6",
  system: "Be brief.",
  maxTokens: 512,
  temperature: 0.2,
  stopSequences: ["END"],
  toolChoice: { type: "tool", name: "get_weather" },
  tools: [TOOL],
  messages: [
    {
      role: "user",
      content: [
        { type: "text", text: "Weather?" },
        { type: "image", source: { type: "url", url: "https://example.com/a.png" } },
      ],
    },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "Need the tool.", signature: "sig-abc" },
        { type: "redacted_thinking", data: "opaque" },
        { type: "text", text: "Checking." },
        {
          type: "tool_use",
          id: "toolu_1",
          name: "get_weather",
          input: {},
          inputError: 'The input for tool "get_weather" is not valid JSON',
        },
      ],
    },
    {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "toolu_1",
          content: [{ type: "text", text: "bad input" }],
          is_error: true,
        },
      ],
    },
  ],
};

describe("Anthropic wire shapes", () => {
  it("type-check against the official @anthropic-ai/sdk request types", () => {
    const streaming = modelled(toAnthropicBody(FULL_REQUEST, true));
    streaming satisfies Anthropic.MessageCreateParams;
    const plain = modelled(toAnthropicBody(FULL_REQUEST, false));
    plain satisfies Anthropic.MessageCreateParams;
    // With prompt caching (system as blocks, cache_control) and extended thinking.
    const cached = modelled(
      toAnthropicBody(
        { ...FULL_REQUEST, toolChoice: { type: "auto" }, thinking: { budgetTokens: 1024 } },
        true,
        true,
      ),
    );
    cached satisfies Anthropic.MessageCreateParams;
    expect(Array.isArray(cached.system)).toBe(true);
    expect(cached.thinking).toEqual({ type: "enabled", budget_tokens: 1024 });
    expectTypeOf<
      AnthropicMessagesBody<AnthropicContentParam>
    >().toExtend<Anthropic.MessageCreateParams>();
    expectTypeOf<AnthropicMessageParam<AnthropicContentParam>>().toExtend<Anthropic.MessageParam>();
    expectTypeOf<AnthropicContentParam>().toExtend<Anthropic.ContentBlockParam>();
    expectTypeOf<AnthropicToolParam>().toExtend<Anthropic.Tool>();
    expectTypeOf<AnthropicToolChoiceParam>().toExtend<Anthropic.ToolChoice>();
    expectTypeOf<AnthropicCacheControl>().toExtend<Anthropic.CacheControlEphemeral>();
    expectTypeOf<AnthropicThinkingConfigParam>().toExtend<Anthropic.ThinkingConfigParam>();
    expect(plain.stream).toBeUndefined();
    expect(streaming.stream).toBe(true);
  });

  it("maps every request field and strips inputError and $schema", () => {
    const body = toAnthropicBody(FULL_REQUEST, true);
    expect(body).toMatchObject({
      model: "claude-sonnet-4-6",
      system: "Be brief.",
      max_tokens: 512,
      temperature: 0.2,
      stop_sequences: ["END"],
      tool_choice: { type: "tool", name: "get_weather" },
      tools: [
        {
          name: "get_weather",
          description: "Weather for a place",
          input_schema: { type: "object", required: ["location"] },
        },
      ],
    });
    expect(body.tools?.[0]?.input_schema).not.toHaveProperty("$schema");
    const assistant = body.messages[1]!.content as AnthropicContentParam[];
    expect(assistant[3]).toEqual({
      type: "tool_use",
      id: "toolu_1",
      name: "get_weather",
      input: {},
    });
    expect(assistant[0]).toEqual({
      type: "thinking",
      thinking: "Need the tool.",
      signature: "sig-abc",
    });
    expect(body.messages[0]).toBe(FULL_REQUEST.messages[0]);
  });

  it("converts each tool definition once", () => {
    const first = toAnthropicBody(FULL_REQUEST, true).tools![0];
    const second = toAnthropicBody(FULL_REQUEST, false).tools![0];
    expect(second).toBe(first);
  });
});

describe("Anthropic context wire shapes", () => {
  const CONTEXT: AnthropicContextManagement = {
    edits: [
      { type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 2 } },
      {
        type: "clear_tool_uses_20250919",
        trigger: { type: "input_tokens", value: 30_000 },
        keep: { type: "tool_uses", value: 3 },
        clear_at_least: { type: "input_tokens", value: 5_000 },
        clear_tool_inputs: ["read_file"],
        exclude_tools: ["web_search"],
      },
    ],
  };

  it("C7: AnthropicContextManagement is assignable to the SDK's BetaContextManagementConfig, and mirrors its edits", () => {
    expectTypeOf<
      Mutable<AnthropicContextManagement>
    >().toExtend<Anthropic.Beta.Messages.BetaContextManagementConfig>();
    // Every value the SDK allows for the two edits is accepted (the mirror is exact both ways).
    expectTypeOf<Anthropic.Beta.Messages.BetaClearToolUses20250919Edit>().toExtend<AnthropicClearToolUsesEdit>();
    expectTypeOf<Anthropic.Beta.Messages.BetaClearThinking20251015Edit>().toExtend<AnthropicClearThinkingEdit>();
    expectTypeOf<
      Mutable<AnthropicClearToolUsesEdit>
    >().toEqualTypeOf<Anthropic.Beta.Messages.BetaClearToolUses20250919Edit>();
    expectTypeOf<
      Mutable<AnthropicClearThinkingEdit>
    >().toEqualTypeOf<Anthropic.Beta.Messages.BetaClearThinking20251015Edit>();
    const sdk: Anthropic.Beta.Messages.BetaContextManagementConfig =
      CONTEXT as Mutable<AnthropicContextManagement>;
    expect(sdk.edits).toHaveLength(2);
  });

  it("C7: context_management is sent exactly as given, the same object", () => {
    const body = toAnthropicBody({ ...FULL_REQUEST, contextManagement: CONTEXT }, true);
    expect(body.context_management).toBe(CONTEXT);
    expectTypeOf<Mutable<NonNullable<AnthropicMessagesBody["context_management"]>>>().toExtend<
      NonNullable<BetaMessages["context_management"]>
    >();
    expect(toAnthropicBody(FULL_REQUEST, true)).not.toHaveProperty("context_management");
  });

  it("C1: the count_tokens body is the messages body without max_tokens, temperature, stop_sequences and stream", () => {
    const request: ModelRequest = { ...FULL_REQUEST, contextManagement: CONTEXT };
    const count = toAnthropicCountTokensBody(request, true);
    const { max_tokens, temperature, stop_sequences, stream, ...rest } = toAnthropicBody(
      request,
      true,
      true,
    );
    expect([max_tokens, temperature, stop_sequences, stream]).toEqual([512, 0.2, ["END"], true]);
    expect(count).toEqual(rest);
    const { context_management: _context, ...plain } = modelled(
      count as AnthropicMessagesBody,
    ) as AnthropicCountTokensBody<AnthropicContentParam>;
    plain satisfies Anthropic.MessageCountTokensParams;
    expectTypeOf<
      Omit<AnthropicCountTokensBody<AnthropicContentParam>, "context_management">
    >().toExtend<Anthropic.MessageCountTokensParams>();
    expectTypeOf<Mutable<NonNullable<AnthropicCountTokensBody["context_management"]>>>().toExtend<
      NonNullable<Anthropic.Beta.Messages.MessageCountTokensParams["context_management"]>
    >();
  });
});
