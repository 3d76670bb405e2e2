import { describe, expect, it } from "vitest";
import { stripStrictNulls } from "./strip-strict-nulls.js";
import { toStrictSchema } from "./to-strict-schema.js";

const SCHEMA = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    query: { type: "string" },
    limit: { type: "integer" },
    mode: { enum: ["fast", "slow"] },
    tags: {
      type: "array",
      items: {
        type: "object",
        properties: { name: { type: "string" }, weight: { type: "number" } },
        required: ["name"],
      },
    },
    either: { anyOf: [{ type: "string" }, { type: "number" }] },
  },
  required: ["query"],
};

describe("OpenAI strict-mode schema adjustment", () => {
  it("requires every property, forbids extra ones, makes optional ones nullable, drops $schema", () => {
    const strict = toStrictSchema(SCHEMA);
    expect(strict).toEqual({
      type: "object",
      properties: {
        query: { type: "string" },
        limit: { type: ["integer", "null"] },
        mode: { anyOf: [{ enum: ["fast", "slow"] }, { type: "null" }] },
        tags: {
          type: ["array", "null"],
          items: {
            type: "object",
            properties: { name: { type: "string" }, weight: { type: ["number", "null"] } },
            required: ["name", "weight"],
            additionalProperties: false,
          },
        },
        either: { anyOf: [{ type: "string" }, { type: "number" }, { type: "null" }] },
      },
      required: ["query", "limit", "mode", "tags", "either"],
      additionalProperties: false,
    });
    expect(SCHEMA.required).toEqual(["query"]);
  });

  it("removes the nulls of optional properties at every depth, keeping real values", () => {
    const input = {
      query: "q",
      limit: null,
      mode: null,
      tags: [{ name: "a", weight: null }],
      either: 2,
    };
    expect(stripStrictNulls(input, SCHEMA)).toEqual({
      query: "q",
      tags: [{ name: "a" }],
      either: 2,
    });
  });

  it("keeps nulls a property allows in the original schema", () => {
    const schema = { type: "object", properties: { note: { type: ["string", "null"] } } };
    expect(stripStrictNulls({ note: null }, schema)).toEqual({ note: null });
  });
});
