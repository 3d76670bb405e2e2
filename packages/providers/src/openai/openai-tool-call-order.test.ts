import fc from "fast-check";
import OpenAI from "openai";
import { describe, expect, it } from "vitest";
import type { ContentBlock } from "../content-blocks.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { fetchChunks, splitAt } from "../transport/recorded-stream.test-helpers.js";
import { openaiCompatible } from "./openai-compatible.js";

const REQUEST = {
  model: "gpt-4.1",
  maxTokens: 1024,
  messages: [{ role: "user" as const, content: "Weather in Paris and Rome?" }],
};
const encoder = new TextEncoder();

/** One `tool_calls` delta entry of a Chat Completions chunk. */
interface ToolCallDelta {
  index: number;
  id?: string;
  type?: "function";
  function: { name?: string; arguments: string };
}

/** An SSE stream of chunks: each chunk carries the given tool call deltas, then finish, usage, [DONE]. */
function sse(chunks: readonly (readonly ToolCallDelta[])[], text?: string): Uint8Array {
  const head =
    '{"id":"chatcmpl-order","object":"chat.completion.chunk","created":1749613638,"model":"gpt-4.1-2025-04-14","choices":';
  const lines: string[] = [
    `data: ${head}[{"index":0,"delta":{"role":"assistant","content":${JSON.stringify(text ?? null)}},"finish_reason":null}]}\n\n`,
  ];
  for (const calls of chunks) {
    lines.push(
      `data: ${head}[{"index":0,"delta":{"tool_calls":${JSON.stringify(calls)}},"finish_reason":null}]}\n\n`,
    );
  }
  lines.push(`data: ${head}[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n`);
  lines.push(
    `data: ${head}[],"usage":{"prompt_tokens":40,"completion_tokens":30,"total_tokens":70}}\n\n`,
  );
  lines.push("data: [DONE]\n\n");
  return encoder.encode(lines.join(""));
}

async function run(
  chunks: readonly Uint8Array[],
): Promise<{ events: ModelStreamEvent[]; response: ModelResponse }> {
  const provider = openaiCompatible({
    apiKey: "sk-order",
    fetch: fetchChunks(chunks),
    maxRetries: 0,
  });
  const events: ModelStreamEvent[] = [];
  for await (const event of provider.stream(REQUEST)) events.push(event);
  const last = events.at(-1);
  if (last?.type !== "response") throw new Error("no response event");
  return { events, response: last.response };
}

/** Checks that the events describe the final content: block_start and deltas at its positions. */
function expectEventsMatchContent(events: readonly ModelStreamEvent[], content: ContentBlock[]) {
  const started = new Map<number, string>();
  const inputs = new Map<number, string>();
  for (const event of events) {
    if (event.type === "block_start" && event.block.type === "tool_use") {
      expect(started.has(event.index), `block ${event.index} started twice`).toBe(false);
      started.set(event.index, event.block.id);
    } else if (event.type === "tool_input_delta") {
      expect(started.has(event.index), `delta before block_start ${event.index}`).toBe(true);
      inputs.set(event.index, (inputs.get(event.index) ?? "") + event.partialJson);
    }
  }
  content.forEach((block, position) => {
    if (block.type !== "tool_use") return;
    expect(started.get(position)).toBe(block.id);
    expect(JSON.parse(inputs.get(position) ?? "{}")).toEqual(block.input);
  });
}

// Interleaved deltas of two parallel calls, the later index first.
const INTERLEAVED: ToolCallDelta[][] = [
  [
    {
      index: 1,
      id: "call_rome",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    },
  ],
  [
    {
      index: 0,
      id: "call_paris",
      type: "function",
      function: { name: "get_weather", arguments: "" },
    },
  ],
  [{ index: 1, function: { arguments: '{"city":' } }],
  [{ index: 0, function: { arguments: '{"city":"Par' } }],
  [
    { index: 1, function: { arguments: '"Rome"}' } },
    { index: 0, function: { arguments: 'is"}' } },
  ],
];
const BY_INDEX = [
  { type: "tool_use", id: "call_paris", name: "get_weather", input: { city: "Paris" } },
  { type: "tool_use", id: "call_rome", name: "get_weather", input: { city: "Rome" } },
];

