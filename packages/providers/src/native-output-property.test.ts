import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { toAnthropicBody } from "./anthropic/to-anthropic-body.js";
import type { ModelOutputFormat, ModelRequest } from "./model-request.js";
import { toOpenAiBody } from "./openai/to-openai-body.js";
import { validateAnthropicRequest } from "./testing/validate-anthropic-request.js";
import { validateOpenAiRequest } from "./testing/validate-openai-request.js";

/** Property names, some of which are JSON Schema keywords. */
const KEY = fc.constantFrom("id", "name", "items", "minimum", "type", "properties", "note", "x_1");

/** Leaf schemas, with the constraints Zod users write (some of which Anthropic refuses). */
const LEAF: fc.Arbitrary<z.ZodType> = fc.oneof(
  fc.constant(z.string()),
  fc.tuple(fc.nat(5), fc.nat(20)).map(([min, extra]) =>
    z
      .string()
      .min(min)
      .max(min + extra),
  ),
  fc.constant(z.email()),
  fc.constant(z.iso.datetime()),
  fc.constant(z.number()),
  fc
    .tuple(fc.integer({ min: -50, max: 0 }), fc.integer({ min: 1, max: 50 }))
    .map(([min, max]) => z.number().int().min(min).max(max)),
  fc.constant(z.number().gt(0).multipleOf(0.5)),
  fc.constant(z.boolean()),
  fc.constant(z.enum(["red", "green", "blue"])),
  fc.constant(z.literal("fixed")),
  fc.constant(z.null()),
);

/** Random Zod object schemas: nested objects, arrays (of objects), optional, nullable, unions. */
const { object: OBJECT } = fc.letrec<{ node: z.ZodType; object: z.ZodType }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    LEAF,
    tie("object"),
    fc.tuple(tie("node"), fc.nat(3), fc.nat(4)).map(([item, min, extra]) =>
      z
        .array(item)
        .min(min)
        .max(min + extra),
    ),
    tie("node").map((inner) => inner.nullable()),
    fc.tuple(tie("node"), tie("node")).map(([a, b]) => z.union([a, b])),
    fc
      .tuple(tie("object"), tie("object"))
      .map(([a, b]) =>
        z.discriminatedUnion("kind", [
          z.object({ kind: z.literal("a"), a }),
          z.object({ kind: z.literal("b"), b }),
        ]),
      ),
  ),
  object: fc
    .dictionary(KEY, fc.tuple(tie("node"), fc.boolean()), { minKeys: 0, maxKeys: 4 })
    .map((fields) => {
      const shape: Record<string, z.ZodType> = {};
      for (const [key, [schema, optional]] of Object.entries(fields)) {
        shape[key] = optional ? schema.optional() : schema;
      }
      return z.object(shape);
    }),
}));

/** An output format as core builds one: Zod's JSON Schema for the input side. */
const FORMAT: fc.Arbitrary<ModelOutputFormat> = fc
  .tuple(
    OBJECT,
    fc.stringMatching(/^[a-zA-Z0-9_-]{1,64}$/),
    fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  )
  .map(([schema, name, description]) => {
    const jsonSchema = z.toJSONSchema(schema, { target: "draft-2020-12", io: "input" });
    const format: ModelOutputFormat = {
      type: "json_schema",
      name,
      schema: jsonSchema as ModelOutputFormat["schema"],
    };
    return description === undefined ? format : { ...format, description };
  });

describe("native output bodies always pass the strict validators (L16)", () => {
  it("L16: for random Zod object schemas, the OpenAI response_format and the Anthropic output_config pass the scripted server's validators, streaming and not, and the schema is not modified", () => {
    fc.assert(
      fc.property(FORMAT, fc.boolean(), (output, stream) => {
        const before = JSON.stringify(output);
        const request: ModelRequest = {
          model: "m",
          maxTokens: 64,
          messages: [{ role: "user", content: "Answer." }],
          output,
        };
        const openai = JSON.parse(JSON.stringify(toOpenAiBody(request, stream, "max_tokens")));
        expect(validateOpenAiRequest(openai)).toBeUndefined();
        const claude = JSON.parse(JSON.stringify(toAnthropicBody(request, stream)));
        expect(validateAnthropicRequest(claude)).toBeUndefined();
        expect(JSON.stringify(output)).toBe(before);
      }),
      { numRuns: 400 },
    );
  });
});
