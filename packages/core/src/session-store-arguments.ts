// The argument checks every Lattice store makes, exported for store authors so that all stores
// refuse the same arguments with the same messages.
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { describeObject, isPlainObject, plainJsonProblem } from "./plain-json-problem.js";
import type {
  SessionAppendOptions,
  SessionCheckpoint,
  SessionEntry,
  SessionLoadOptions,
  SessionStore,
} from "./session-store.js";

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

const LOAD_OPTION_KEYS: ReadonlySet<string> = new Set(["fromCheckpoint"]);
const CHECKPOINT_KEYS: ReadonlySet<string> = new Set(["version", "state"]);
/** Deeper than this, a state is refused: it is almost surely a cycle (as for entries). */
const MAX_CHECKPOINT_DEPTH = 1000;

/**
 * Checks the options of {@link SessionStore.load} strictly and says whether to read from the
 * session's checkpoint (C8): what a store calls first in its `load`, so that it refuses bad
 * options with the same messages as Lattice's stores.
 *
 * @param prefix - Starts the error message, for example `"myStore load():"`.
 * @param options - The options as given (`undefined` is fine).
 * @returns `true` for `{ fromCheckpoint: true }`.
 * @throws `UnknownOptionError` for a key other than `fromCheckpoint`; `InvalidOptionError` when
 *   `fromCheckpoint` is not a boolean.
 */
export function checkLoadOptions(prefix: string, options: unknown): boolean {
  if (options === undefined) return false;
  assertKnownOptions(options, LOAD_OPTION_KEYS, prefix);
  const { fromCheckpoint } = options as SessionLoadOptions;
  if (fromCheckpoint !== undefined && typeof fromCheckpoint !== "boolean") {
    throw new InvalidOptionError(
      prefix,
      "fromCheckpoint",
      `must be a boolean (true to read from the session's latest checkpoint, C8), received ${describeValue(fromCheckpoint)}.`,
    );
  }
  return fromCheckpoint === true;
}

/**
 * Checks the checkpoint argument of {@link SessionStore.saveCheckpoint} (C8) and serializes its
 * state: `{ version, state }` only, the version an integer ≥ 1 and the state plain JSON (as an
 * entry's values must be). What a store calls first in its `saveCheckpoint`.
 *
 * @param prefix - Starts the error message, for example `"myStore saveCheckpoint():"`.
 * @param checkpoint - The checkpoint as given.
 * @returns The version, and the state as JSON text.
 * @throws `InvalidOptionError` naming `checkpoint`, `checkpoint.version` or `checkpoint.state`
 *   (and, for a state, the first value that is not JSON by its path).
 */
export function serializeCheckpoint(
  prefix: string,
  checkpoint: unknown,
): { readonly version: number; readonly text: string } {
  if (checkpoint === null || typeof checkpoint !== "object" || Array.isArray(checkpoint)) {
    throw new InvalidOptionError(
      prefix,
      "checkpoint",
      `must be an object { version, state }, received ${describeValue(checkpoint)}.`,
    );
  }
  const unknown = Object.keys(checkpoint).find((key) => !CHECKPOINT_KEYS.has(key));
  if (unknown !== undefined) {
    throw new InvalidOptionError(
      prefix,
      "checkpoint",
      `must hold only version and state, received the key ${JSON.stringify(unknown)}.`,
    );
  }
  const { version, state } = checkpoint as SessionCheckpoint;
  if (!Number.isSafeInteger(version) || version < 1) {
    throw new InvalidOptionError(
      prefix,
      "checkpoint.version",
      `must be an integer >= 1 (how many of the session's entries the state covers), received ${describeValue(version)}.`,
    );
  }
  const problem =
    state === undefined
      ? "checkpoint.state is undefined"
      : plainJsonProblem(state, "checkpoint.state", MAX_CHECKPOINT_DEPTH)?.message;
  if (problem !== undefined) {
    throw new InvalidOptionError(
      prefix,
      "checkpoint.state",
      `must be JSON: ${problem}. A state may contain strings, finite numbers, booleans, null, arrays and plain objects only.`,
    );
  }
  return { version, text: JSON.stringify(state) };
}
