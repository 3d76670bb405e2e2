import type {
  JsonValue,
  SessionCheckpoint,
  SessionEntry,
  SessionSnapshot,
} from "../session-store.js";

/** Throws the failure of a conformance check. */
export function fail(message: string): never {
  throw new Error(message);
}

/** A value as short JSON text, for failure messages. */
export function show(value: unknown, limit = 160): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch {
    text = undefined;
  }
  if (text === undefined) return String(value);
  return text.length > limit ? `${text.slice(0, limit - 3)}... (${text.length} chars)` : text;
}

/** The first place two JSON texts differ, shown with a little context on both sides. */
function firstDifference(actual: string, expected: string): string {
  let index = 0;
  while (index < actual.length && index < expected.length && actual[index] === expected[index]) {
    index++;
  }
  const from = Math.max(0, index - 40);
  return `they differ at character ${index} of the JSON text: got ${show(actual.slice(from, index + 40))}, expected ${show(expected.slice(from, index + 40))}`;
}

/**
 * Checks that loaded entries equal the expected ones exactly: same count, and each entry with
 * the same JSON text (so values, types and key order all count).
 */
export function expectEntries(
  actual: readonly SessionEntry[],
  expected: readonly SessionEntry[],
  what: string,
): void {
  if (!Array.isArray(actual)) fail(`${what}: entries is ${show(actual)}, not an array.`);
  if (actual.length !== expected.length) {
    fail(`${what}: got ${actual.length} entries, expected ${expected.length}.`);
  }
  for (let index = 0; index < expected.length; index++) {
    const got = JSON.stringify(actual[index]);
    const want = JSON.stringify(expected[index]);
    if (got !== want) {
      fail(
        `${what}: entry ${index} is not the entry appended there; ${firstDifference(got ?? "undefined", want)}.`,
      );
    }
  }
}

/** Checks a whole snapshot: its entries exactly, and its version equal to their count. */
export function expectSnapshot(
  snapshot: SessionSnapshot,
  expected: readonly SessionEntry[],
  what: string,
): void {
  if (snapshot === null || typeof snapshot !== "object") {
    fail(`${what}: load() resolved with ${show(snapshot)}, not { entries, version }.`);
  }
  expectEntries(snapshot.entries, expected, what);
  if (snapshot.version !== expected.length) {
    fail(
      `${what}: version is ${show(snapshot.version)}, expected ${expected.length} (the number of entries appended).`,
    );
  }
}

/** Checks that a JSON value equals the expected one exactly: the same JSON text, key order included. */
export function expectJson(actual: unknown, expected: JsonValue, what: string): void {
  const got = JSON.stringify(actual);
  const want = JSON.stringify(expected);
  if (got !== want) fail(`${what}: ${firstDifference(got ?? "undefined", want)}.`);
}

/**
 * Checks a snapshot that `load(sessionId, { fromCheckpoint: true })` returned (C8): with
 * `checkpoint`, that the checkpoint has its version and exactly its state, that `entries` are
 * exactly those after it (`log.slice(checkpoint.version)`), and that the version is the whole
 * log's; without, that there is no checkpoint and every entry of `log` is there.
 *
 * @param log - Every entry of the session, in append order.
 */
export function expectFromCheckpoint(
  snapshot: SessionSnapshot,
  checkpoint: SessionCheckpoint | undefined,
  log: readonly SessionEntry[],
  what: string,
): void {
  if (snapshot === null || typeof snapshot !== "object") {
    fail(`${what}: load() resolved with ${show(snapshot)}, not { entries, version }.`);
  }
  if (checkpoint === undefined) {
    if (snapshot.checkpoint !== undefined) {
      fail(
        `${what}: the snapshot has the checkpoint ${show(snapshot.checkpoint)}, expected none (and every entry).`,
      );
    }
    expectSnapshot(snapshot, log, what);
    return;
  }
  const got = snapshot.checkpoint;
  if (got === null || typeof got !== "object") {
    fail(
      `${what}: the snapshot's checkpoint is ${show(got)}, expected the checkpoint at version ${checkpoint.version} (C8).`,
    );
  }
  expectValue(got.version, checkpoint.version, `${what}: the checkpoint's version`);
  expectJson(got.state, checkpoint.state, `${what}: the checkpoint's state`);
  expectEntries(
    snapshot.entries,
    log.slice(checkpoint.version),
    `${what}: the entries after the checkpoint at ${checkpoint.version}`,
  );
  expectValue(snapshot.version, log.length, `${what}: the version (every entry of the session)`);
}

/**
 * Checks that a call rejects with an error of one of the given codes (`"invalid_option"`,
 * `"unknown_option"`), a bad argument refused.
 */
