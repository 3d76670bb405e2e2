import { describe, expect, it } from "vitest";
import {
  BUILTIN_PRICING_DATE,
  builtinPricing,
  checkPricing,
  costOf,
  type ModelPrice,
  type ModelPricing,
  priceOf,
} from "./model-pricing.js";
import type { RunUsage } from "./sdk-message.js";

const usage = (
  inputTokens: number,
  outputTokens: number,
  cacheReadInputTokens = 0,
  cacheCreationInputTokens = 0,
): RunUsage => ({ inputTokens, outputTokens, cacheReadInputTokens, cacheCreationInputTokens });

describe("model pricing (L11)", () => {
  it("L11: a key matches its model id and any dated snapshot of it", () => {
    const sonnet = builtinPricing["claude-sonnet-4-5"];
    expect(priceOf("claude-sonnet-4-5", undefined)).toBe(sonnet);
    expect(priceOf("claude-sonnet-4-5-20250929", undefined)).toBe(sonnet);
    expect(priceOf("gpt-5-2025-08-07", undefined)).toBe(builtinPricing["gpt-5"]);
    expect(priceOf("claude-3-5-haiku-latest", undefined)).toBe(builtinPricing["claude-3-5-haiku"]);
    expect(priceOf("claude-opus-4-1-20250805", undefined)).toBe(builtinPricing["claude-opus-4-1"]);
    expect(priceOf("claude-opus-4-20250514", undefined)).toBe(builtinPricing["claude-opus-4"]);
  });

  it("L11: a suffix that is not a snapshot names another model, which has no price", () => {
    for (const model of [
      "gpt-5-pro",
      "o3-mini",
      "o3-pro-2025-06-10",
      "claude-opus-4-7",
      "gpt-5x",
    ]) {
      expect(priceOf(model, undefined), model).toBeUndefined();
    }
    expect(priceOf("anthropic/claude-sonnet-4-5", undefined)).toBeUndefined();
    expect(priceOf("CLAUDE-SONNET-4-5", undefined)).toBeUndefined();
    expect(priceOf("constructor", undefined)).toBeUndefined();
    expect(priceOf("__proto__", {})).toBeUndefined();
  });

  it("L11: the longest matching key wins", () => {
    const general: ModelPrice = { inputPerMTok: 1, outputPerMTok: 2 };
    const snapshot: ModelPrice = { inputPerMTok: 3, outputPerMTok: 4 };
    const pricing: ModelPricing = { "my-model": general, "my-model-2025-01-01": snapshot };
    expect(priceOf("my-model-2025-01-01", pricing, false)).toBe(snapshot);
    expect(priceOf("my-model-2025-02-01", pricing, false)).toBe(general);
    expect(priceOf("gpt-4o-2024-05-13", undefined)).toBe(builtinPricing["gpt-4o-2024-05-13"]);
    expect(priceOf("gpt-4o-2024-08-06", undefined)).toBe(builtinPricing["gpt-4o"]);
    expect(priceOf("gpt-5-mini-2025-08-07", undefined)).toBe(builtinPricing["gpt-5-mini"]);
  });

  it("L11: the user's table overrides the built-in one, which still prices other models", () => {
    const mine: ModelPrice = { inputPerMTok: 9, outputPerMTok: 9 };
    const pricing: ModelPricing = {
      "gpt-5": mine,
      "local-llm": { inputPerMTok: 0, outputPerMTok: 0 },
    };
    expect(priceOf("gpt-5", pricing)).toBe(mine);
    expect(priceOf("gpt-5-2025-08-07", pricing)).toBe(mine);
    expect(priceOf("gpt-5-mini", pricing)).toBe(builtinPricing["gpt-5-mini"]);
    expect(priceOf("local-llm", pricing)).toEqual({ inputPerMTok: 0, outputPerMTok: 0 });
    expect(priceOf("unknown-model", pricing)).toBeUndefined();
  });

  it("L11: useBuiltin false prices only the user's models", () => {
    const pricing: ModelPricing = { "local-llm": { inputPerMTok: 1, outputPerMTok: 1 } };
    expect(priceOf("gpt-5", pricing, false)).toBeUndefined();
    expect(priceOf("gpt-5", undefined, false)).toBeUndefined();
    expect(priceOf("local-llm", pricing, false)).toBe(pricing["local-llm"]);
  });

  it("L11: a resolved price is kept per table, answers included for unknown models", () => {
    const pricing: ModelPricing = { a: { inputPerMTok: 1, outputPerMTok: 1 } };
    expect(priceOf("a-20250101", pricing, false)).toBe(pricing.a);
    expect(priceOf("b", pricing, false)).toBeUndefined();
    // The same ids again come from the kept answers; another table is resolved on its own.
    expect(priceOf("a-20250101", pricing, false)).toBe(pricing.a);
    expect(priceOf("b", pricing, false)).toBeUndefined();
    const other: ModelPricing = { b: { inputPerMTok: 2, outputPerMTok: 2 } };
    expect(priceOf("b", other, false)).toBe(other.b);
  });

  it("L11: costOf prices each of the four token counts at its own rate", () => {
    const sonnet = builtinPricing["claude-sonnet-4-5"]!;
    // 1M input × $3 + 2M output × $15 + 10M cache reads × $0.30 + 4M cache writes × $3.75
    expect(costOf(usage(1_000_000, 2_000_000, 10_000_000, 4_000_000), sonnet)).toBe(
      3 + 30 + 3 + 15,
    );
    expect(costOf(usage(1_000, 500), sonnet)).toBe(0.0105);
    expect(costOf(usage(0, 0), sonnet)).toBe(0);
    // gpt-5: 200k input × $1.25 + 800k cached × $0.125 + 10k output × $10
    expect(costOf(usage(200_000, 10_000, 800_000), builtinPricing["gpt-5"]!)).toBe(0.45);
    // deepseek-chat: 1M miss × $0.28 + 1M hit × $0.028 + 1M output × $0.42
    expect(costOf(usage(1_000_000, 1_000_000, 1_000_000), builtinPricing["deepseek-chat"]!)).toBe(
      0.728,
    );
  });

  it("L11: cache reads and writes cost the input price when a price leaves them out", () => {
    const price: ModelPrice = { inputPerMTok: 2, outputPerMTok: 8 };
    expect(costOf(usage(0, 0, 1_000_000), price)).toBe(2);
    expect(costOf(usage(0, 0, 0, 1_000_000), price)).toBe(2);
    expect(costOf(usage(1_000_000, 1_000_000, 1_000_000, 1_000_000), price)).toBe(14);
    const discounted: ModelPrice = { ...price, cacheReadPerMTok: 0.5 };
    expect(costOf(usage(0, 0, 1_000_000, 1_000_000), discounted)).toBe(2.5);
    // OpenAI reports no cache writes: the built-in OpenAI prices leave them at the input price.
    expect(builtinPricing["gpt-4.1"]!.cacheWritePerMTok).toBeUndefined();
  });

  it("L11: checkPricing accepts a valid table, cache prices optional", () => {
    expect(() => checkPricing({})).not.toThrow();
    expect(() =>
      checkPricing({
        "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10 },
        "local-llm": {
          inputPerMTok: 0,
          outputPerMTok: 0,
          cacheReadPerMTok: 0,
          cacheWritePerMTok: 0,
        },
        "with-undefined": { inputPerMTok: 1, outputPerMTok: 1, cacheReadPerMTok: undefined },
      }),
    ).not.toThrow();
  });

  it("L11: checkPricing refuses a bad table with an exact message", () => {
    const cases: Array<[unknown, string]> = [
      [null, "AgentOptions: pricing must be an object of prices by model id, got null."],
      [[], "AgentOptions: pricing must be an object of prices by model id, got an array."],
      ["gpt-5", 'AgentOptions: pricing must be an object of prices by model id, got "gpt-5".'],
      [
        { "": { inputPerMTok: 1, outputPerMTok: 1 } },
        "AgentOptions: pricing has an empty model id; key each price by its model id.",
      ],
      [
        { "gpt-5": 3 },
        'AgentOptions: pricing["gpt-5"] must be an object { inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok? }, got 3.',
      ],
      [
        { "gpt-5": null },
        'AgentOptions: pricing["gpt-5"] must be an object { inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok? }, got null.',
      ],
      [
        { "gpt-5": { inputPerMTok: -1, outputPerMTok: 10 } },
        'AgentOptions: pricing["gpt-5"].inputPerMTok must be a finite number ≥ 0, got -1.',
      ],
      [
        { "gpt-5": { inputPerMTok: 1 } },
        'AgentOptions: pricing["gpt-5"].outputPerMTok must be a finite number ≥ 0, got undefined.',
      ],
      [
        { "gpt-5": { inputPerMTok: 1, outputPerMTok: Number.POSITIVE_INFINITY } },
        'AgentOptions: pricing["gpt-5"].outputPerMTok must be a finite number ≥ 0, got Infinity.',
      ],
      [
        { "gpt-5": { inputPerMTok: "1.25", outputPerMTok: 10 } },
        'AgentOptions: pricing["gpt-5"].inputPerMTok must be a finite number ≥ 0, got "1.25".',
      ],
      [
        { "gpt-5": { inputPerMTok: 1, outputPerMTok: 1, cacheReadPerMTok: Number.NaN } },
        'AgentOptions: pricing["gpt-5"].cacheReadPerMTok must be a finite number ≥ 0, got NaN.',
      ],
      [
        { "gpt-5": { inputPerMTok: 1, outputPerMTok: 1, cacheWritePerMTok: null } },
        'AgentOptions: pricing["gpt-5"].cacheWritePerMTok must be a finite number ≥ 0, got null.',
      ],
      [
        { "gpt-5": { inputPerMTok: 1, outputPerMTok: 1, foo: 2 } },
        'AgentOptions: pricing["gpt-5"] has an unknown key "foo"; the keys are inputPerMTok, outputPerMTok, cacheReadPerMTok, cacheWritePerMTok.',
      ],
      [
        { "gpt-5": { input: 1, outputPerMTok: 1 } },
        'AgentOptions: pricing["gpt-5"] has an unknown key "input"; the keys are inputPerMTok, outputPerMTok, cacheReadPerMTok, cacheWritePerMTok.',
      ],
    ];
    for (const [pricing, message] of cases) {
      expect(() => checkPricing(pricing)).toThrow(TypeError);
      expect(() => checkPricing(pricing)).toThrow(new TypeError(message));
    }
  });

  it("L11: checkPricing starts its messages with the given prefix", () => {
    expect(() =>
      checkPricing({ m: { inputPerMTok: 1, outputPerMTok: -2 } }, "QueryOptions:"),
    ).toThrow(
      new TypeError(
        'QueryOptions: pricing["m"].outputPerMTok must be a finite number ≥ 0, got -2.',
      ),
    );
  });

  it("L11: every built-in entry passes checkPricing and has a cache-read price", () => {
    expect(() => checkPricing(builtinPricing)).not.toThrow();
    for (const [model, price] of Object.entries(builtinPricing)) {
      expect(() => checkPricing({ [model]: price }), model).not.toThrow();
      expect(price.inputPerMTok, model).toBeGreaterThan(0);
      expect(price.outputPerMTok, model).toBeGreaterThan(price.inputPerMTok);
      if (model !== "gpt-4o-2024-05-13") {
        expect(price.cacheReadPerMTok, model).toBeLessThan(price.inputPerMTok);
      }
    }
    expect(Object.isFrozen(builtinPricing)).toBe(true);
    expect(BUILTIN_PRICING_DATE).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it("L11: built-in Claude prices read the cache at 0.1 × input and write it at 1.25 × input", () => {
    for (const [model, price] of Object.entries(builtinPricing)) {
      if (!model.startsWith("claude-")) continue;
      expect(price.cacheReadPerMTok, model).toBeCloseTo(price.inputPerMTok * 0.1, 12);
      expect(price.cacheWritePerMTok, model).toBeCloseTo(price.inputPerMTok * 1.25, 12);
    }
  });
});
