import { fileURLToPath } from "node:url";
import type { StandardSchemaResult } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { runNodeScript } from "../test-servers/run-node.js";
import {
  JsonSchemaCompiler,
  type McpToolInput,
  outputSchemaValidator,
} from "./json-schema-validator.js";

const RELIST_CLIENT = fileURLToPath(new URL("../test-servers/relist-client.ts", import.meta.url));

/** Runs the re-listing client with an exposed GC; resolves with its JSON line. */
async function runRelistClient(rounds: number): Promise<{ growthMb: number; seconds: number }> {
  const run = await runNodeScript(["--expose-gc"], RELIST_CLIENT, [String(rounds)]);
  if (run.code !== 0) throw new Error(`relist client exited with ${run.code}: ${run.stderr}`);
  return JSON.parse(run.stdout) as { growthMb: number; seconds: number };
}

/** Compiles `schema` with a compiler of its own; fails the test when it is unusable. */
function compiled(schema: Record<string, unknown>) {
  const outcome = new JsonSchemaCompiler().compile(schema);
  if (!outcome.ok) throw new Error(`schema refused: ${outcome.reason}`);
  return outcome;
}

/** Validates synchronously (this compiler always does). */
function check(
  outcome: ReturnType<typeof compiled>,
  value: unknown,
): StandardSchemaResult<McpToolInput> {
  return outcome.schema["~standard"].validate(value) as StandardSchemaResult<McpToolInput>;
}

/** Milliseconds `run` took. */
function timed<T>(run: () => T): { readonly value: T; readonly ms: number } {
  const started = performance.now();
  const value = run();
  return { value, ms: performance.now() - started };
}

/** An object schema of `count` properties, each with the pattern `^\p{L}{500+i}$`. */
function costlyPatterns(count: number): Record<string, unknown> {
  const properties: Record<string, unknown> = {};
  for (let index = 0; index < count; index++) {
    properties[`p${index}`] = { type: "string", pattern: `^\\p{L}{${500 + index}}$` };
  }
  return { type: "object", properties };
}

describe("compiled input schemas (M5, H20)", () => {
  it("H20: the heap after GC stays flat over 150 re-listings of 200 tools (list_changed)", async () => {
    const outcome = await runRelistClient(150);
    expect(outcome.growthMb).toBeLessThan(10);
  }, 60_000);

  it("H20: a schema is checked when listed, its validator compiled on the first call", () => {
    const compiler = new JsonSchemaCompiler();
    const invalid = compiler.compile({ type: "object", properties: { x: { type: "strang" } } });
    expect(invalid).toMatchObject({ ok: false });
    expect(!invalid.ok && invalid.reason).toMatch(/^schema is invalid: .*type/);
    const dangling = compiler.compile({
      type: "object",
      properties: { x: { $ref: "#/$defs/no" } },
    });
    expect(dangling.ok).toBe(true);
    if (!dangling.ok) return;
    const outcome = dangling.schema["~standard"].validate({ x: 1 });
    expect(outcome).toEqual({
      issues: [
        {
          message: expect.stringMatching(
            /^cannot be checked: the server's inputSchema for this tool does not compile \(.*#\/\$defs\/no.*\); the call was not sent$/,
          ),
        },
      ],
    });
  });
});

