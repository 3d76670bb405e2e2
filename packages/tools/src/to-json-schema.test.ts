import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { tool } from "./index.js";
import { formatPath } from "./internal.js";

const ajv = new Ajv2020({ strict: false });
const ok = async () => ({ content: "ok" });

function schemaOf(shape: z.ZodObject) {
  const schema = tool("probe", "d", shape, ok).inputSchema;
  // Every output is a valid draft 2020-12 schema.
  const valid = ajv.validateSchema({
    ...schema,
    $schema: "https://json-schema.org/draft/2020-12/schema",
  });
  expect(ajv.errors ?? []).toEqual([]);
  expect(valid).toBe(true);
  return schema;
}

describe("T2: Zod v4 → JSON Schema (draft 2020-12)", () => {
  it("nested objects keep .describe() texts at every depth", () => {
    const schema = schemaOf(
      z.object({
        user: z
          .object({
            name: z.string().describe("Full name"),
            address: z.object({ city: z.string().describe("City") }).describe("Postal address"),
          })
          .describe("The user"),
      }),
    );
    expect(schema).toEqual({
      type: "object",
      properties: {
        user: {
          type: "object",
          description: "The user",
          properties: {
            name: { type: "string", description: "Full name" },
            address: {
              type: "object",
              description: "Postal address",
              properties: { city: { type: "string", description: "City" } },
              required: ["city"],
            },
          },
          required: ["name", "address"],
        },
      },
      required: ["user"],
    });
  });

  it("arrays and enums", () => {
    const schema = schemaOf(
      z.object({
        tags: z.array(z.string()).min(1).describe("Tags"),
        unit: z.enum(["celsius", "fahrenheit"]).describe("Unit"),
      }),
    );
    expect(schema.properties?.tags).toEqual({
      type: "array",
      items: { type: "string" },
      minItems: 1,
      description: "Tags",
    });
    expect(schema.properties?.unit).toEqual({
      type: "string",
      enum: ["celsius", "fahrenheit"],
      description: "Unit",
    });
  });

  it("unions and discriminated unions", () => {
    const schema = schemaOf(
      z.object({
        id: z.union([z.string(), z.number()]),
        shape: z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("circle"), r: z.number() }),
          z.object({ kind: z.literal("square"), side: z.number() }),
        ]),
      }),
    );
    expect(schema.properties?.id).toEqual({ type: ["string", "number"] });
    const shape = schema.properties?.shape as { oneOf?: unknown[]; anyOf?: unknown[] };
    expect((shape.oneOf ?? shape.anyOf)?.length).toBe(2);
  });

  it("optional, nullable and default fields: only plain fields are required (input side)", () => {
    const schema = schemaOf(
      z.object({
        plain: z.string(),
        maybe: z.string().optional(),
        nothing: z.string().nullable(),
        limit: z.number().int().default(10).describe("Max results"),
      }),
    );
    expect(schema.required).toEqual(["plain", "nothing"]);
    expect(schema.properties?.limit).toMatchObject({
      type: "integer",
      default: 10,
      description: "Max results",
    });
    expect(schema.properties?.nothing).toEqual({ type: ["string", "null"] });
  });

  it("records", () => {
    const schema = schemaOf(z.object({ headers: z.record(z.string(), z.string()) }));
    expect(schema.properties?.headers).toMatchObject({
      type: "object",
      additionalProperties: { type: "string" },
    });
  });

  it("an empty object schema is still an object schema", () => {
    expect(schemaOf(z.object({}))).toEqual({ type: "object", properties: {} });
  });

  it("never emits $schema at any depth", () => {
    const schema = schemaOf(z.object({ a: z.object({ b: z.array(z.object({ c: z.string() })) }) }));
    expect(JSON.stringify(schema)).not.toContain("$schema");
  });
});

describe("formatPath", () => {
  it("prints dotted keys, indices and quoted odd keys", () => {
    expect(formatPath([])).toBe("");
    expect(formatPath(["items", 0, "name"])).toBe("items[0].name");
    expect(formatPath(["-i"])).toBe('["-i"]');
    expect(formatPath(["tags", "*"])).toBe("tags[*]");
  });
});
