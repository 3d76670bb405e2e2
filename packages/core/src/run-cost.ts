import type { LoggedRun } from "./logged-run.js";
import { costOf, type ModelPricing, priceOf } from "./model-pricing.js";
import type { ModelUsageTotals, RunUsage } from "./sdk-message.js";
import { addUsage, type UsageTotals, zeroUsage } from "./usage-totals.js";

/**
 * A run's usage per model (L10): the replies that name their model, the agent's model for the
 * rest of the run's own calls, and what child runs reported by model. Internal.
 */
export function usageByModel(run: LoggedRun, model: string): Map<string, UsageTotals> {
  const byModel = new Map<string, UsageTotals>();
  const own: UsageTotals = { ...zeroUsage() };
  addUsage(own, run.usage);
  const children = run.children;
  if (children !== undefined) subtract(own, children.usage);
  for (const [named, usage] of run.byModel ?? []) {
    byModel.set(named, { ...usage });
    subtract(own, usage);
  }
  if (own.inputTokens + own.outputTokens + own.cacheReadInputTokens > 0) {
    merge(byModel, model, own);
  }
  if (children !== undefined)
    for (const [named, usage] of children.byModel) {
      merge(byModel, named, usage);
    }
  return byModel;
}

/**
 * The cost of a run's own model calls plus what its child runs reported, in US dollars, or
 * `undefined` when some model that used tokens has no known price (L11). Internal.
 */
export function runCost(
  run: LoggedRun,
  model: string,
  pricing: ModelPricing | undefined,
): number | undefined {
  const children = run.children;
  if (children?.unpriced === true) return undefined;
  let cost = children?.costUsd ?? 0;
  const own: UsageTotals = { ...zeroUsage() };
  addUsage(own, run.usage);
  if (children !== undefined) subtract(own, children.usage);
  for (const [named, usage] of run.byModel ?? []) {
    const price = priceOf(named, pricing);
    if (price === undefined) return undefined;
    cost += costOf(usage, price);
    subtract(own, usage);
  }
  if (own.inputTokens + own.outputTokens + own.cacheReadInputTokens > 0) {
    const price = priceOf(model, pricing);
    if (price === undefined) return undefined;
    cost += costOf(own, price);
  }
  return cost;
}

/**
 * The usage a finished run reports: its totals, with `costUsd` when every price is known and
 * `byModel` when more than one model served it (L10, L11). Internal.
 *
 * @param usage - The totals (the log's, plus child usage not yet logged).
 */
export function reportedUsage(
  run: LoggedRun,
  usage: UsageTotals,
  model: string,
  pricing: ModelPricing | undefined,
): RunUsage {
  const reported: RunUsage = {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadInputTokens: usage.cacheReadInputTokens,
    cacheCreationInputTokens: usage.cacheCreationInputTokens,
  };
  const cost = runCost(run, model, pricing);
  const multiple = run.byModel !== undefined || (run.children?.byModel.size ?? 0) > 0;
  let byModel: { [model: string]: ModelUsageTotals } | undefined;
  if (multiple) {
    const models = usageByModel(run, model);
    if (models.size > 1) {
      byModel = {};
      for (const [named, totals] of models) {
        const price = priceOf(named, pricing);
        byModel[named] =
          price === undefined ? totals : { ...totals, costUsd: costOf(totals, price) };
      }
    }
  }
  return {
    ...reported,
    ...(cost !== undefined ? { costUsd: roundUsd(cost) } : {}),
    ...(byModel !== undefined ? { byModel } : {}),
  };
}

/** Dollars to a millionth of a cent, so sums print cleanly. */
function roundUsd(value: number): number {
  return Math.round(value * 1e8) / 1e8;
}

function subtract(totals: UsageTotals, less: RunUsage): void {
  totals.inputTokens -= less.inputTokens;
  totals.outputTokens -= less.outputTokens;
  totals.cacheReadInputTokens -= less.cacheReadInputTokens ?? 0;
  totals.cacheCreationInputTokens -= less.cacheCreationInputTokens ?? 0;
}

function merge(byModel: Map<string, UsageTotals>, model: string, usage: RunUsage): void {
  const totals = byModel.get(model);
  if (totals === undefined) byModel.set(model, { ...zeroUsage(), ...pick(usage) });
  else addUsage(totals, usage);
}

function pick(usage: RunUsage): UsageTotals {
  return {
    inputTokens: usage.inputTokens,
    outputTokens: usage.outputTokens,
    cacheReadInputTokens: usage.cacheReadInputTokens ?? 0,
    cacheCreationInputTokens: usage.cacheCreationInputTokens ?? 0,
  };
}