describe("openaiCompatible(): parallel tool calls are assembled by index", () => {
  it("orders tool_use blocks by index when a later index streams first, interleaved", async () => {
    const { events, response } = await run([sse(INTERLEAVED)]);
    expect(response.message.content).toEqual(BY_INDEX);
    expectEventsMatchContent(events, response.message.content);
  });

  it("assembles the same calls, in the same order, as the official openai client on the same bytes", async () => {
    const bytes = sse(INTERLEAVED);
    const client = new OpenAI({
      apiKey: "sk-order",
      baseURL: "http://127.0.0.1:9/v1",
      fetch: fetchChunks([bytes]),
      maxRetries: 0,
    });
    const official = await client.chat.completions
      .stream({ model: "gpt-4.1", messages: [{ role: "user", content: "x" }] })
      .finalChatCompletion();
    const reference = (official.choices[0]?.message.tool_calls ?? []).map((call) =>
      call.type === "function"
        ? {
            type: "tool_use",
            id: call.id,
            name: call.function.name,
            input: JSON.parse(call.function.arguments),
          }
        : undefined,
    );
    const { response } = await run([bytes]);
    expect(response.message.content).toEqual(reference);
  });

  it("keeps text before the calls and orders the calls by index (property: random calls, interleaved deltas, random byte cuts)", async () => {
    const value = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constantFrom("Paris", "Ünïcödé", "東京", "🙂 emoji", 'quote " and \\ slash', ""),
      fc.string(),
    );
    const call = fc.record({
      name: fc.stringMatching(/^[a-z_]{1,12}$/),
      input: fc.dictionary(fc.stringMatching(/^[a-z]{1,6}$/), value, { maxKeys: 4 }),
      cuts: fc.uniqueArray(fc.nat({ max: 200 }), { maxLength: 6 }),
    });
    const scenario = fc.array(call, { minLength: 1, maxLength: 5 }).chain((calls) => {
      // Each call's deltas: the opening one (id, name) and its argument fragments, in order.
      const fragments = calls.map((spec) => {
        const json = JSON.stringify(spec.input);
        const cuts = [...new Set(spec.cuts.map((cut) => cut % (json.length + 1)))].sort(
          (a, b) => a - b,
        );
        const pieces: string[] = [];
        let start = 0;
        for (const cut of cuts) {
          pieces.push(json.slice(start, cut));
          start = cut;
        }
        pieces.push(json.slice(start));
        return pieces;
      });
      const tokens = fragments.flatMap((pieces, callIndex) =>
        Array.from({ length: pieces.length + 1 }, () => callIndex),
      );
      return fc.record({
        calls: fc.constant(calls),
        fragments: fc.constant(fragments),
        order: fc.shuffledSubarray(tokens, { minLength: tokens.length, maxLength: tokens.length }),
        groups: fc.array(fc.boolean(), { minLength: tokens.length, maxLength: tokens.length }),
        text: fc.option(fc.constantFrom("Checking both.", "Un instant…"), { nil: undefined }),
        byteCuts: fc.uniqueArray(fc.nat({ max: 100_000 }), { maxLength: 30 }),
      });
    });
    await fc.assert(
      fc.asyncProperty(scenario, async ({ calls, fragments, order, groups, text, byteCuts }) => {
        const next = calls.map(() => 0);
        const chunks: ToolCallDelta[][] = [];
        order.forEach((callIndex, position) => {
          const step = next[callIndex]!++;
          const delta: ToolCallDelta =
            step === 0
              ? {
                  index: callIndex,
                  id: `call_${callIndex}`,
                  type: "function",
                  function: { name: calls[callIndex]!.name, arguments: "" },
                }
              : { index: callIndex, function: { arguments: fragments[callIndex]![step - 1]! } };
          // Sometimes two deltas share one chunk, as some servers send them.
          const last = chunks.at(-1);
          if (groups[position] === true && last !== undefined) last.push(delta);
          else chunks.push([delta]);
        });
        const bytes = sse(chunks, text);
        const { events, response } = await run(
          splitAt(bytes, [...new Set(byteCuts.map((cut) => 1 + (cut % (bytes.length - 1))))]),
        );
        // Reference: the calls by index, each one's fragments joined in order.
        const reference: unknown[] = text === undefined ? [] : [{ type: "text", text }];
        for (const [callIndex, spec] of calls.entries()) {
          reference.push({
            type: "tool_use",
            id: `call_${callIndex}`,
            name: spec.name,
            input: JSON.parse(fragments[callIndex]!.join("")),
          });
        }
        expect(response.message.content).toEqual(reference);
        expect(response.stopReason).toBe("tool_use");
        expectEventsMatchContent(events, response.message.content);
      }),
      { numRuns: 300 },
    );
  });
});
