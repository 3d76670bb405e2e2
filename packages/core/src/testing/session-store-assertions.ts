import type { SessionEntry, SessionSnapshot } from "../session-store.js";

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

/** Checks a value against an expected one (numbers, strings, booleans). */
export function expectValue(actual: unknown, expected: unknown, what: string): void {
  if (!Object.is(actual, expected))
    fail(`${what}: got ${show(actual)}, expected ${show(expected)}.`);
}

/** Whether an error is a session conflict (code `"session_conflict"`). */
export function isConflict(error: unknown): boolean {
  return (
    error !== null &&
    typeof error === "object" &&
    (error as { code?: unknown }).code === "session_conflict"
  );
}

/**
 * Checks that an append rejects with a `SessionConflictError` for the right session and
 * versions.
 */
export async function expectConflict(
  append: Promise<number>,
  sessionId: string,
  expectedVersion: number,
  actualVersion: number,
  what: string,
): Promise<void> {
  let version: number;
  try {
    version = await append;
  } catch (error) {
    if (!isConflict(error)) {
      fail(
        `${what}: append rejected with ${error instanceof Error ? `${error.name}: ${error.message}` : show(error)}, expected a SessionConflictError (code "session_conflict").`,
      );
    }
    const conflict = error as {
      name?: unknown;
      sessionId?: unknown;
      expectedVersion?: unknown;
      actualVersion?: unknown;
    };
    expectValue(conflict.name, "SessionConflictError", `${what}: the conflict's name`);
    expectValue(conflict.sessionId, sessionId, `${what}: the conflict's sessionId`);
    expectValue(
      conflict.expectedVersion,
      expectedVersion,
      `${what}: the conflict's expectedVersion`,
    );
    if (conflict.actualVersion !== undefined) {
      expectValue(conflict.actualVersion, actualVersion, `${what}: the conflict's actualVersion`);
    }
    return;
  }
  fail(
    `${what}: append(${show(sessionId)}, ${expectedVersion}, ...) resolved with ${show(version)} although the session's version was ${actualVersion}; it must reject with a SessionConflictError and append nothing (compare-and-append, R8).`,
  );
}
