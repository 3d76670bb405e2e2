import type Anthropic from "@anthropic-ai/sdk";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { ModelMessage } from "../content-blocks.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { fetchChunks } from "../transport/recorded-stream.test-helpers.js";
import { anthropic } from "./anthropic.js";

// A web search turn as the Messages API streams it (shape of Anthropic's web search tool
// documentation): text, a server_tool_use whose input arrives as input_json_delta, a
// web_search_tool_result given whole in content_block_start, and a cited answer.
const SERVER_TOOL_USE = {
  type: "server_tool_use",
  id: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
  name: "web_search",
  input: { query: "claude shannon birth date" },
  caller: { type: "direct" },
} satisfies Anthropic.ServerToolUseBlockParam;
const SEARCH_RESULT = {
  type: "web_search_tool_result",
  tool_use_id: "srvtoolu_01WYG3ziw53XMcoyKL4XcZmE",
  content: [
    {
      type: "web_search_result",
      title: "Claude Shannon - Wikipedia",
      url: "https://en.wikipedia.org/wiki/Claude_Shannon",
      encrypted_content: "EqgfCioIARgBIiQ3YTAwMjY1Mi1mZjM5LTQ1NGUtODgxNC1kNjNjNTk1ZWI3Y…",
      page_age: "April 30, 2025",
    },
  ],
  caller: { type: "direct" },
} satisfies Anthropic.WebSearchToolResultBlockParam;

const lines = [
  [
    "message_start",
    {
      type: "message_start",
      message: {
        id: "msg_01G5ez6ENHVcVDVbNmqD2mEz",
        type: "message",
        role: "assistant",
        model: "claude-sonnet-4-6",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: 2679,
          cache_creation_input_tokens: 0,
          cache_read_input_tokens: 0,
          output_tokens: 3,
        },
      },
    },
  ],
  [
    "content_block_start",
    { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "text_delta", text: "I'll search for when Claude Shannon was born." },
    },
  ],
  ["content_block_stop", { type: "content_block_stop", index: 0 }],
  [
    "content_block_start",
    {
      type: "content_block_start",
      index: 1,
      content_block: {
        type: "server_tool_use",
        id: SERVER_TOOL_USE.id,
        name: "web_search",
        input: {},
        caller: { type: "direct" },
      },
    },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: "" },
    },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: '{"query": "claude shannon' },
    },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 1,
      delta: { type: "input_json_delta", partial_json: ' birth date"}' },
    },
  ],
  ["content_block_stop", { type: "content_block_stop", index: 1 }],
  ["ping", { type: "ping" }],
  ["content_block_start", { type: "content_block_start", index: 2, content_block: SEARCH_RESULT }],
  ["content_block_stop", { type: "content_block_stop", index: 2 }],
  [
    "content_block_start",
    {
      type: "content_block_start",
      index: 3,
      content_block: { type: "text", text: "", citations: [] },
    },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 3,
      delta: {
        type: "citations_delta",
        citation: {
          type: "web_search_result_location",
          cited_text: "Claude Elwood Shannon (April 30, 1916 – February 24, 2001)",
          url: "https://en.wikipedia.org/wiki/Claude_Shannon",
          title: "Claude Shannon - Wikipedia",
          encrypted_index: "Eo8BCioIAhgBIiQyYjQ0OWJmZi1lNm…",
        },
      },
    },
  ],
  [
    "content_block_delta",
    {
      type: "content_block_delta",
      index: 3,
      delta: { type: "text_delta", text: "Claude Shannon was born on April 30, 1916." },
    },
  ],
  ["content_block_stop", { type: "content_block_stop", index: 3 }],
  [
    "message_delta",
    {
      type: "message_delta",
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: 510, server_tool_use: { web_search_requests: 1 } },
    },
  ],
  ["message_stop", { type: "message_stop" }],
] as const;
const STREAM = new TextEncoder().encode(
  lines.map(([event, data]) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join(""),
);
const MESSAGE = {
  id: "msg_01G5ez6ENHVcVDVbNmqD2mEz",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-6",
  content: [
    { type: "text", text: "I'll search for when Claude Shannon was born." },
    SERVER_TOOL_USE,
    SEARCH_RESULT,
    { type: "text", text: "Claude Shannon was born on April 30, 1916.", citations: [] },
  ],
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 2679, output_tokens: 510, server_tool_use: { web_search_requests: 1 } },
};
const EXPECTED_CONTENT = [
  { type: "text", text: "I'll search for when Claude Shannon was born." },
  { type: "opaque", provider: "anthropic", block: SERVER_TOOL_USE },
  { type: "opaque", provider: "anthropic", block: SEARCH_RESULT },
  { type: "text", text: "Claude Shannon was born on April 30, 1916." },
];
const REQUEST = {
  model: "claude-sonnet-4-6",
  maxTokens: 1024,
  messages: [{ role: "user" as const, content: "When was Claude Shannon born?" }],
};

async function collect(
  iterable: AsyncIterable<ModelStreamEvent>,
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const events: ModelStreamEvent[] = [];
  for await (const event of iterable) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("the last event is not a response");
  return { events, response: last.response };
}

