import type { RunUsage } from "./sdk-message.js";

/** Prices of one model in US dollars per million tokens. */
export interface ModelPrice {
  /** Input tokens neither read from nor written to the prompt cache (a cache miss). */
  readonly inputPerMTok: number;
  /** Output tokens, thinking and reasoning tokens included. */
  readonly outputPerMTok: number;
  /** Input tokens read from the prompt cache. Default: `inputPerMTok` (no discount known). */
  readonly cacheReadPerMTok?: number;
  /** Input tokens written to the prompt cache. Default: `inputPerMTok`. */
  readonly cacheWritePerMTok?: number;
}

/**
 * Prices by model id. A key matches the id itself or any dated snapshot of it:
 * `"claude-sonnet-4-5"` matches `"claude-sonnet-4-5-20250929"`, `"gpt-5"` matches
 * `"gpt-5-2025-08-07"`, and `"claude-3-5-haiku"` matches `"claude-3-5-haiku-latest"`. The
 * longest matching key wins, so a key for one snapshot overrides the key of its model.
 *
 * A snapshot suffix is `-YYYYMMDD`, `-YYYY-MM-DD` or `-latest`, nothing else: `"gpt-5"` does
 * not match `"gpt-5-pro"` and `"o3"` does not match `"o3-mini"`, which are other models at
 * other prices. Ids are compared as given (case-sensitive, no provider prefix such as
 * `"anthropic/"`). A table is read once per model id and the answer kept: pass a new object
 * rather than changing one already in use.
 */
export type ModelPricing = { readonly [model: string]: ModelPrice };

/** The date the built-in table was last checked against the providers' price pages (ISO date). */
export const BUILTIN_PRICING_DATE = "2026-04-13";

/**
 * The built-in table: current Claude, OpenAI and DeepSeek models, at list prices of the
 * standard tier (no batch discount, no priority or regional surcharge), for prompts of up to
 * 200K tokens where a price is tiered by length.
 *
 * - Anthropic, from https://platform.claude.com/docs/en/about-claude/pricing ("Model
 *   pricing"): base input, cache hits (0.1 × input), 5-minute cache writes (1.25 × input;
 *   1-hour writes cost 2 × input, so a run that asks for them is under-counted), output.
 * - OpenAI, from https://platform.openai.com/docs/pricing and the model pages under
 *   https://developers.openai.com/api/docs/models: input, cached input, output. OpenAI
 *   charges nothing extra for writing its cache, so cache writes cost the input price.
 * - DeepSeek, from https://api-docs.deepseek.com/quick_start/pricing: input (cache miss),
 *   input (cache hit), output; `deepseek-chat` and `deepseek-reasoner` are priced alike.
 *
 * Prices change and new models appear: the table was checked on
 * {@link BUILTIN_PRICING_DATE}. Override or add a model with the `pricing` option, whose
 * entries are looked up before these; a model in neither table has no known price.
 */
