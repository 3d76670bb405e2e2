import type Anthropic from "@anthropic-ai/sdk";
import { InvalidOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { toAnthropicOutputSchema } from "../internal.js";
import type { ModelOutputFormat, ModelRequest } from "../model-request.js";
import type { ModelResponse } from "../model-response.js";
import type { ModelStreamEvent } from "../model-stream-event.js";
import { createScriptedModelServer, type ScriptedModelServer } from "../testing/index.js";
import { anthropic } from "./anthropic.js";
import type {
  AnthropicContentParam,
  AnthropicMessagesBody,
  AnthropicOutputConfigParam,
} from "./anthropic-wire.js";
import { toAnthropicBody, toAnthropicOutputConfig } from "./to-anthropic-body.js";

/**
 * An order: a nested object, an array of objects, optional fields, a union, and constraints
 * structured outputs refuse.
 */
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
        properties: {
          name: { type: "string", minLength: 1, maxLength: 80 },
          email: { type: "string", format: "email" },
        },
        required: ["name"],
      },
      items: {
        type: "array",
        minItems: 1,
        maxItems: 20,
        items: {
          type: "object",
          properties: {
            sku: { type: "string", pattern: "^[A-Z][0-9]+$" },
            quantity: { type: "integer", minimum: 1, maximum: 99, description: "How many" },
            price: { type: "number", exclusiveMinimum: 0, multipleOf: 0.01 },
          },
          required: ["sku", "quantity"],
        },
      },
      tags: { type: "array", items: { type: "string" }, minItems: 2 },
      note: { type: "string" },
      channel: {
        oneOf: [
          { type: "object", properties: { kind: { const: "shop" } }, required: ["kind"] },
          { type: "string", enum: ["phone", "mail"] },
        ],
      },
    },
    required: ["customer", "items"],
  },
};

/** ORDER's schema in the structured-outputs subset. */
const SUBSET_ORDER = {
  type: "object",
  properties: {
    customer: {
      type: "object",
      properties: {
        name: { type: "string", description: "(minLength: 1, maxLength: 80)" },
        email: { type: "string", format: "email" },
      },
      required: ["name"],
      additionalProperties: false,
    },
    items: {
      type: "array",
      minItems: 1,
      items: {
        type: "object",
        properties: {
          sku: { type: "string", pattern: "^[A-Z][0-9]+$" },
          quantity: { type: "integer", description: "How many (minimum: 1, maximum: 99)" },
          price: { type: "number", description: "(exclusiveMinimum: 0, multipleOf: 0.01)" },
        },
        required: ["sku", "quantity"],
        additionalProperties: false,
      },
      description: "(maxItems: 20)",
    },
    tags: { type: "array", items: { type: "string" }, description: "(minItems: 2)" },
    note: { type: "string" },
    channel: {
      anyOf: [
        {
          type: "object",
          properties: { kind: { const: "shop" } },
          required: ["kind"],
          additionalProperties: false,
        },
        { type: "string", enum: ["phone", "mail"] },
      ],
    },
  },
  required: ["customer", "items"],
  description: "The order, as extracted.",
  additionalProperties: false,
};

const REQUEST: ModelRequest = {
  model: "claude-sonnet-4-6",
  maxTokens: 256,
  messages: [{ role: "user", content: "Ada ordered two A1." }],
  output: ORDER,
};

async function collect(provider: ReturnType<typeof anthropic>, request: ModelRequest) {
  const events: ModelStreamEvent[] = [];
  let response: ModelResponse | undefined;
  for await (const event of provider.stream(request)) {
    events.push(event);
    if (event.type === "response") response = event.response;
  }
  return { events, response: response! };
}