export async function expectRefused(
  call: () => Promise<unknown>,
  codes: readonly string[],
  what: string,
): Promise<void> {
  let value: unknown;
  try {
    value = await call();
  } catch (error) {
    if (!codes.some((code) => hasCode(error, code))) {
      fail(
        `${what}: rejected with ${error instanceof Error ? `${error.name}: ${error.message}` : show(error)}, expected an error with code ${codes.map((code) => show(code)).join(" or ")}.`,
      );
    }
    return;
  }
  fail(
    `${what}: resolved with ${show(value)}; a bad argument must be refused with an InvalidOptionError (code ${codes.map((code) => show(code)).join(" or ")}).`,
  );
}

/** Checks a value against an expected one (numbers, strings, booleans). */
export function expectValue(actual: unknown, expected: unknown, what: string): void {
  if (!Object.is(actual, expected))
    fail(`${what}: got ${show(actual)}, expected ${show(expected)}.`);
}

/** Whether an error carries a given `code`. */
function hasCode(error: unknown, code: string): boolean {
  return error !== null && typeof error === "object" && (error as { code?: unknown }).code === code;
}

/** Whether an error is a session conflict (code `"session_conflict"`). */
export function isConflict(error: unknown): boolean {
  return hasCode(error, "session_conflict");
}

/** Whether an error is a fenced append's refusal (code `"session_fenced"`, H28). */
export function isFenced(error: unknown): boolean {
  return hasCode(error, "session_fenced");
}

/** A refusal an append must reject with: its class name, code and fields. */
interface Refusal {
  /** The error's `name`, such as `"SessionConflictError"`. */
  readonly name: string;
  readonly code: string;
  /** Fields the error must carry, checked in order. */
  readonly fields: { readonly [field: string]: unknown };
  /** The one field a store may leave `undefined` (it may not know it). */
  readonly optional: string;
  /** How the append was called, for the message when it resolved. */
  readonly call: string;
  /** What the store held that the append did not match: `"the session's version was 1"`. */
  readonly although: string;
  /** The contract, for the message when it resolved: `"compare-and-append, R8"`. */
  readonly clause: string;
  /** What to check, for the message when it rejected with another error; `""` for nothing. */
  readonly hint: string;
}

/** Checks that an append rejects with a given refusal and nothing else. */
async function expectRefusal(
  append: Promise<number>,
  refusal: Refusal,
  what: string,
): Promise<void> {
  let version: number;
  try {
    version = await append;
  } catch (error) {
    if (!hasCode(error, refusal.code)) {
      fail(
        `${what}: append rejected with ${error instanceof Error ? `${error.name}: ${error.message}` : show(error)}, expected a ${refusal.name} (code ${show(refusal.code)})${refusal.hint === "" ? "" : `: ${refusal.hint}`}.`,
      );
    }
    const refused = error as Record<string, unknown>;
    expectValue(refused.name, refusal.name, `${what}: the refusal's name`);
    for (const [field, expected] of Object.entries(refusal.fields)) {
      if (field === refusal.optional && refused[field] === undefined) continue;
      expectValue(refused[field], expected, `${what}: the refusal's ${field}`);
    }
    return;
  }
  fail(
    `${what}: ${refusal.call} resolved with ${show(version)} although ${refusal.although}; it must reject with a ${refusal.name} and append nothing (${refusal.clause}).`,
  );
}

/**
 * Checks that an append rejects with a `SessionConflictError` for the right session and
 * versions.
 */
export function expectConflict(
  append: Promise<number>,
  sessionId: string,
  expectedVersion: number,
  actualVersion: number,
  what: string,
): Promise<void> {
  return expectRefusal(
    append,
    {
      name: "SessionConflictError",
      code: "session_conflict",
      fields: { sessionId, expectedVersion, actualVersion },
      optional: "actualVersion",
      call: `append(${show(sessionId)}, ${expectedVersion}, ...)`,
      although: `the session's version was ${actualVersion}`,
      clause: "compare-and-append, R8",
      hint: "",
    },
    what,
  );
}

/**
 * Checks that a fenced append rejects with a `SessionFencedError` for the right session and
 * fences (H28).
 */
export function expectFenced(
  append: Promise<number>,
  sessionId: string,
  fence: number,
  currentFence: number,
  what: string,
): Promise<void> {
  return expectRefusal(
    append,
    {
      name: "SessionFencedError",
      code: "session_fenced",
      fields: { sessionId, fence, currentFence },
      optional: "currentFence",
      call: `append(${show(sessionId)}, ..., { fence: ${fence} })`,
      although: `the session's fence was ${currentFence}`,
      clause:
        "a fenced compare-and-append, H28: keep the highest fence each session's appends carried",
      hint: `the append's fence ${fence} is lower than the session's ${currentFence}, which the store must check before the version`,
    },
    what,
  );
}
