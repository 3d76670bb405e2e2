import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";

/**
 * How a batch's calls may overlap (T14, T15, T18): `"safe"` runs consecutive concurrency-safe
 * calls together and every other call alone; `"all"` runs every call together; `"sequential"`
 * runs one call at a time.
 */
export type ToolConcurrencyMode = "safe" | "all" | "sequential";

/**
 * The `toolConcurrency` option as the user writes it (T14). Both keys are optional.
 */
export interface ToolConcurrencyOptions {
  /** How calls may overlap. Default `"safe"`. */
  readonly mode?: ToolConcurrencyMode;
  /** The most handlers running at the same time; a positive integer. Default `10`. */
  readonly maxConcurrency?: number;
}

/** The `toolConcurrency` settings after validation, with every default filled in. */
export interface ResolvedToolConcurrency {
  /** How calls may overlap. */
  readonly mode: ToolConcurrencyMode;
  /** The most handlers running at the same time; a positive integer. */
  readonly maxConcurrency: number;
}

/** The modes `toolConcurrency.mode` accepts, in the order error messages list them. */
export const TOOL_CONCURRENCY_MODES: readonly ToolConcurrencyMode[] = Object.freeze([
  "safe",
  "all",
  "sequential",
]);

/** The settings used when `toolConcurrency` is omitted: `{ mode: "safe", maxConcurrency: 10 }`. */
export const DEFAULT_TOOL_CONCURRENCY: ResolvedToolConcurrency = Object.freeze({
  mode: "safe",
  maxConcurrency: 10,
});

const KEYS: ReadonlySet<string> = new Set(["mode", "maxConcurrency"]);

/**
 * Validates the `toolConcurrency` option when an agent is created (T14) and fills in defaults.
 *
 * @param settings - The option as given; `undefined` means all defaults. A key set to
 *   `undefined` takes its default.
 * @param prefix - Who owns the option, printed first in messages. Default `"AgentOptions:"`.
 * @returns Frozen settings; defaults `mode: "safe"`, `maxConcurrency: 10`.
 * @throws `InvalidOptionError` (from `@lattice/tools`) when `settings` is not an object, `mode` is not one of
 *   `"safe"`, `"all"`, `"sequential"`, or `maxConcurrency` is not a positive integer; the
 *   message names the bad value and what is allowed.
 * @throws `UnknownOptionError` (from `@lattice/tools`) for an unknown key (T31), as
 *   `AgentOptions: toolConcurrency: unknown option "<key>". Check for a typo, ...`.
 */
export function resolveToolConcurrency(
  settings: unknown,
  prefix = "AgentOptions:",
): ResolvedToolConcurrency {
  if (settings === undefined) return DEFAULT_TOOL_CONCURRENCY;
  if (settings === null || typeof settings !== "object" || Array.isArray(settings)) {
    throw new InvalidOptionError(
      prefix,
      "toolConcurrency",
      `must be an object { mode?, maxConcurrency? }, received ${describeValue(settings)}. Omit it for the default { mode: "safe", maxConcurrency: 10 }.`,
    );
  }
  assertKnownOptions(settings, KEYS, `${prefix} toolConcurrency:`);
  const { mode, maxConcurrency } = settings as { mode?: unknown; maxConcurrency?: unknown };
  if (mode !== undefined && !TOOL_CONCURRENCY_MODES.includes(mode as ToolConcurrencyMode)) {
    throw new InvalidOptionError(
      prefix,
      "toolConcurrency.mode",
      `must be "safe", "all" or "sequential", received ${describeValue(mode)}. Omit it for the default "safe".`,
    );
  }
  if (
    maxConcurrency !== undefined &&
    !(Number.isSafeInteger(maxConcurrency) && (maxConcurrency as number) >= 1)
  ) {
    throw new InvalidOptionError(
      prefix,
      "toolConcurrency.maxConcurrency",
      `must be a positive integer (1, 2, 3, ...), received ${describeValue(maxConcurrency)}. Omit it for the default 10.`,
    );
  }
  if (mode === undefined && maxConcurrency === undefined) return DEFAULT_TOOL_CONCURRENCY;
  return Object.freeze({
    mode: (mode as ToolConcurrencyMode | undefined) ?? DEFAULT_TOOL_CONCURRENCY.mode,
    maxConcurrency:
      (maxConcurrency as number | undefined) ?? DEFAULT_TOOL_CONCURRENCY.maxConcurrency,
  });
}