describe("anthropic(): native structured output (L16)", () => {
  let server: ScriptedModelServer;
  beforeEach(async () => {
    server = await createScriptedModelServer();
  });
  afterEach(async () => {
    await server.close();
  });

  it("L16: sends request.output as output_config.format, exactly, streaming and not", () => {
    const expected = {
      model: "claude-sonnet-4-6",
      max_tokens: 256,
      messages: [{ role: "user", content: "Ada ordered two A1." }],
      output_config: { format: { type: "json_schema", schema: SUBSET_ORDER } },
    };
    expect(toAnthropicBody(REQUEST, true)).toEqual({ ...expected, stream: true });
    expect(toAnthropicBody(REQUEST, false)).toEqual(expected);
    expect(toAnthropicBody({ ...REQUEST, output: undefined }, false)).not.toHaveProperty(
      "output_config",
    );
  });

  it("L16: the body with output_config type-checks against the official @anthropic-ai/sdk request types", () => {
    const body = toAnthropicBody(REQUEST, true) as AnthropicMessagesBody<AnthropicContentParam>;
    body satisfies Anthropic.MessageCreateParams;
    expectTypeOf<AnthropicOutputConfigParam>().toExtend<Anthropic.OutputConfig>();
  });

  it("L16: toAnthropicOutputSchema adapts to the structured-outputs subset: closed objects at every depth, refused constraints moved into description, oneOf as anyOf, optional fields kept optional", () => {
    const before = JSON.stringify(ORDER.schema);
    const { description: _root, ...expected } = SUBSET_ORDER;
    expect(toAnthropicOutputSchema(ORDER.schema)).toEqual(expected);
    expect(JSON.stringify(ORDER.schema)).toBe(before);
  });

  it("L16: toAnthropicOutputSchema walks $defs, tuple items and allOf, and leaves property names and non-schema values alone", () => {
    const schema = {
      type: "object",
      properties: {
        minimum: { type: "number", maximum: 5 },
        pair: { type: "array", items: [{ type: "string", maxLength: 3 }, true] },
        record: { type: "object", additionalProperties: { type: "number" } },
        ref: { $ref: "#/$defs/Point" },
        both: { allOf: [{ type: "object", properties: { x: { type: "integer" } } }] },
      },
      required: ["minimum"],
      $defs: {
        Point: {
          type: "object",
          properties: { x: { type: "number", minimum: 0 } },
          required: ["x"],
        },
      },
      default: { minimum: 3 },
    };
    expect(toAnthropicOutputSchema(schema)).toEqual({
      type: "object",
      properties: {
        minimum: { type: "number", description: "(maximum: 5)" },
        pair: { type: "array", items: [{ type: "string", description: "(maxLength: 3)" }, true] },
        record: { type: "object", additionalProperties: false },
        ref: { $ref: "#/$defs/Point" },
        both: {
          allOf: [
            { type: "object", properties: { x: { type: "integer" } }, additionalProperties: false },
          ],
        },
      },
      required: ["minimum"],
      $defs: {
        Point: {
          type: "object",
          properties: { x: { type: "number", description: "(minimum: 0)" } },
          required: ["x"],
          additionalProperties: false,
        },
      },
      default: { minimum: 3 },
      additionalProperties: false,
    });
    expect(toAnthropicOutputSchema({ type: "array", minItems: 0 })).toEqual({
      type: "array",
      minItems: 0,
    });
  });

  it("L16: sets output.description as the root description only when the schema has none; the name is not sent", () => {
    const own: ModelOutputFormat = {
      type: "json_schema",
      name: "answer",
      description: "Ignored: the schema has its own.",
      schema: { type: "object", description: "A point.", properties: { x: { type: "number" } } },
    };
    expect(toAnthropicOutputConfig(own)).toEqual({
      format: {
        type: "json_schema",
        schema: {
          type: "object",
          description: "A point.",
          properties: { x: { type: "number" } },
          additionalProperties: false,
        },
      },
    });
    expect(JSON.stringify(toAnthropicOutputConfig(own))).not.toContain("answer");
    const bare: ModelOutputFormat = {
      type: "json_schema",
      name: "answer",
      schema: { type: "object" },
    };
    expect(toAnthropicOutputConfig(bare).format.schema).toEqual({
      type: "object",
      additionalProperties: false,
    });
  });

  it("L16: converts each output format once (the same object gives the same converted instance)", () => {
    const first = toAnthropicBody(REQUEST, true).output_config;
    const second = toAnthropicBody({ ...REQUEST, system: "Be exact." }, false).output_config;
    expect(second).toBe(first);
    expect(second!.format.schema).toBe(first!.format.schema);
    const copy: ModelOutputFormat = { ...ORDER };
    expect(toAnthropicOutputConfig(copy)).not.toBe(first);
    expect(toAnthropicOutputConfig(copy)).toEqual(first);
  });

  it("L16: the scripted server's strict validator accepts the body, and the answer comes back as an ordinary text block, streaming and not", async () => {
    const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
    const answer = '{"customer":{"name":"Ada"},"items":[{"sku":"A1","quantity":2}]}';
    for (const stream of [true, false]) {
      server.enqueue({ content: [{ type: "text", text: answer }], chunkSize: 9 });
      const { response } = await collect(provider, { ...REQUEST, stream });
      expect(server.requests.at(-1)!.body).toMatchObject({
        output_config: { format: { type: "json_schema", schema: SUBSET_ORDER } },
      });
      expect(server.requests.at(-1)!.headers).not.toHaveProperty("anthropic-beta");
      expect(response.stopReason).toBe("end_turn");
      expect(response.message.content).toEqual([{ type: "text", text: answer }]);
    }
  });

  it("L16: a refusal (stop_reason refusal) ends with stop reason refusal and its text as a text block, streaming and not", async () => {
    const provider = anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL });
    const refusal = "I can't help with that.";
    for (const stream of [true, false]) {
      server.enqueue({ content: [{ type: "refusal", text: refusal }], chunkSize: 5 });
      const { events, response } = await collect(provider, { ...REQUEST, stream });
      expect(response.stopReason).toBe("refusal");
      expect(response.rawStopReason).toBe("refusal");
      expect(response.message.content).toEqual([{ type: "text", text: refusal }]);
      expect(events.find((event) => event.type === "stop")).toEqual({
        type: "stop",
        stopReason: "refusal",
      });
    }
  });

  it("L16: nativeOutput defaults to true, and to false for https://api.deepseek.com/anthropic (which ignores output_config)", () => {
    expect(anthropic({ apiKey: "k" }).nativeOutput).toBe(true);
    expect(anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL }).nativeOutput).toBe(true);
    expect(
      anthropic({ apiKey: "k", baseURL: "https://api.deepseek.com/anthropic" }).nativeOutput,
    ).toBe(false);
    expect(anthropic({ apiKey: "k", baseURL: "https://api.deepseek.com" }).nativeOutput).toBe(
      false,
    );
    expect(
      anthropic({ apiKey: "k", baseURL: "https://api.deepseek.com/anthropic", nativeOutput: true })
        .nativeOutput,
    ).toBe(true);
    expect(anthropic({ apiKey: "k", nativeOutput: false }).nativeOutput).toBe(false);
  });

  it("L16: checks nativeOutput strictly (a boolean or nothing)", () => {
    for (const bad of ["true", 0, null, []]) {
      expect(() => anthropic({ apiKey: "k", nativeOutput: bad as never })).toThrow(
        InvalidOptionError,
      );
    }
    expect(() => anthropic({ apiKey: "k", nativeOutput: 0 as never })).toThrow(
      'anthropic(): option "nativeOutput" must be true or false, received 0. Omit it for the default (true, or false for api.deepseek.com).',
    );
    expect(() => anthropic({ apiKey: "k", outputConfig: {} } as never)).toThrow(
      'anthropic(): unknown option "outputConfig"',
    );
  });
});