describe("a server's schema cannot hold the event loop (H19)", () => {
  it("H19: 500 costly patterns in one inputSchema: listing compiles none, the first call stays within the budget, the rest are unchecked", () => {
    // The reviewer's case: 25 KB of schema held tools() for 19.7 s.
    const listing = timed(() => compiled(costlyPatterns(500)));
    expect(listing.ms).toBeLessThan(2_000);
    const first = timed(() => check(listing.value, { p0: "a".repeat(500) }));
    expect(first.ms).toBeLessThan(5_000);
    expect(first.value.issues).toBeUndefined();
    const unchecked = listing.value.uncheckedPatterns;
    expect(unchecked.length).toBeGreaterThan(400);
    expect(unchecked[0]?.reason).toMatch(
      /^compiling it is past this schema's budget \(50000 units; it costs \d+\)$/,
    );
    // The patterns within the budget are checked.
    expect(check(listing.value, { p0: "a".repeat(499) }).issues?.[0]?.message).toBe(
      'must match pattern "^\\p{L}{500}$"',
    );
  }, 60_000);

  it("H19: the SDK's outputSchema validators are made without compiling any pattern", () => {
    const made = timed(() => outputSchemaValidator.getValidator(costlyPatterns(500)));
    expect(made.ms).toBeLessThan(2_000);
    const first = timed(() => made.value({ p0: "a".repeat(500) }));
    expect(first.ms).toBeLessThan(5_000);
    expect(first.value.valid).toBe(true);
  }, 60_000);

  it("H19: uniqueItems over 20,000 items is checked in linear time, and still finds duplicates", () => {
    const schema = compiled({
      type: "object",
      properties: { xs: { type: "array", uniqueItems: true } },
    });
    const items = Array.from({ length: 20_000 }, (_, index) => [index, { n: index }]);
    const unique = timed(() => check(schema, { xs: items }));
    // Ajv's pairwise check took 2.3-3.8 s for these 149 KB.
    expect(unique.ms).toBeLessThan(1_000);
    expect(unique.value.issues).toBeUndefined();
    const twice = check(schema, { xs: [{ a: 1, b: [2, 3] }, "x", { b: [2, 3], a: 1 }] });
    expect(twice.issues).toEqual([
      { path: ["xs"], message: "must NOT have duplicate items (items ## 2 and 0 are identical)" },
    ]);
    expect(check(schema, { xs: [1, "1", [1], { 1: 1 }, true, null] }).issues).toBeUndefined();
  });

  it("H19: a schema over 128 KiB is not checked locally, with the reason; listing and calls stay quick", () => {
    const properties: Record<string, unknown> = {};
    for (let index = 0; index < 50_000; index++) {
      properties[`p${index}`] = { type: "integer", minimum: index };
    }
    // 2 MB: compiling it took 15.6 s, then checking threw RangeError.
    const listing = timed(() => compiled({ type: "object", properties }));
    expect(listing.ms).toBeLessThan(2_000);
    expect(listing.value.uncheckedSchema).toMatch(
      /^is \d+ characters of JSON, over the 131072 Lattice compiles$/,
    );
    const call = timed(() => check(listing.value, { p1: 0 }));
    expect(call.ms).toBeLessThan(1_000);
    expect(call.value).toEqual({ value: { p1: 0 } });
    expect(check(listing.value, [1]).issues).toEqual([{ message: "must be object" }]);
  });

  it("H19: what throws while compiling or checking answers 'cannot be checked', never an exception", () => {
    // A value nested far deeper than the stack allows, against a recursive schema.
    const recursive = compiled({ type: "object", properties: { a: { $ref: "#" } } });
    expect(check(recursive, { a: { a: {} } }).issues).toBeUndefined();
    expect(check(recursive, { a: { a: 1 } }).issues?.[0]?.message).toBe("must be object");
    let deep: Record<string, unknown> = {};
    for (let level = 0; level < 50_000; level++) deep = { a: deep };
    const outcome = check(recursive, deep);
    expect(outcome.issues).toEqual([
      {
        message: expect.stringMatching(
          /^cannot be checked: checking it against the server's inputSchema failed \(.*call stack.*\); the call was not sent$/,
        ),
      },
    ]);
    // A schema nested thousands deep (70 KB): checked, or not checked here, with the reason.
    let schema: Record<string, unknown> = { type: "string" };
    for (let level = 0; level < 10_000; level++) schema = { not: schema };
    const nested = new JsonSchemaCompiler().compile(schema);
    expect(nested.ok).toBe(true);
    if (!nested.ok) return;
    const deepOutcome = check(nested, {});
    if (nested.uncheckedSchema !== undefined) {
      expect(nested.uncheckedSchema).toBe(
        "is nested too deeply to be checked here (the stack overflowed)",
      );
      expect(deepOutcome).toEqual({ value: {} });
    } else {
      expect(deepOutcome.issues?.[0]?.message ?? "accepted").toMatch(
        /^(accepted|must NOT|cannot be checked)/,
      );
    }
  });

  it("H19: an unchecked pattern refuses nothing it would accept, also under not, oneOf, if and contains", () => {
    // Each accepted value is one the schema accepts as JavaScript reads it; each was refused.
    const cases: Array<[schema: Record<string, unknown>, accepted: unknown[], refused: unknown[]]> =
      [
        // The reviewer's cases: each was refused.
        [
          {
            type: "object",
            properties: { name: { type: "string", not: { pattern: "^(?=.*admin)" } } },
          },
          [{ name: "bob" }],
          [{ name: 1 }],
        ],
        [
          {
            type: "object",
            properties: {
              v: {
                oneOf: [
                  { type: "string", pattern: "^(?=x)" },
                  { type: "string", maxLength: 3 },
                ],
              },
            },
          },
          [{ v: "ab" }, { v: "xlong-text" }],
          [{ v: 1 }],
        ],
        [
          // (JSON: an object literal with a "then" key reads as a thenable to the linter.)
          JSON.parse(
            '{"type":"object","if":{"properties":{"k":{"pattern":"^(?=a)"}}},"then":{"required":["a"]},"else":{"required":["b"]}}',
          ),
          [
            { k: "a1", a: 1 },
            { k: "zz", b: 1 },
          ],
          [{ k: "a1" }],
        ],
        [
          {
            type: "object",
            properties: { xs: { type: "array", contains: { pattern: "^(?=y)" }, maxContains: 1 } },
          },
          [{ xs: ["y1", "b"] }],
          [{ xs: [] }],
        ],
        [
          {
            type: "object",
            not: { patternProperties: { "^(?=z)": { type: "string" } }, required: ["z1"] },
          },
          [{ z1: 5 }],
          [],
        ],
        [
          {
            type: "object",
            $defs: { code: { type: "string", pattern: "^(?=c)" } },
            properties: { c: { not: { $ref: "#/$defs/code" } } },
          },
          [{ c: "dog" }],
          [],
        ],
      ];
    for (const [schema, accepted, refused] of cases) {
      const outcome = compiled(schema);
      expect(outcome.uncheckedPatterns.length, JSON.stringify(schema)).toBeGreaterThan(0);
      for (const value of accepted) {
        expect(
          check(outcome, value).issues,
          `${JSON.stringify(value)} by ${JSON.stringify(schema)}`,
        ).toBeUndefined();
      }
      for (const value of refused) {
        expect(
          check(outcome, value).issues,
          `${JSON.stringify(value)} by ${JSON.stringify(schema)}`,
        ).toBeDefined();
      }
    }
    // Without an unchecked pattern, not and oneOf keep refusing.
    const checkedNot = compiled({ type: "object", properties: { v: { not: { pattern: "^a" } } } });
    expect(check(checkedNot, { v: "abc" }).issues).toBeDefined();
    // RE2's "." matched "\r": under not, "\r" was refused.
    const dot = compiled({
      type: "object",
      properties: { v: { type: "string", not: { pattern: "^.$" } } },
    });
    expect(check(dot, { v: "\r" }).issues).toBeUndefined();
    expect(check(dot, { v: "a" }).issues).toBeDefined();
  });
});
