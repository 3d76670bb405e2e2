import { InvalidOptionError, UnknownOptionError } from "../index.js";
import { assertKnownOptions, describeValue } from "../internal.js";

/**
 * Reads an optional positive-integer cap from an options object.
 *
 * @param prefix - Who owns the options, for example `readTool():`.
 * @param option - The option's name as the user wrote it (dotted when nested: `read.maxLines`).
 * @param value - The value given, or `undefined`.
 * @param fallback - The default.
 * @param max - The largest value allowed, if any.
 * @throws {@link InvalidOptionError} when the value is not a positive integer or is too large.
 */
export function positiveIntegerOption(
  prefix: string,
  option: string,
  value: unknown,
  fallback: number,
  max?: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value <= 0) {
    throw new InvalidOptionError(
      prefix,
      option,
      `must be a positive integer, received ${describeValue(value)}. Omit it for the default (${fallback}).`,
    );
  }
  if (max !== undefined && value > max) {
    throw new InvalidOptionError(
      prefix,
      option,
      `must be at most ${max}, received ${value}. Omit it for the default (${fallback}).`,
    );
  }
  return value;
}

/**
 * Checks a nested options object (`bash`, `read`, ...) strictly, naming unknown keys with
 * their dotted path: `builtinTools(): unknown option "read.maxLine". ...`.
 *
 * @throws {@link UnknownOptionError} for an unknown key.
 * @throws {@link InvalidOptionError} when the value is not a plain object.
 */
export function assertKnownNestedOptions(
  options: unknown,
  knownKeys: readonly string[],
  prefix: string,
  name: string,
): void {
  try {
    assertKnownOptions(options, knownKeys, prefix);
  } catch (error) {
    if (error instanceof UnknownOptionError) {
      throw new UnknownOptionError(prefix, `${name}.${error.option}`);
    }
    if (error instanceof InvalidOptionError) {
      throw new InvalidOptionError(
        prefix,
        name,
        `must be an object, received ${describeValue(options)}. Pass an object literal or omit it.`,
      );
    }
    throw error;
  }
}

/** Names an option for error text: `maxLines` alone, `read.maxLines` when nested under `read`. */
export function optionName(nest: string | undefined, key: string): string {
  return nest === undefined ? key : `${nest}.${key}`;
}

/** One cap of a built-in tool: its default and, if any, its upper bound. Internal. */
export interface CapSpec {
  readonly fallback: number;
  readonly max?: number;
}

/** The caps of one built-in tool, by option name. Internal. */
export type CapSpecs<Key extends string> = Readonly<Record<Key, CapSpec>>;

/** The checked values of a tool's caps, one number per cap. Internal. */
export type ResolvedCaps<Specs> = { readonly [Key in keyof Specs]: number };

/**
 * Checks every cap of a built-in tool with {@link positiveIntegerOption}, against its default
 * and bound. Internal.
 *
 * @param specs - The tool's caps table.
 * @param caps - The caps as the user gave them (own options or a nested `builtinTools` object).
 * @param prefix - Who owns the options, for example `readTool():`.
 * @param nest - The nested options object inside `builtinTools()` (`"read"`), if any.
 */
export function resolveCaps<Key extends string>(
  specs: CapSpecs<Key>,
  caps: Partial<Record<Key, unknown>> | undefined,
  prefix: string,
  nest?: string,
): ResolvedCaps<CapSpecs<Key>> {
  const resolved = {} as Record<Key, number>;
  for (const key of Object.keys(specs) as Key[]) {
    const { fallback, max } = specs[key];
    resolved[key] = positiveIntegerOption(
      prefix,
      optionName(nest, key),
      caps?.[key],
      fallback,
      max,
    );
  }
  return resolved;
}