/** A fetch that answers the first request with `first` and records every request body. */
function recordingFetch(first: () => Response): { fetch: typeof fetch; bodies: unknown[] } {
  const bodies: unknown[] = [];
  const fetchImpl = (async (_url: string, init: RequestInit) => {
    bodies.push(JSON.parse(String(init.body)));
    if (bodies.length === 1) return first();
    return new Response(JSON.stringify({ ...MESSAGE, content: [{ type: "text", text: "ok" }] }), {
      status: 200,
      headers: { "content-type": "application/json" },
    });
  }) as unknown as typeof fetch;
  return { fetch: fetchImpl, bodies };
}

describe("anthropic(): server-side blocks (server_tool_use, web_search_tool_result, future types)", () => {
  it("keeps unknown blocks verbatim as opaque blocks when streaming, at every byte cut", async () => {
    for (let cut = 0; cut < STREAM.length; cut += 7) {
      const chunks = cut === 0 ? [STREAM] : [STREAM.subarray(0, cut), STREAM.subarray(cut)];
      const provider = anthropic({ apiKey: "k", fetch: fetchChunks(chunks), maxRetries: 0 });
      const { events, response } = await collect(provider.stream(REQUEST));
      expect(response.message.content).toEqual(EXPECTED_CONTENT);
      if (cut === 0) {
        expect(
          events.flatMap((event) =>
            event.type === "block_start" ? [[event.index, event.block]] : [],
          ),
        ).toEqual([
          [0, { type: "text" }],
          [1, { type: "opaque", blockType: "server_tool_use" }],
          [2, { type: "opaque", blockType: "web_search_tool_result" }],
          [3, { type: "text" }],
        ]);
        expect(events.filter((event) => event.type === "block_stop")).toHaveLength(4);
      }
    }
  });

  it("keeps unknown blocks verbatim as opaque blocks in a non-streaming response", async () => {
    const provider = anthropic({
      apiKey: "k",
      maxRetries: 0,
      fetch: (async () =>
        new Response(JSON.stringify(MESSAGE), {
          status: 200,
          headers: { "content-type": "application/json" },
        })) as unknown as typeof fetch,
    });
    const { response } = await collect(provider.stream({ ...REQUEST, stream: false }));
    expect(response.message.content).toEqual(EXPECTED_CONTENT);
  });

  it("sends the server blocks back unchanged, in place, on the next turn", async () => {
    for (const stream of [true, false]) {
      const { fetch, bodies } = recordingFetch(() =>
        stream
          ? new Response(STREAM, { status: 200, headers: { "content-type": "text/event-stream" } })
          : new Response(JSON.stringify(MESSAGE), {
              status: 200,
              headers: { "content-type": "application/json" },
            }),
      );
      const provider = anthropic({ apiKey: "k", fetch, maxRetries: 0 });
      const first = await collect(provider.stream({ ...REQUEST, stream }));
      const messages: ModelMessage[] = [
        ...REQUEST.messages,
        { role: "assistant", content: first.response.message.content },
        { role: "user", content: "And where?" },
      ];
      await collect(provider.stream({ ...REQUEST, stream, messages }));
      const sent = (bodies[1] as { messages: { content: unknown }[] }).messages[1]!.content;
      expect(sent).toEqual([
        { type: "text", text: "I'll search for when Claude Shannon was born." },
        SERVER_TOOL_USE,
        SEARCH_RESULT,
        { type: "text", text: "Claude Shannon was born on April 30, 1916." },
      ]);
    }
  });

  describe("with the scripted model server", () => {
    let server: ScriptedModelServer;
    beforeEach(async () => {
      server = await createScriptedModelServer();
    });
    afterEach(async () => {
      await server.close();
    });

    it("round-trips scripted server blocks through the server's request validation, streaming and not", async () => {
      const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
      for (const stream of [true, false]) {
        server.enqueue(
          {
            content: [
              { type: "anthropic_block", block: SERVER_TOOL_USE },
              { type: "anthropic_block", block: SEARCH_RESULT },
              { type: "text", text: "Born 1916." },
            ],
          },
          { content: [{ type: "text", text: "In Petoskey, Michigan." }] },
        );
        const first = await collect(provider.stream({ ...REQUEST, stream }));
        expect(first.response.message.content).toEqual([
          EXPECTED_CONTENT[1],
          EXPECTED_CONTENT[2],
          { type: "text", text: "Born 1916." },
        ]);
        const second = await collect(
          provider.stream({
            ...REQUEST,
            stream,
            messages: [
              ...REQUEST.messages,
              { role: "assistant", content: first.response.message.content },
              { role: "user", content: "Where?" },
            ],
          }),
        );
        expect(second.response.message.content).toEqual([
          { type: "text", text: "In Petoskey, Michigan." },
        ]);
        const sent = (server.requests.at(-1)!.body as { messages: { content: unknown }[] })
          .messages[1]!.content;
        expect(sent).toEqual([
          SERVER_TOOL_USE,
          SEARCH_RESULT,
          { type: "text", text: "Born 1916." },
        ]);
      }
    });
  });
});
