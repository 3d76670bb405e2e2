import { describeValue } from "@lattice/tools/internal";

/** What {@link plainJsonProblem} found: the first value JSON cannot keep as it is. */
export interface PlainJsonProblem {
  /** Names the value by its path and says what it is (`entries[0].at is a Date, not ...`). */
  readonly message: string;
  /** Whether the value is nested deeper than the bound (rather than not being JSON). */
  readonly tooDeep: boolean;
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Finds the first value under `value` that is not plain JSON: strings, finite numbers,
 * booleans, null, arrays (without holes of `undefined`) and plain objects (whose prototype is
 * `Object.prototype` or `null`) only; a property whose value is `undefined` is left out, as
 * `JSON.stringify` does. So a value that passes keeps its meaning through a JSON round trip,
 * and `JSON.stringify` can take it: no `toJSON` method, no `BigInt`, no cycle, no `Date` or
 * `Map` turned into something else. Objects and arrays nested deeper than `maxDepth` levels
 * (the top value is level 1) are refused too, so a cycle is found and the recursion is bounded.
 * Internal.
 *
 * @param value - The value.
 * @param path - How messages name the value (`entries[0]`, `input`).
 * @param maxDepth - The deepest nesting allowed.
 * @returns `undefined` when the value is plain JSON.
 */
export function plainJsonProblem(
  value: unknown,
  path: string,
  maxDepth: number,
): PlainJsonProblem | undefined {
  return problemAt(value, path, 0, maxDepth);
}

/** Whether a value is an object whose prototype is `Object.prototype` or `null`. Internal. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Names what a value is, for a message about a value that is not a plain object. Internal. */
export function describeObject(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null || typeof value !== "object") return describeValue(value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "an object with a prototype";
}

function problemAt(
  value: unknown,
  path: string,
  depth: number,
  maxDepth: number,
): PlainJsonProblem | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : found(path, `is ${value}`);
    case "object": {
      if (value === null) return undefined;
      if (depth >= maxDepth) {
        return {
          message: `${shortPath(path)} is nested more than ${maxDepth} levels deep (does it contain itself?)`,
          tooDeep: true,
        };
      }
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index];
          const itemPath = `${path}[${index}]`;
          if (item === undefined) return found(itemPath, "is undefined");
          const problem = problemAt(item, itemPath, depth + 1, maxDepth);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      if (!isPlainObject(value)) {
        return found(path, `is ${describeObject(value)}, not a plain object`);
      }
      for (const key of Object.keys(value)) {
        const item = value[key];
        if (item === undefined) continue;
        const problem = problemAt(item, `${path}${pathKey(key)}`, depth + 1, maxDepth);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case "function":
      return found(path, "is a function");
    default:
      return found(path, `is a ${typeof value}`);
  }
}

function found(path: string, what: string): PlainJsonProblem {
  return { message: `${shortPath(path)} ${what}`, tooDeep: false };
}

/** A key as a path segment (`.name`, or `["a key"]`), cut short when long. */
function pathKey(key: string): string {
  const shown = key.length > 40 ? `${key.slice(0, 37)}...` : key;
  return IDENTIFIER.test(shown) ? `.${shown}` : `[${JSON.stringify(shown)}]`;
}

/** A path as a message shows it: its start and end when it is long. */
function shortPath(path: string): string {
  return path.length > 160 ? `${path.slice(0, 80)}...${path.slice(-60)}` : path;
}

/**
 * Whether objects and arrays in `value` nest deeper than `maxDepth` levels (the top value is
 * level 1). It stops at the first level past the bound, so a value of any depth costs little,
 * and its recursion is as deep as `maxDepth` at most. Internal.
 *
 * @param value - The value, for example a tool input read from a stored log.
 * @param maxDepth - The deepest nesting allowed.
 */
export function nestsDeeperThan(value: unknown, maxDepth: number): boolean {
  return value !== null && typeof value === "object" && deeperThan(value, 1, maxDepth);
}

function deeperThan(value: object, depth: number, maxDepth: number): boolean {
  if (depth > maxDepth) return true;
  if (Array.isArray(value)) {
    for (const item of value) {
      if (item !== null && typeof item === "object" && deeperThan(item, depth + 1, maxDepth)) {
        return true;
      }
    }
    return false;
  }
  for (const key in value) {
    const item = (value as Record<string, unknown>)[key];
    if (item !== null && typeof item === "object" && deeperThan(item, depth + 1, maxDepth)) {
      return true;
    }
  }
  return false;
}