export const builtinPricing: ModelPricing = Object.freeze({
  // Anthropic
  "claude-opus-4-6": {
    inputPerMTok: 5,
    outputPerMTok: 25,
    cacheReadPerMTok: 0.5,
    cacheWritePerMTok: 6.25,
  },
  "claude-opus-4-5": {
    inputPerMTok: 5,
    outputPerMTok: 25,
    cacheReadPerMTok: 0.5,
    cacheWritePerMTok: 6.25,
  },
  "claude-opus-4-1": {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75,
  },
  "claude-opus-4": {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75,
  },
  "claude-opus-4-0": {
    inputPerMTok: 15,
    outputPerMTok: 75,
    cacheReadPerMTok: 1.5,
    cacheWritePerMTok: 18.75,
  },
  "claude-sonnet-4-6": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "claude-sonnet-4-5": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "claude-sonnet-4": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "claude-sonnet-4-0": {
    inputPerMTok: 3,
    outputPerMTok: 15,
    cacheReadPerMTok: 0.3,
    cacheWritePerMTok: 3.75,
  },
  "claude-haiku-4-5": {
    inputPerMTok: 1,
    outputPerMTok: 5,
    cacheReadPerMTok: 0.1,
    cacheWritePerMTok: 1.25,
  },
  "claude-3-5-haiku": {
    inputPerMTok: 0.8,
    outputPerMTok: 4,
    cacheReadPerMTok: 0.08,
    cacheWritePerMTok: 1,
  },
  // OpenAI (cache writes default to the input price)
  "gpt-5": { inputPerMTok: 1.25, outputPerMTok: 10, cacheReadPerMTok: 0.125 },
  "gpt-5-mini": { inputPerMTok: 0.25, outputPerMTok: 2, cacheReadPerMTok: 0.025 },
  "gpt-5-nano": { inputPerMTok: 0.05, outputPerMTok: 0.4, cacheReadPerMTok: 0.005 },
  "gpt-4.1": { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  "gpt-4.1-mini": { inputPerMTok: 0.4, outputPerMTok: 1.6, cacheReadPerMTok: 0.1 },
  "gpt-4.1-nano": { inputPerMTok: 0.1, outputPerMTok: 0.4, cacheReadPerMTok: 0.025 },
  "gpt-4o": { inputPerMTok: 2.5, outputPerMTok: 10, cacheReadPerMTok: 1.25 },
  // The first gpt-4o snapshot kept its launch price and has no cache discount.
  "gpt-4o-2024-05-13": { inputPerMTok: 5, outputPerMTok: 15 },
  "gpt-4o-mini": { inputPerMTok: 0.15, outputPerMTok: 0.6, cacheReadPerMTok: 0.075 },
  o3: { inputPerMTok: 2, outputPerMTok: 8, cacheReadPerMTok: 0.5 },
  "o4-mini": { inputPerMTok: 1.1, outputPerMTok: 4.4, cacheReadPerMTok: 0.275 },
  // DeepSeek (DeepSeek-V3.2 behind both ids; cache writes cost the cache-miss price)
  "deepseek-chat": { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 },
  "deepseek-reasoner": { inputPerMTok: 0.28, outputPerMTok: 0.42, cacheReadPerMTok: 0.028 },
});

/** A snapshot suffix after the model id: `-20250929`, `-2025-08-07` or `-latest`. */
const SNAPSHOT_SUFFIX = /-(?:\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/** Resolved prices per table and model id; `null` records a model the table does not price. */
const resolved = new WeakMap<ModelPricing, Map<string, ModelPrice | null>>();

/** The price of `model` in one table: its own key first, then the key without a snapshot suffix. */
function lookUp(table: ModelPricing, model: string): ModelPrice | undefined {
  let prices = resolved.get(table);
  if (prices === undefined) {
    prices = new Map();
    resolved.set(table, prices);
  }
  const known = prices.get(model);
  if (known !== undefined) return known ?? undefined;
  let price: ModelPrice | undefined;
  if (Object.hasOwn(table, model)) {
    price = table[model];
  } else {
    const base = model.replace(SNAPSHOT_SUFFIX, "");
    if (base !== model && Object.hasOwn(table, base)) price = table[base];
  }
  prices.set(model, price ?? null);
  return price;
}

/**
 * The price of `model` in `pricing` (the user's table first, then the built-in one, unless
 * `useBuiltin` is false) or `undefined` when neither table prices it. Matching follows
 * {@link ModelPricing}: the id itself, else the id without its snapshot suffix. Each answer is
 * kept per table and model id, so a repeated call costs two map lookups.
 *
 * @param model - The model id the request names, for example `"claude-sonnet-4-5-20250929"`.
 * @param pricing - The user's table (`AgentOptions.pricing`), or `undefined` for none.
 * @param useBuiltin - Whether to fall back on {@link builtinPricing}. Default: `true`.
 */
export function priceOf(
  model: string,
  pricing: ModelPricing | undefined,
  useBuiltin = true,
): ModelPrice | undefined {
  const own = pricing === undefined ? undefined : lookUp(pricing, model);
  if (own !== undefined || !useBuiltin) return own;
  return lookUp(builtinPricing, model);
}

/**
 * The cost in US dollars of `usage` at `price`: each of the four token counts of
 * {@link RunUsage} times its price (the cache prices default to the input price), over a
 * million. `inputTokens` must exclude cache reads and writes, as {@link RunUsage} does.
 *
 * @param usage - Token counts, of one call or of a whole run.
 * @param price - The model's prices, as {@link priceOf} returns them.
 */
export function costOf(usage: RunUsage, price: ModelPrice): number {
  const cacheRead = price.cacheReadPerMTok ?? price.inputPerMTok;
  const cacheWrite = price.cacheWritePerMTok ?? price.inputPerMTok;
  return (
    (usage.inputTokens * price.inputPerMTok +
      usage.outputTokens * price.outputPerMTok +
      usage.cacheReadInputTokens * cacheRead +
      usage.cacheCreationInputTokens * cacheWrite) /
    1_000_000
  );
}

/** The keys of a {@link ModelPrice}, required ones first. */
const PRICE_KEYS = ["inputPerMTok", "outputPerMTok", "cacheReadPerMTok", "cacheWritePerMTok"];
const REQUIRED_PRICE_KEYS = 2;

/** A value as a message shows it: strings quoted, objects named by kind. */
function shown(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "function") return "a function";
  return String(value);
}

/**
 * Checks a user's pricing table strictly: a plain object whose keys are non-empty model ids
 * and whose values are {@link ModelPrice} objects with finite, non-negative prices and no
 * other keys.
 *
 * @param pricing - The value given as `pricing`.
 * @param prefix - Who owns the option, at the start of every message. Default: `"AgentOptions:"`.
 * @throws `TypeError` naming the first entry and key at fault, for example
 *   `AgentOptions: pricing["gpt-5"].inputPerMTok must be a finite number ≥ 0, got -1.` or
 *   `AgentOptions: pricing["gpt-5"] has an unknown key "foo"; the keys are inputPerMTok,
 *   outputPerMTok, cacheReadPerMTok, cacheWritePerMTok.`
 */
export function checkPricing(
  pricing: unknown,
  prefix = "AgentOptions:",
): asserts pricing is ModelPricing {
  if (typeof pricing !== "object" || pricing === null || Array.isArray(pricing)) {
    throw new TypeError(
      `${prefix} pricing must be an object of prices by model id, got ${shown(pricing)}.`,
    );
  }
  for (const [model, price] of Object.entries(pricing)) {
    if (model === "") {
      throw new TypeError(
        `${prefix} pricing has an empty model id; key each price by its model id.`,
      );
    }
    const at = `${prefix} pricing[${JSON.stringify(model)}]`;
    if (typeof price !== "object" || price === null || Array.isArray(price)) {
      throw new TypeError(
        `${at} must be an object { inputPerMTok, outputPerMTok, cacheReadPerMTok?, cacheWritePerMTok? }, got ${shown(price)}.`,
      );
    }
    for (const key of Object.keys(price)) {
      if (!PRICE_KEYS.includes(key)) {
        throw new TypeError(
          `${at} has an unknown key ${JSON.stringify(key)}; the keys are ${PRICE_KEYS.join(", ")}.`,
        );
      }
    }
    PRICE_KEYS.forEach((key, index) => {
      const value = (price as Record<string, unknown>)[key];
      if (value === undefined && index >= REQUIRED_PRICE_KEYS) return;
      if (typeof value !== "number" || !Number.isFinite(value) || value < 0) {
        throw new TypeError(`${at}.${key} must be a finite number ≥ 0, got ${shown(value)}.`);
      }
    });
  }
}
