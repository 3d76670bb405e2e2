import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createScriptedModelServer, type ScriptedModelServer } from "./index.js";

const OPENAI_BASE = { model: "gpt-4.1", messages: [{ role: "user", content: "Order?" }] };
const ANTHROPIC_BASE = {
  model: "claude-sonnet-4-6",
  max_tokens: 64,
  messages: [{ role: "user", content: "Order?" }],
};
/** A strict-mode and structured-outputs compatible schema. */
const CLOSED = {
  type: "object",
  properties: {
    name: { type: "string" },
    items: {
      type: "array",
      items: {
        type: "object",
        properties: { sku: { type: "string" } },
        required: ["sku"],
        additionalProperties: false,
      },
    },
  },
  required: ["name", "items"],
  additionalProperties: false,
};

function jsonSchemaFormat(jsonSchema: Record<string, unknown>) {
  return { type: "json_schema", json_schema: jsonSchema };
}

describe("scripted model server: structured-output requests are checked like the real APIs (L16)", () => {
  let server: ScriptedModelServer;
  beforeAll(async () => {
    server = await createScriptedModelServer({
      respond: () => ({ content: [{ type: "text", text: "{}" }] }),
    });
  });
  afterAll(async () => {
    await server.close();
  });

  async function post(path: string, body: unknown) {
    const response = await fetch(`${server.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }
  const openai = (responseFormat: unknown) =>
    post("/v1/chat/completions", { ...OPENAI_BASE, response_format: responseFormat });
  const claude = (outputConfig: unknown) =>
    post("/v1/messages", { ...ANTHROPIC_BASE, output_config: outputConfig });

  it.each([
    ["text", { type: "text" }],
    ["json_object", { type: "json_object" }],
    [
      "strict json_schema",
      jsonSchemaFormat({ name: "final_answer", strict: true, schema: CLOSED }),
    ],
    [
      "json_schema with a description, strict null",
      jsonSchemaFormat({ name: "a-b_9", description: "An order.", strict: null, schema: CLOSED }),
    ],
    [
      "non-strict json_schema (any schema)",
      jsonSchemaFormat({ name: "loose", schema: { type: "object", properties: { x: {} } } }),
    ],
    ["json_schema without a schema", jsonSchemaFormat({ name: "answer", strict: false })],
  ])("L16: accepts an OpenAI response_format: %s", async (_name, format) => {
    expect((await openai(format)).status).toBe(200);
  });

  it.each([
    ["not an object", "json", "Invalid type for 'response_format': expected an object"],
    ["an unknown type", { type: "xml" }, "Invalid value: 'xml'. Supported values are:"],
    [
      "an extra key",
      { type: "json_object", schema: {} },
      "Unknown parameter: 'response_format.schema'.",
    ],
    [
      "json_schema missing",
      { type: "json_schema" },
      "Missing required parameter: 'response_format.json_schema'.",
    ],
    [
      "no name",
      jsonSchemaFormat({ schema: CLOSED }),
      "Missing required parameter: 'response_format.json_schema.name'.",
    ],
    [
      "a name with a space",
      jsonSchemaFormat({ name: "final answer", schema: CLOSED }),
      "Invalid 'response_format.json_schema.name': string does not match pattern",
    ],
    [
      "a name of 65 characters",
      jsonSchemaFormat({ name: "a".repeat(65), schema: CLOSED }),
      "Invalid 'response_format.json_schema.name'",
    ],
    [
      "an unknown json_schema key",
      jsonSchemaFormat({ name: "a", schema: CLOSED, schema_version: 2 }),
      "Unknown parameter: 'response_format.json_schema.schema_version'.",
    ],
    [
      "strict not a boolean",
      jsonSchemaFormat({ name: "a", schema: CLOSED, strict: "yes" }),
      "Invalid type for 'response_format.json_schema.strict': expected a boolean, but got a string instead.",
    ],
    [
      "a schema that is an array",
      jsonSchemaFormat({ name: "a", schema: [CLOSED] }),
      "Invalid type for 'response_format.json_schema.schema': expected an object",
    ],
    [
      "a strict schema with no object at the root",
      jsonSchemaFormat({ name: "a", strict: true, schema: { type: "array", items: CLOSED } }),
      `Invalid schema for response_format 'a': schema must be a JSON Schema of 'type: "object"', got 'type: "array"'.`,
    ],
    [
      "a strict schema with an open nested object",
      jsonSchemaFormat({
        name: "a",
        strict: true,
        schema: {
          ...CLOSED,
          properties: {
            ...CLOSED.properties,
            items: { type: "array", items: { type: "object", properties: {}, required: [] } },
          },
        },
      }),
      "Invalid schema for response_format 'a': In context=('items'), 'additionalProperties' is required to be supplied and to be false.",
    ],
    [
      "a strict schema with an object without properties left open",
      jsonSchemaFormat({ name: "a", strict: true, schema: { type: "object" } }),
      "'additionalProperties' is required to be supplied and to be false.",
    ],
    [
      "a strict schema with an optional property",
      jsonSchemaFormat({ name: "a", strict: true, schema: { ...CLOSED, required: ["name"] } }),
      "Invalid schema for response_format 'a': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing 'items'.",
    ],
  ])(
    "L16: rejects an OpenAI response_format with %s (400, OpenAI error body)",
    async (_name, format, message) => {
      const { status, body } = await openai(format);
      expect(status).toBe(400);
      const error = body.error as Record<string, unknown>;
      expect(error).toMatchObject({ type: "invalid_request_error", param: null, code: null });
      expect(error.message).toContain(message);
    },
  );

  it.each([
    ["a json_schema format", { format: { type: "json_schema", schema: CLOSED } }],
    ["effort only", { effort: "high" }],
    ["a null format", { format: null, effort: "low" }],
    [
      "minItems 0 and 1, $defs and anyOf",
      {
        format: {
          type: "json_schema",
          schema: {
            type: "object",
            properties: {
              a: { type: "array", minItems: 1, items: { $ref: "#/$defs/P" } },
              b: { type: "array", minItems: 0, items: { type: "string" } },
              c: { anyOf: [{ type: "string" }, { type: "null" }] },
            },
            required: ["a"],
            additionalProperties: false,
            $defs: {
              P: {
                type: "object",
                properties: { x: { type: "integer" } },
                additionalProperties: false,
              },
            },
          },
        },
      },
    ],
  ])("L16: accepts an Anthropic output_config: %s", async (_name, config) => {
    expect((await claude(config)).status).toBe(200);
  });

  const at = (schema: Record<string, unknown>) => ({ format: { type: "json_schema", schema } });
  it.each([
    ["not an object", "json", "output_config: Input should be a valid dictionary"],
    [
      "an unknown key",
      { format: null, strict: true },
      "output_config.strict: Extra inputs are not permitted",
    ],
    ["a bad effort", { effort: "extreme" }, "output_config.effort: Input should be"],
    [
      "a format that is not an object",
      { format: "json" },
      "output_config.format: Input should be a valid dictionary",
    ],
    [
      "another format type",
      { format: { type: "json", schema: CLOSED } },
      "output_config.format.type: Input should be 'json_schema'",
    ],
    [
      "a format with a name",
      { format: { type: "json_schema", name: "a", schema: CLOSED } },
      "output_config.format.name: Extra inputs are not permitted",
    ],
    [
      "no schema",
      { format: { type: "json_schema" } },
      "output_config.format.schema: Field required",
    ],
    [
      "a schema that is an array",
      { format: { type: "json_schema", schema: [] } },
      "output_config.format.schema: Input should be a valid dictionary",
    ],
    [
      "no object at the root",
      at({ type: "array", items: { type: "string" } }),
      "The root schema must have type 'object'.",
    ],
    [
      "an open root object",
      at({ type: "object", properties: {} }),
      "For 'object' type, 'additionalProperties' must be explicitly set to false (at the root).",
    ],
    [
      "an open object in an array",
      at({
        ...CLOSED,
        properties: { items: { type: "array", items: { type: "object", properties: {} } } },
      }),
      "For 'object' type, 'additionalProperties' must be explicitly set to false (at properties.items.items).",
    ],
    [
      "minimum",
      at({ ...CLOSED, properties: { n: { type: "integer", minimum: 0 } } }),
      "For 'integer' type, property 'minimum' is not supported (at properties.n).",
    ],
    [
      "exclusiveMaximum",
      at({ ...CLOSED, properties: { n: { type: "number", exclusiveMaximum: 9 } } }),
      "property 'exclusiveMaximum' is not supported",
    ],
    [
      "multipleOf",
      at({ ...CLOSED, properties: { n: { type: "number", multipleOf: 2 } } }),
      "property 'multipleOf' is not supported",
    ],
    [
      "minLength",
      at({ ...CLOSED, properties: { s: { type: "string", minLength: 1 } } }),
      "For 'string' type, property 'minLength' is not supported",
    ],
    [
      "maxLength in $defs",
      at({ ...CLOSED, $defs: { S: { type: "string", maxLength: 3 } } }),
      "property 'maxLength' is not supported (at $defs.S)",
    ],
    [
      "maxItems",
      at({ ...CLOSED, properties: { a: { type: "array", maxItems: 3 } } }),
      "For 'array' type, property 'maxItems' is not supported",
    ],
    [
      "minItems 2",
      at({ ...CLOSED, properties: { a: { type: "array", minItems: 2 } } }),
      "For 'array' type, 'minItems' values other than 0 or 1 are not supported (at properties.a, got 2).",
    ],
  ])(
    "L16: rejects an Anthropic output_config with %s (400, Anthropic error body)",
    async (_name, config, message) => {
      const { status, body } = await claude(config);
      expect(status).toBe(400);
      expect(body).toMatchObject({ type: "error", error: { type: "invalid_request_error" } });
      expect((body.error as { message: string }).message).toContain(message);
    },
  );

  it("L16: a scripted refusal is rendered as OpenAI sends one: message.refusal with content null, delta.refusal pieces, finish_reason stop", async () => {
    server.enqueue(
      { content: [{ type: "refusal", text: "No can do." }] },
      { content: [{ type: "refusal", text: "No can do." }], chunkSize: 4 },
    );
    const plain = await openai({ type: "json_object" });
    const choice = (plain.body.choices as Record<string, unknown>[])[0]!;
    expect(choice).toMatchObject({
      message: { role: "assistant", content: null, refusal: "No can do." },
      finish_reason: "stop",
    });
    const streamed = await fetch(`${server.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ ...OPENAI_BASE, stream: true }),
    });
    const chunks = (await streamed.text())
      .split("\n\n")
      .filter((event) => event.startsWith("data: {"))
      .map((event) => JSON.parse(event.slice(6)).choices[0]);
    expect(chunks[0].delta).toEqual({ role: "assistant", content: null, refusal: "" });
    expect(
      chunks
        .slice(1, -1)
        .map((chunk) => chunk.delta.refusal)
        .join(""),
    ).toBe("No can do.");
    expect(chunks.at(-1).finish_reason).toBe("stop");
  });
});
