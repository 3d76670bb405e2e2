// The argument checks every Lattice store makes, exported for store authors so that all stores
// refuse the same arguments with the same messages.
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { describeObject, isPlainObject, plainJsonProblem } from "./plain-json-problem.js";
import type { SessionAppendOptions, SessionEntry } from "./session-store.js";

/** Deeper than this, a value is refused: it is almost surely a cycle. */
const MAX_DEPTH = 1000;

/**
 * Checks a session id argument: a non-empty string of well-formed UTF-16 (no lone surrogate,
 * H25). For `SessionStore` implementations: every Lattice store checks its arguments with these
 * helpers, so all refuse the same input alike; `agent.run()`, `query()`, `resume()`, `step()`
 * and `endRun()` check with it too. An id with a lone surrogate cannot round-trip through UTF-8
 * (a database, a Redis key): it would be kept as U+FFFD, listed under an id that loads
 * nothing; so it never enters.
 *
 * @param prefix - Who checks, printed first (`memorySessionStore append():`).
 * @throws `InvalidOptionError` otherwise, naming the option `sessionId`.
 */
export function checkSessionId(prefix: string, sessionId: unknown): asserts sessionId is string {
  if (typeof sessionId !== "string" || sessionId.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "sessionId",
      `must be a non-empty string, received ${describeValue(sessionId)}.`,
    );
  }
  if (!(sessionId as unknown as WellFormedString).isWellFormed()) {
    const index = loneSurrogateIndex(sessionId);
    const unit = sessionId.charCodeAt(index).toString(16).toUpperCase();
    throw new InvalidOptionError(
      prefix,
      "sessionId",
      `must be well-formed UTF-16 text: it holds a lone surrogate (U+${unit} at index ${index}), which no store can keep as it is (UTF-8 turns it into U+FFFD). Use ids of letters, digits and punctuation, or a random id.`,
    );
  }
}

/** `String.prototype.isWellFormed` (Node 20), which the ES2022 lib does not declare. */
interface WellFormedString {
  isWellFormed(): boolean;
}

/** The index of the first lone surrogate of a string that is not well formed. */
function loneSurrogateIndex(text: string): number {
  for (let index = 0; index < text.length; index++) {
    const unit = text.charCodeAt(index);
    if (unit < 0xd800 || unit > 0xdfff) continue;
    const next = text.charCodeAt(index + 1);
    if (unit <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) {
      index++;
      continue;
    }
    return index;
  }
  return 0;
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
 * @param fence - The append's fence, from {@link checkAppendOptions}: with one, `entries` may
 *   be empty (the append only raises the session's fence, H28). A store that declares
 *   `fencedAppends` must pass it: `@lattice/bullmq` workers raise the fence with an append of
 *   no entries before each step, which the two-argument form refuses.
 * @throws `InvalidOptionError` when `entries` is not an array, is empty without a fence, or
 *   an entry is not a plain JSON object; the message names the first bad value by its path.
 */
export function serializeSessionEntries(
  prefix: string,
  entries: unknown,
  fence?: number,
): string[] {
  if (!Array.isArray(entries) || (entries.length === 0 && fence === undefined)) {
    throw new InvalidOptionError(
      prefix,
      "entries",
      `must be a non-empty array of JSON objects (empty only with a fence), received ${describeValue(entries)}.`,
    );
  }
  const texts = new Array<string>(entries.length);
  for (let index = 0; index < entries.length; index++) {
    const entry: unknown = entries[index];
    const path = `entries[${index}]`;
    const problem = isPlainObject(entry)
      ? plainJsonProblem(entry, path, MAX_DEPTH)?.message
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

/**
 * Checks the `options` argument of `SessionStore.append` and returns its fence: `undefined`
 * when there are no options or no fence (H28).
 *
 * @param prefix - Who checks, printed first.
 * @throws `UnknownOptionError` on a key other than `fence`; `InvalidOptionError` when
 *   `options` is not an object or `fence` is not a non-negative safe integer.
 */
export function checkAppendOptions(prefix: string, options: unknown): number | undefined {
  if (options === undefined) return undefined;
  assertKnownOptions(options, APPEND_OPTION_KEYS, prefix);
  const fence = (options as SessionAppendOptions).fence;
  if (fence !== undefined && (!Number.isSafeInteger(fence) || fence < 0)) {
    throw new InvalidOptionError(
      prefix,
      "fence",
      `must be a non-negative integer (the generation of the lease the append is made under), received ${describeValue(fence)}.`,
    );
  }
  return fence;
}

const APPEND_OPTION_KEYS: ReadonlySet<string> = new Set(["fence"]);
