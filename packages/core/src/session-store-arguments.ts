// The argument checks every Lattice store makes, exported for store authors so that all stores
// refuse the same arguments with the same messages.
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { SessionEntry } from "./session-store.js";

/** Deeper than this, a value is refused: it is almost surely a cycle. */
const MAX_DEPTH = 1000;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

/**
 * Checks a session id argument: a non-empty string. For `SessionStore` implementations: every
 * Lattice store checks its arguments with these helpers, so all refuse the same input alike.
 *
 * @param prefix - Who checks, printed first (`memorySessionStore append():`).
 * @throws `InvalidOptionError` otherwise.
 */
export function checkSessionId(prefix: string, sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "sessionId",
      `must be a non-empty string, received ${describeValue(sessionId)}.`,
    );
  }
}

/**
 * Checks an `expectedVersion` argument: a non-negative safe integer.
 *
 * @param prefix - Who checks, printed first.
 * @throws `InvalidOptionError` otherwise.
 */
export function checkExpectedVersion(
  prefix: string,
  expectedVersion: unknown,
): asserts expectedVersion is number {
  if (!Number.isSafeInteger(expectedVersion) || (expectedVersion as number) < 0) {
    throw new InvalidOptionError(
      prefix,
      "expectedVersion",
      `must be a non-negative integer (the version last loaded or appended to; 0 for a new session), received ${describeValue(expectedVersion)}.`,
    );
  }
}

/**
 * Checks the entries of an append and returns each as JSON text, in order. Every entry must be
 * a plain object holding only JSON values (strings, finite numbers, booleans, null, arrays and
 * plain objects), so that what is loaded back equals what was appended. A property whose value
 * is `undefined` is left out, as `JSON.stringify` does.
 *
 * @param prefix - Who checks, printed first.
 * @throws `InvalidOptionError` when `entries` is not a non-empty array, or an entry is
 *   not a plain JSON object; the message names the first bad value by its path.
 */
export function serializeSessionEntries(prefix: string, entries: unknown): string[] {
  if (!Array.isArray(entries) || entries.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "entries",
      `must be a non-empty array of JSON objects, received ${describeValue(entries)}.`,
    );
  }
  const texts = new Array<string>(entries.length);
  for (let index = 0; index < entries.length; index++) {
    const entry: unknown = entries[index];
    const path = `entries[${index}]`;
    const problem = isPlainObject(entry)
      ? nonJsonAt(entry, path, 0)
      : `${path} is ${describeObject(entry)}, not a plain object`;
    if (problem !== undefined) {
      throw new InvalidOptionError(
        prefix,
        "entries",
        `must hold plain JSON objects: ${problem}. Entries may contain strings, finite numbers, booleans, null, arrays and plain objects only.`,
      );
    }
    texts[index] = JSON.stringify(entry as SessionEntry);
  }
  return texts;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

/** Names what a value is, for a message about a value that is not a plain object. */
function describeObject(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (value === null || typeof value !== "object") return describeValue(value);
  const name = (value as { constructor?: { name?: unknown } }).constructor?.name;
  return typeof name === "string" && name !== "" ? `a ${name}` : "an object with a prototype";
}

/** Describes the first value under `value` that JSON cannot keep, or `undefined`. */
function nonJsonAt(value: unknown, path: string, depth: number): string | undefined {
  switch (typeof value) {
    case "string":
    case "boolean":
      return undefined;
    case "number":
      return Number.isFinite(value) ? undefined : `${path} is ${value}`;
    case "object": {
      if (value === null) return undefined;
      if (depth >= MAX_DEPTH) {
        return `${path} is nested more than ${MAX_DEPTH} levels deep (does it contain itself?)`;
      }
      if (Array.isArray(value)) {
        for (let index = 0; index < value.length; index++) {
          const item: unknown = value[index];
          const itemPath = `${path}[${index}]`;
          if (item === undefined) return `${itemPath} is undefined`;
          const problem = nonJsonAt(item, itemPath, depth + 1);
          if (problem !== undefined) return problem;
        }
        return undefined;
      }
      if (!isPlainObject(value)) return `${path} is ${describeObject(value)}, not a plain object`;
      for (const key of Object.keys(value)) {
        const item = value[key];
        if (item === undefined) continue;
        const problem = nonJsonAt(
          item,
          IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`,
          depth + 1,
        );
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
    case "function":
      return `${path} is a function`;
    default:
      return `${path} is a ${typeof value}`;
  }
}
