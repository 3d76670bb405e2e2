import { InvalidOptionError } from "@lattice/tools";
import type OpenAI from "openai";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import type { ModelOutputFormat, ModelRequest } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { openaiCompatible } from "./openai-compatible.js";
import type { OpenAiJsonSchemaFormat } from "./openai-wire.js";
import { toOpenAiBody, toOpenAiResponseFormat } from "./to-openai-body.js";

/** An order: a nested object, an array of objects, optional fields and numeric bounds. */
const ORDER: ModelOutputFormat = {
  type: "json_schema",
  name: "final_answer",
  description: "The order, as extracted.",
  schema: {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    type: "object",
    properties: {
      customer: {
        type: "object",
        properties: { name: { type: "string" }, email: { type: "string" } },
        required: ["name"],
      },
      items: {
        type: "array",
        items: {
          type: "object",
          properties: {
            sku: { type: "string" },
            quantity: { type: "integer", minimum: 1 },
          },
          required: ["sku", "quantity"],
        },
      },
      note: { type: "string" },
    },
    required: ["customer", "items"],
  },
};

/** ORDER's schema made strict: closed objects, every property required, optional ones nullable. */
const STRICT_ORDER = {
  type: "object",
  properties: {
    customer: {
      type: "object",
      properties: { name: { type: "string" }, email: { type: ["string", "null"] } },
      required: ["name", "email"],
      additionalProperties: false,
    },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: {
          sku: { type: "string" },
          quantity: { type: "integer", minimum: 1 },
        },
        required: ["sku", "quantity"],
        additionalProperties: false,
      },
    },
    note: { type: ["string", "null"] },
  },
  required: ["customer", "items", "note"],
  additionalProperties: false,
};

const WIRE_FORMAT = {
  type: "json_schema",
  json_schema: {
    name: "final_answer",
    description: "The order, as extracted.",
    strict: true,
    schema: STRICT_ORDER,
  },
};

const REQUEST: ModelRequest = {
  model: "gpt-4.1",
  maxTokens: 256,
  messages: [{ role: "user", content: "Ada ordered two A1." }],
  output: ORDER,
};

async function collect(provider: ReturnType<typeof openaiCompatible>, request: ModelRequest) {
  const events: ModelStreamEvent[] = [];
  let response: ModelResponse | undefined;
  for await (const event of provider.stream(request)) {
    events.push(event);
    if (event.type === "response") response = event.response;
  }
  return { events, response: response! };
}

describe("openaiCompatible(): native structured output (L16)", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("L16: sends request.output as a strict json_schema response_format, exactly, streaming and not", () => {
    expect(toOpenAiBody(REQUEST, true, "max_completion_tokens")).toEqual({
      model: "gpt-4.1",
      messages: [{ role: "user", content: "Ada ordered two A1." }],
      max_completion_tokens: 256,
      response_format: WIRE_FORMAT,
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(toOpenAiBody(REQUEST, false, "max_tokens")).toEqual({
      model: "gpt-4.1",
      messages: [{ role: "user", content: "Ada ordered two A1." }],
      max_tokens: 256,
      response_format: WIRE_FORMAT,
    });
    const body = toOpenAiBody(REQUEST, false, "max_tokens");
    expect(Object.keys(body.response_format!.json_schema)).toEqual([
      "name",
      "description",
      "strict",
      "schema",
    ]);
    expect(toOpenAiBody({ ...REQUEST, output: undefined }, false, "max_tokens")).not.toHaveProperty(
      "response_format",
    );
  });

  it("L16: the body with response_format type-checks against the official openai request types", () => {
    toOpenAiBody(REQUEST, true, "max_tokens") satisfies OpenAI.Chat.ChatCompletionCreateParams;
    toOpenAiBody(REQUEST, false, "max_tokens") satisfies OpenAI.Chat.ChatCompletionCreateParams;
    expectTypeOf<OpenAiJsonSchemaFormat>().toExtend<OpenAI.ResponseFormatJSONSchema>();
  });

  it("L16: makes the schema strict as for strict tools (nested object, array of objects, optional fields), without $schema and without changing the input", () => {
    const before = JSON.stringify(ORDER);
    const wire = toOpenAiResponseFormat(ORDER);
    expect(wire.json_schema.schema).toEqual(STRICT_ORDER);
    expect(wire.json_schema.schema).not.toHaveProperty("$schema");
    expect(JSON.stringify(ORDER)).toBe(before);
    const bare: ModelOutputFormat = {
      type: "json_schema",
      name: "answer",
      schema: { type: "object" },
    };
    expect(toOpenAiResponseFormat(bare)).toEqual({
      type: "json_schema",
      json_schema: {
        name: "answer",
        strict: true,
        schema: { type: "object", additionalProperties: false },
      },
    });
  });

  it("L16: converts each output format once (the same object gives the same converted instance)", () => {
    const first = toOpenAiBody(REQUEST, true, "max_tokens").response_format;
    const second = toOpenAiBody(
      { ...REQUEST, system: "Be exact." },
      false,
      "max_tokens",
    ).response_format;
    expect(second).toBe(first);
    expect(second!.json_schema.schema).toBe(first!.json_schema.schema);
    const copy: ModelOutputFormat = { ...ORDER };
    expect(toOpenAiResponseFormat(copy)).not.toBe(first);
    expect(toOpenAiResponseFormat(copy)).toEqual(first);
  });

  it("L16: the scripted server's strict validator accepts the body, and the answer comes back as a text block without the nulls strict mode added, streaming and not", async () => {
    const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
    const raw =
      '{"customer":{"name":"Ada","email":null},"items":[{"sku":"A1","quantity":2}],"note":null}';
    for (const stream of [true, false]) {
      server.enqueue({ content: [{ type: "text", text: raw }], chunkSize: 7 });
      const { events, response } = await collect(provider, { ...REQUEST, stream });
      expect(server.requests.at(-1)!.body).toMatchObject({ response_format: WIRE_FORMAT });
      expect(response.stopReason).toBe("end_turn");
      expect(response.message.content).toEqual([
        { type: "text", text: '{"customer":{"name":"Ada"},"items":[{"sku":"A1","quantity":2}]}' },
      ]);
      if (stream) {
        // Deltas are the model's raw text, as tool input deltas are.
        const deltas = events.flatMap((event) => (event.type === "text_delta" ? [event.text] : []));
        expect(deltas.join("")).toBe(raw);
      }
    }
  });

  it("L16: an answer without strict-mode nulls, or that is not JSON, is kept exactly as sent", async () => {
    const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
    for (const text of ['{ "customer": { "name": "Ada" }, "items": [] }', "not json {"]) {
      for (const stream of [true, false]) {
        server.enqueue({ content: [{ type: "text", text }] });
        const { response } = await collect(provider, { ...REQUEST, stream });
        expect(response.message.content).toEqual([{ type: "text", text }]);
      }
    }
  });

  it("L16: a refusal (message.refusal, delta.refusal) ends with stop reason refusal and its text as a text block, streaming and not", async () => {
    const provider = openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL });
    const refusal = "I'm sorry, I can't help with that request.";
    for (const stream of [true, false]) {
      server.enqueue({ content: [{ type: "refusal", text: refusal }], chunkSize: 6 });
      const { events, response } = await collect(provider, { ...REQUEST, stream });
      expect(response.stopReason).toBe("refusal");
      expect(response.rawStopReason).toBe("stop");
      expect(response.message.content).toEqual([{ type: "text", text: refusal }]);
      expect(events.find((event) => event.type === "stop")).toEqual({
        type: "stop",
        stopReason: "refusal",
      });
    }
  });

  it("L16: a refusal arriving with an empty content string is still read (content and refusal are separate fields)", async () => {
    const chunks = [
      { choices: [{ index: 0, delta: { role: "assistant", content: "", refusal: null } }] },
      { choices: [{ index: 0, delta: { content: "", refusal: "No." } }] },
      { choices: [{ index: 0, delta: {}, finish_reason: "stop" }] },
    ];
    const sse = `${chunks.map((chunk) => `data: ${JSON.stringify({ id: "c1", model: "m", ...chunk })}\n\n`).join("")}data: [DONE]\n\n`;
    const completion = {
      id: "c2",
      model: "m",
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: "", refusal: "No." },
          finish_reason: "stop",
        },
      ],
    };
    const fetchDouble: typeof fetch = async (_url, init) => {
      const streaming = JSON.parse(String(init?.body)).stream === true;
      return new Response(streaming ? sse : JSON.stringify(completion), {
        status: 200,
        headers: { "content-type": streaming ? "text/event-stream" : "application/json" },
      });
    };
    const provider = openaiCompatible({
      apiKey: "k",
      baseURL: "http://local.test/v1",
      fetch: fetchDouble,
    });
    for (const stream of [true, false]) {
      const { response } = await collect(provider, { ...REQUEST, stream });
      expect(response.stopReason).toBe("refusal");
      expect(response.message.content).toEqual([{ type: "text", text: "No." }]);
    }
  });

  it("L16: nativeOutput defaults to true, and to false for https://api.deepseek.com (no json_schema response_format)", () => {
    expect(openaiCompatible({ apiKey: "k" }).nativeOutput).toBe(true);
    expect(openaiCompatible({ baseURL: "http://localhost:11434/v1" }).nativeOutput).toBe(true);
    expect(openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL }).nativeOutput).toBe(
      true,
    );
    expect(
      openaiCompatible({ apiKey: "k", baseURL: "https://api.deepseek.com" }).nativeOutput,
    ).toBe(false);
    expect(
      openaiCompatible({ apiKey: "k", baseURL: "https://API.DeepSeek.com/v1" }).nativeOutput,
    ).toBe(false);
    expect(
      openaiCompatible({ apiKey: "k", baseURL: "https://api.deepseek.com", nativeOutput: true })
        .nativeOutput,
    ).toBe(true);
    expect(openaiCompatible({ apiKey: "k", nativeOutput: false }).nativeOutput).toBe(false);
  });

  it("L16: nativeOutput only tells callers: the adapter sends request.output whenever it is given", async () => {
    const provider = openaiCompatible({
      apiKey: "k",
      baseURL: server.openaiBaseURL,
      nativeOutput: false,
    });
    server.enqueue({ content: [{ type: "text", text: "{}" }] });
    await collect(provider, { ...REQUEST, stream: false });
    expect(server.requests[0]!.body).toMatchObject({ response_format: WIRE_FORMAT });
  });

  it("L16: checks nativeOutput strictly (a boolean or nothing)", () => {
    for (const bad of ["yes", 1, null, {}]) {
      expect(() => openaiCompatible({ apiKey: "k", nativeOutput: bad as never })).toThrow(
        InvalidOptionError,
      );
    }
    expect(() => openaiCompatible({ apiKey: "k", nativeOutput: "yes" as never })).toThrow(
      'openaiCompatible(): option "nativeOutput" must be true or false, received "yes". Omit it for the default (true, or false for api.deepseek.com).',
    );
    expect(() => openaiCompatible({ apiKey: "k", nativeOuput: true } as never)).toThrow(
      'openaiCompatible(): unknown option "nativeOuput"',
    );
  });
});
