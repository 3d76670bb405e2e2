import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import type { JsonValue, SessionCheckpoint, SessionEntry, SessionStore } from "../session-store.js";
import {
  expectConflict,
  expectEntries,
  expectFenced,
  expectFromCheckpoint,
  expectRefused,
  expectSnapshot,
  expectValue,
  fail,
  isConflict,
  isFenced,
  show,
} from "./session-store-assertions.js";

/** One check of the session store conformance suite: a name and a function that throws on failure. */
export interface SessionStoreCheck {
  /**
   * What the check proves, starting with the clause: `"R12: ..."`, `"H28: ..."` for fencing, or
   * `"C8: ..."` for checkpoints.
   */
  readonly name: string;
  /** Runs the check on a fresh store; rejects with an `Error` saying what went wrong. */
  readonly run: () => Promise<void>;
}

/** Options of {@link sessionStoreConformance}. */
export interface SessionStoreConformanceOptions<S extends SessionStore = SessionStore> {
  /**
   * Closes `store` (if it needs closing) and opens a new store over the same data, as a new
   * process would. When given, the suite checks that entries survive a reopen; leave it out
   * for a store that keeps nothing beyond its own lifetime (such as `memorySessionStore()`).
   */
  readonly reopen?: (store: S) => S | Promise<S>;
}

/** A function that registers one test, such as vitest's or node:test's `it`. */
export type DefineSessionStoreCheck = (name: string, run: () => Promise<void>) => unknown;

const OPTION_KEYS = ["reopen"] as const;
const WRITERS = 20;

/**
 * The conformance suite every {@link SessionStore} must pass (R12), as a list of framework-free
 * checks: ordering, versions, compare-and-append under concurrent writers, atomic multi-entry
 * appends, reload after reopen, 1 MB entries, unicode, exact JSON round trips, copies,
 * deletion, many sessions, and independent sessions; fenced appends (H28): the highest
 * fence kept per session and checked before the version, in the same atomic step, appends of
 * no entries that only raise it, unfenced appends left alone, deletion and reopen; and
 * checkpoints (C8): the latest checkpoint kept per session, never an older one over a newer one
 * nor one beyond the session's entries, loaded with only the entries after it and in the same
 * atomic step, its state round-tripping exactly, through a reopen, gone with a delete, under
 * racing appends and saves, and bad arguments refused. The `C8:` checks test a store that
 * declares `checkpoints: true` and pass at once for one that does not (checkpoints are
 * optional); one of them fails a store that declares it without `saveCheckpoint`.
 *
 * Each check calls `makeStore()` for a store of its own, closes it at the end (when it has
 * `close`), and uses session ids with a random prefix, so a store over a shared database works
 * too (the list checks look only at their own ids). A check rejects with an `Error` whose
 * message says what the store did and what was expected.
 *
 * @param makeStore - Creates a store to check.
 * @param options - `reopen`, to check that entries survive a reopen.
 * @returns The checks, each `{ name, run }`; every name starts with `"R12: "`, `"H28: "` for
 *   the fencing checks, or `"C8: "` for the checkpoint checks.
 * @throws `InvalidOptionError` when `makeStore` is not a function or an option is unknown or
 *   not a function.
 */
export function sessionStoreConformance<S extends SessionStore>(
  makeStore: () => S | Promise<S>,
  options?: SessionStoreConformanceOptions<S>,
): readonly SessionStoreCheck[] {
  const prefix = "sessionStoreConformance:";
  if (typeof makeStore !== "function") {
    throw new InvalidOptionError(
      prefix,
      "makeStore",
      `must be a function that creates a SessionStore, received ${describeValue(makeStore)}.`,
    );
  }
  assertKnownOptions(options, OPTION_KEYS, prefix);
  const reopen = options?.reopen;
  if (reopen !== undefined && typeof reopen !== "function") {
    throw new InvalidOptionError(
      prefix,
      "reopen",
      `must be a function (store) => store, received ${describeValue(reopen)}.`,
    );
  }

  /** Runs `body` with a fresh store, and closes whichever store is current at the end. */
  const withStore =
    (
      body: (store: S, ids: (name: string) => string, reopened: () => Promise<S>) => Promise<void>,
    ) =>
    async (): Promise<void> => {
      let store = await makeStore();
      const runId = `r12-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}-`;
      try {
        await body(
          store,
          (name) => `${runId}${name}`,
          async () => {
            if (reopen === undefined) fail("no reopen option was given");
            store = await reopen(store);
            return store;
          },
        );
      } catch (error) {
        try {
          await store.close?.();
        } catch {
          // Report the check's failure, not a failure to close after it.
        }
        throw error;
      }
      await store.close?.();
    };

  const checks: SessionStoreCheck[] = [
    {
      name: "R12: an unknown session loads as { entries: [], version: 0 }",
      run: withStore(async (store, ids) => {
        const sessionId = ids("never-written");
        expectSnapshot(await store.load(sessionId), [], `load(${show(sessionId)})`);
        const listed = await store.list();
        if (!Array.isArray(listed)) fail(`list() resolved with ${show(listed)}, not an array.`);
        if (listed.includes(sessionId)) fail("list() names a session that was only loaded.");
      }),
    },
    {
      name: "R12: entries load in append order across many appends",
      run: withStore(async (store, ids) => {
        const sessionId = ids("ordering");
        const expected: SessionEntry[] = [];
        let version = 0;
        for (let round = 0; round < 100; round++) {
          const batch = Array.from({ length: (round % 4) + 1 }, (_, index) =>
            entry({ round, index, position: expected.length + index }),
          );
          version = await store.append(sessionId, version, batch);
          expected.push(...batch);
          if (round % 10 === 9) {
            expectSnapshot(
              await store.load(sessionId),
              expected,
              `load after ${round + 1} appends`,
            );
          }
        }
      }),
    },
    {
      name: "R12: append returns the new version (expectedVersion + entries.length), and load's version is the entry count",
      run: withStore(async (store, ids) => {
        const sessionId = ids("versions");
        expectValue(await store.append(sessionId, 0, [entry({ n: 0 })]), 1, "append 1 entry at 0");
        const three = [entry({ n: 1 }), entry({ n: 2 }), entry({ n: 3 })];
        expectValue(await store.append(sessionId, 1, three), 4, "append 3 entries at 1");
        const loaded = await store.load(sessionId);
        expectValue(loaded.version, 4, "the version after 4 entries");
        expectValue(loaded.entries.length, 4, "the entry count after 4 entries");
        expectValue(
          await store.append(sessionId, 4, [entry({ n: 4 }), entry({ n: 5 })]),
          6,
          "append 2 entries at 4",
        );
      }),
    },
    {
      name: "R12: compare-and-append: a wrong expectedVersion rejects with SessionConflictError and appends nothing",
      run: withStore(async (store, ids) => {
        const unknown = ids("conflict-unknown");
        await expectConflict(
          store.append(unknown, 1, [entry({ n: 0 })]),
          unknown,
          1,
          0,
          "append at version 1 to an unknown session",
        );
        expectSnapshot(await store.load(unknown), [], "the unknown session after a refused append");
        if ((await store.list()).includes(unknown)) {
          fail("a refused append to an unknown session created it: list() names it.");
        }
        const sessionId = ids("conflict");
        const first = [entry({ n: 0 }), entry({ n: 1 })];
        await store.append(sessionId, 0, first);
        for (const stale of [0, 1, 3, 100]) {
          await expectConflict(
            store.append(sessionId, stale, [entry({ stale, n: 0 }), entry({ stale, n: 1 })]),
            sessionId,
            stale,
            2,
            `append at version ${stale} to a session at version 2`,
          );
        }
        expectSnapshot(await store.load(sessionId), first, "the session after refused appends");
        expectValue(await store.append(sessionId, 2, [entry({ n: 2 })]), 3, "append at 2 after");
      }),
    },
    {
      name: `R12: of ${WRITERS} writers racing to append at the same version, exactly one wins`,
      run: withStore(async (store, ids) => {
        const sessionId = ids("race");
        const expected: SessionEntry[] = [];
        for (const version of [0, 2]) {
          const batches = Array.from({ length: WRITERS }, (_, writer) => [
            entry({ version, writer, part: 0 }),
            entry({ version, writer, part: 1 }),
          ]);
          const outcomes = await Promise.allSettled(
            batches.map((batch) => store.append(sessionId, version, batch)),
          );
          const winners = outcomes.flatMap((outcome, writer) =>
            outcome.status === "fulfilled" ? [writer] : [],
          );
          if (winners.length !== 1) {
            fail(
              `${WRITERS} writers appended at version ${version}: ${winners.length} succeeded (${winners.join(", ")}), expected exactly one.`,
            );
          }
          const winner = winners[0]!;
          expectValue(
            (outcomes[winner] as PromiseFulfilledResult<number>).value,
            version + 2,
            "the winner's new version",
          );
          for (const outcome of outcomes) {
            if (outcome.status === "rejected" && !isConflict(outcome.reason)) {
              fail(
                `a losing writer got ${show(String(outcome.reason))}, expected a SessionConflictError.`,
              );
            }
          }
          expected.push(...batches[winner]!);
          expectSnapshot(
            await store.load(sessionId),
            expected,
            `the session after the race at ${version}`,
          );
        }
      }),
    },
    {
      name: "R12: writers that reload and retry on conflict lose nothing, duplicate nothing and never interleave a batch",
      run: withStore(async (store, ids) => {
        const sessionId = ids("retry");
        const writers = 8;
        const appendsPerWriter = 10;
        const batchSize = 3;
        const reported = new Map<string, number>();
        await Promise.all(
          Array.from({ length: writers }, async (_, writer) => {
            for (let n = 0; n < appendsPerWriter; n++) {
              const batch = Array.from({ length: batchSize }, (_, part) =>
                entry({ writer, n, part }),
              );
              for (let attempt = 1; ; attempt++) {
                const { version } = await store.load(sessionId);
                try {
                  reported.set(`${writer}/${n}`, await store.append(sessionId, version, batch));
                  break;
                } catch (error) {
                  if (!isConflict(error)) throw error;
                  if (attempt >= 1000) fail(`writer ${writer} lost 1,000 races in a row.`);
                }
              }
            }
          }),
        );
        const { entries, version } = await store.load(sessionId);
        const total = writers * appendsPerWriter * batchSize;
        expectValue(entries.length, total, "the entry count after every writer finished");
        expectValue(version, total, "the version after every writer finished");
        const seen = new Set<string>();
        const lastOfWriter = new Map<number, number>();
        for (let start = 0; start < entries.length; start += batchSize) {
          const head = entries[start] as { writer: number; n: number };
          const key = `${head.writer}/${head.n}`;
          for (let part = 0; part < batchSize; part++) {
            const got = entries[start + part] as { writer?: unknown; n?: unknown; part?: unknown };
            if (got.writer !== head.writer || got.n !== head.n || got.part !== part) {
              fail(
                `entries ${start}-${start + batchSize - 1} should be one append's batch, but entry ${start + part} is ${show(got)}: batches interleaved.`,
              );
            }
          }
          if (seen.has(key)) fail(`writer ${head.writer}'s append ${head.n} is in the log twice.`);
          seen.add(key);
          if ((lastOfWriter.get(head.writer) ?? -1) >= head.n) {
            fail(`writer ${head.writer}'s appends are out of order at entry ${start}.`);
          }
          lastOfWriter.set(head.writer, head.n);
          expectValue(
            reported.get(key),
            start + batchSize,
            `the version append returned to writer ${head.writer} for append ${head.n}`,
          );
        }
      }),
    },
    {
      name: "R12: a multi-entry append is atomic: readers see all of its entries or none, and a failed append adds none",
      run: withStore(async (store, ids) => {
        const sessionId = ids("atomic");
        const batch = Array.from({ length: 50 }, (_, n) => entry({ n, text: "x".repeat(200) }));
        const early = Array.from({ length: 10 }, () => store.load(sessionId));
        const appending = store.append(sessionId, 0, batch);
        const late = Array.from({ length: 10 }, () => store.load(sessionId));
        await appending;
        for (const snapshot of await Promise.all([...early, ...late])) {
          if (snapshot.version !== 0 && snapshot.version !== batch.length) {
            fail(
              `a load during a 50-entry append saw version ${snapshot.version}, expected 0 or 50.`,
            );
          }
          expectEntries(
            snapshot.entries,
            batch.slice(0, snapshot.version),
            "a load during the append",
          );
        }
        const unserializable = { v: 1, type: "test", count: 10n } as unknown as SessionEntry;
        try {
          await store.append(sessionId, batch.length, [
            entry({ n: 50 }),
            entry({ n: 51 }),
            unserializable,
          ]);
        } catch {
          expectSnapshot(await store.load(sessionId), batch, "the session after a failed append");
          return;
        }
        fail(
          "append of entries whose last holds a BigInt (not JSON) resolved; it must reject and append none.",
        );
      }),
    },
  ];

  if (reopen !== undefined) {
    checks.push({
      name: "R12: entries survive closing and reopening the store",
      run: withStore(async (store, ids, reopened) => {
        const first = ids("reopen-a");
        const second = ids("reopen-b");
        const firstEntries = [entry({ n: 0 }), entry({ n: 1, text: "ünïcödé 😀 中文" })];
        await store.append(first, 0, firstEntries.slice(0, 1));
        await store.append(first, 1, firstEntries.slice(1));
        const secondEntries = Array.from({ length: 5 }, (_, n) => entry({ n }));
        await store.append(second, 0, secondEntries);
        let current = await reopened();
        expectSnapshot(await current.load(first), firstEntries, "the first session after a reopen");
        expectSnapshot(
          await current.load(second),
          secondEntries,
          "the second session after a reopen",
        );
        const listed = await current.list();
        if (!listed.includes(first) || !listed.includes(second)) {
          fail(`list() after a reopen lacks a session written before it: ${show(listed)}.`);
        }
        await expectConflict(
          current.append(first, 0, [entry({ n: 9 })]),
          first,
          0,
          2,
          "a stale append after a reopen",
        );
        firstEntries.push(entry({ n: 2 }));
        expectValue(
          await current.append(first, 2, firstEntries.slice(2)),
          3,
          "append after a reopen",
        );
        current = await reopened();
        expectSnapshot(
          await current.load(first),
          firstEntries,
          "the first session after a second reopen",
        );
      }),
    });
    checks.push({
      name: "H28: a session's fence survives closing and reopening the store",
      run: withStore(async (store, ids, reopened) => {
        const sessionId = ids("fence-reopen");
        await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 12 });
        const current = await reopened();
        await expectFenced(
          current.append(sessionId, 1, [entry({ n: 1 })], { fence: 11 }),
          sessionId,
          11,
          12,
          "an append with a lower fence after a reopen",
        );
        expectValue(
          await current.append(sessionId, 1, [entry({ n: 1 })], { fence: 12 }),
          2,
          "an append with the same fence after a reopen",
        );
      }),
    });
  }

  checks.push(
    {
      name: "R12: 1 MB entries round-trip exactly",
      run: withStore(async (store, ids) => {
        const sessionId = ids("large");
        const ascii = repeatTo("Lattice keeps a 1 MB entry whole. ", 1 << 20);
        const mixed = repeatTo("ünïcödé 中文 😀 \u0000 \n ", 1 << 20);
        const entries = [
          entry({ text: ascii }),
          entry({ small: true }),
          entry({ text: mixed, list: Array.from({ length: 1000 }, (_, n) => n) }),
        ];
        await store.append(sessionId, 0, entries.slice(0, 2));
        await store.append(sessionId, 2, entries.slice(2));
        const loaded = await store.load(sessionId);
        expectSnapshot(loaded, entries, "a session with 1 MB entries");
        expectValue(
          (loaded.entries[0]!.text as string).length,
          1 << 20,
          "the 1 MB string's length",
        );
      }),
    },
    {
      name: "R12: unicode round-trips exactly: astral plane, CJK, combining marks, NUL and control characters",
      run: withStore(async (store, ids) => {
        const sessionId = ids("ünïcödé-😀-中文");
        const strings = [
          "😀 👩‍👩‍👧‍👦 🏳️‍🌈 𝕃𝕒𝕥𝕥𝕚𝕔𝕖 𠀀",
          "中文 日本語 한국어",
          "e\u0301 n\u0303 (combining marks)",
          "\u0000 NUL, \u0001\u001f\u007f\u0085 controls",
          "line\nbreaks\r\n\u2028\u2029 tab\t",
          "\uFEFF byte order mark, \u200B zero width, \u202E right-to-left override",
          'quote " backslash \\ slash / <script>',
          "مرحبا שלום",
        ];
        const entries = [
          entry({ strings }),
          entry({ "ключ 🔑": "значение", "": "empty key", "\u0000": "NUL key", 中: strings }),
        ];
        await store.append(sessionId, 0, entries);
        const loaded = await store.load(sessionId);
        expectSnapshot(loaded, entries, `load(${show(sessionId)})`);
        const loadedStrings = loaded.entries[0]!.strings as readonly string[];
        strings.forEach((text, index) => {
          expectValue(loadedStrings[index], text, `unicode string ${index}`);
        });
        if (!(await store.list()).includes(sessionId)) {
          fail(`list() does not name the session ${show(sessionId)}.`);
        }
      }),
    },
    {
      name: "R12: nested JSON values round-trip exactly, key order included",
      run: withStore(async (store, ids) => {
        const sessionId = ids("nested");
        const manyKeys: Record<string, JsonValue> = {};
        for (let n = 199; n >= 0; n--) manyKeys[`key-${n}`] = n;
        let deep: JsonValue = { bottom: true };
        for (let level = 50; level > 0; level--) {
          deep = level % 2 === 0 ? { level, child: deep } : [level, deep];
        }
        const value = entry({
          numbers: [
            0,
            1,
            -1,
            0.1,
            -0.5,
            1.5e-7,
            123456789.123,
            1e21,
            1e308,
            5e-324,
            Number.MAX_SAFE_INTEGER,
            -Number.MAX_SAFE_INTEGER,
          ],
          booleans: [true, false],
          nothing: null,
          empty: {},
          emptyList: [],
          emptyString: "",
          mixed: [1, "two", null, true, { three: 3 }, [4, [5, [6, []]]]],
          zFirst: { z: 1, a: 2, m: 3, b: { y: 1, x: 2 } },
          manyKeys,
          deep,
        });
        await store.append(sessionId, 0, [value, entry({ after: "nested" })]);
        const loaded = await store.load(sessionId);
        const keys = Object.keys((loaded.entries[0]?.manyKeys ?? {}) as object);
        if (keys.join() !== Object.keys(manyKeys).join()) {
          fail(
            `an object's keys came back in another order (${show(keys.slice(0, 5))}..., expected ${show(Object.keys(manyKeys).slice(0, 5))}...): keep the JSON text as appended (for example Postgres json or text, not jsonb).`,
          );
        }
        expectSnapshot(loaded, [value, entry({ after: "nested" })], "a session with nested values");
      }),
    },
    {
      name: "R12: entries are copies: changing an appended or a loaded entry changes nothing stored",
      run: withStore(async (store, ids) => {
        const sessionId = ids("copies");
        const original = entry({ text: "original", nested: { list: [1, 2, 3] } });
        const appended = JSON.parse(JSON.stringify(original)) as MutableEntry;
        await store.append(sessionId, 0, [appended]);
        appended.text = "changed after append";
        (appended.nested as MutableEntry).list = [9];
        const first = await store.load(sessionId);
        expectSnapshot(first, [original], "a load after the appended entry was changed");
        try {
          const loaded = first.entries[0] as MutableEntry;
          loaded.text = "changed after load";
          ((loaded.nested as MutableEntry).list as JsonValue[]).push(4);
          (first.entries as SessionEntry[]).push(entry({ extra: true }));
        } catch {
          // A store may return frozen entries: then nothing could change.
        }
        expectSnapshot(
          await store.load(sessionId),
          [original],
          "a load after a loaded entry was changed",
        );
      }),
    },
    {
      name: "R12: delete removes a session: true, then false; it loads empty, is not listed, and starts again at version 0",
      run: withStore(async (store, ids) => {
        const deleted = ids("delete-me");
        const kept = ids("delete-keep");
        await store.append(deleted, 0, [entry({ n: 0 }), entry({ n: 1 }), entry({ n: 2 })]);
        await store.append(kept, 0, [entry({ kept: true })]);
        expectValue(await store.delete(deleted), true, "delete of a session that exists");
        expectValue(await store.delete(deleted), false, "a second delete of the same session");
        expectValue(
          await store.delete(ids("never-written")),
          false,
          "delete of an unknown session",
        );
        expectSnapshot(await store.load(deleted), [], "a deleted session");
        const listed = await store.list();
        if (listed.includes(deleted)) fail("list() still names a deleted session.");
        if (!listed.includes(kept)) fail("deleting one session removed another from list().");
        await expectConflict(
          store.append(deleted, 3, [entry({ n: 3 })]),
          deleted,
          3,
          0,
          "append at the old version after delete",
        );
        expectValue(
          await store.append(deleted, 0, [entry({ again: true })]),
          1,
          "append at 0 after delete",
        );
        expectSnapshot(
          await store.load(deleted),
          [entry({ again: true })],
          "a session written again after delete",
        );
        expectSnapshot(
          await store.load(kept),
          [entry({ kept: true })],
          "the other session after a delete",
        );
      }),
    },
    {
      name: "R12: 200 sessions are all listed, sorted in code-unit order",
      run: withStore(async (store, ids) => {
        const names = Array.from({ length: 190 }, (_, n) => `session-${n}`);
        names.push(
          "Session-upper",
          "session-",
          "session-a",
          "é",
          "ｚ",
          "😀",
          "a b",
          "a/b",
          "a%b",
          "a_b",
        );
        const sessionIds = shuffle(names.map(ids));
        for (let start = 0; start < sessionIds.length; start += 20) {
          await Promise.all(
            sessionIds
              .slice(start, start + 20)
              .map((sessionId) => store.append(sessionId, 0, [entry({ sessionId })])),
          );
        }
        const listed = await store.list();
        const expected = [...sessionIds].sort();
        const ours = listed.filter((sessionId) => sessionId.startsWith(ids("")));
        if (ours.join("\n") !== expected.join("\n")) {
          const missing = expected.filter((sessionId) => !ours.includes(sessionId));
          fail(
            missing.length > 0 || ours.length !== expected.length
              ? `list() names ${ours.length} of the ${expected.length} sessions written (missing: ${show(missing.slice(0, 3))}).`
              : `list() is not in code-unit order (JavaScript's default sort; SQL ORDER BY sorts by code point or collation): got ${show(ours.slice(-6))} at the end, expected ${show(expected.slice(-6))}.`,
          );
        }
        for (let index = 1; index < listed.length; index++) {
          if (!(listed[index - 1]! < listed[index]!)) {
            fail(`list() is not sorted, or names a session twice, at ${show(listed[index])}.`);
          }
        }
        for (const sessionId of sessionIds.slice(0, 10)) {
          expectSnapshot(
            await store.load(sessionId),
            [entry({ sessionId })],
            `load(${show(sessionId)})`,
          );
        }
      }),
    },
    {
      name: "R12: sessions are independent: appends, conflicts and deletes on one leave the others alone",
      run: withStore(async (store, ids) => {
        const sessionIds = ["s", "s1", "s/1", "S", "s%", "s_", "s "].map(ids);
        const expected = new Map<string, SessionEntry[]>(sessionIds.map((id) => [id, []]));
        // Interleaved appends: session i gets (number of sessions - i) entries.
        for (let round = 0; round < sessionIds.length; round++) {
          for (const [index, sessionId] of sessionIds.entries()) {
            if (round >= sessionIds.length - index) continue;
            const log = expected.get(sessionId)!;
            const added = [entry({ sessionId, round })];
            await store.append(sessionId, log.length, added);
            log.push(...added);
          }
        }
        const [first, second] = sessionIds as [string, string];
        const firstLength = expected.get(first)!.length;
        await expectConflict(
          store.append(first, 0, [entry({ late: true })]),
          first,
          0,
          firstLength,
          "a stale append to one session",
        );
        expectValue(await store.delete(first), true, "delete of one session");
        expected.set(first, []);
        const secondLog = expected.get(second)!;
        const after = entry({ after: "delete" });
        expectValue(
          await store.append(second, secondLog.length, [after]),
          secondLog.length + 1,
          "append to a neighbour after a delete",
        );
        secondLog.push(after);
        for (const sessionId of sessionIds) {
          expectSnapshot(
            await store.load(sessionId),
            expected.get(sessionId)!,
            `load(${show(sessionId)})`,
          );
        }
      }),
    },
  );
  checks.push(...fenceChecks(withStore));
  checks.push(...checkpointChecks(withStore, reopen !== undefined));
  return Object.freeze(checks.map((check) => Object.freeze(check)));
}

/** How each check gets a fresh store and its own session ids. */
type WithStore<S extends SessionStore> = (
  body: (store: S, ids: (name: string) => string) => Promise<void>,
) => () => Promise<void>;

/** The checks of fenced appends (H28), which a store for `@lattice/bullmq` workers needs. */
function fenceChecks<S extends SessionStore>(withStore: WithStore<S>): SessionStoreCheck[] {
  return [
    {
      name: "H28: a fenced append raises the session's fence: a lower fence is refused with SessionFencedError and appends nothing, an equal or higher one appends",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence");
        const kept = [entry({ n: 0 })];
        expectValue(await store.append(sessionId, 0, kept, { fence: 5 }), 1, "fence 5 at 0");
        await expectFenced(
          store.append(sessionId, 1, [entry({ stale: 4 })], { fence: 4 }),
          sessionId,
          4,
          5,
          "an append with fence 4 after fence 5",
        );
        expectSnapshot(await store.load(sessionId), kept, "the session after a refused append");
        kept.push(entry({ n: 1 }));
        expectValue(
          await store.append(sessionId, 1, kept.slice(1), { fence: 5 }),
          2,
          "the same fence again",
        );
        kept.push(entry({ n: 2 }));
        expectValue(
          await store.append(sessionId, 2, kept.slice(2), { fence: 9 }),
          3,
          "a higher fence",
        );
        for (const stale of [8, 5, 0]) {
          await expectFenced(
            store.append(sessionId, 3, [entry({ stale })], { fence: stale }),
            sessionId,
            stale,
            9,
            `an append with fence ${stale} after fence 9`,
          );
        }
        expectSnapshot(await store.load(sessionId), kept, "the session after fenced appends");
        // Fences are lease generations, such as times in milliseconds: all 53 bits count.
        const large = ids("fence-large");
        const max = Number.MAX_SAFE_INTEGER;
        await store.append(large, 0, [entry({ n: 0 })], { fence: max - 1 });
        await expectFenced(
          store.append(large, 1, [entry({ n: 1 })], { fence: max - 2 }),
          large,
          max - 2,
          max - 1,
          "fence 2^53 - 3 after 2^53 - 2",
        );
        await store.append(large, 1, [entry({ n: 1 })], { fence: max });
        await expectFenced(
          store.append(large, 2, [entry({ n: 2 })], { fence: max - 1 }),
          large,
          max - 1,
          max,
          "fence 2^53 - 2 after 2^53 - 1",
        );
      }),
    },
    {
      name: "H28: the fence is checked before the version, and a refused append (fenced or conflicting) leaves the fence as it was",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-order");
        await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 3 });
        await expectFenced(
          store.append(sessionId, 0, [entry({ stale: true })], { fence: 2 }),
          sessionId,
          2,
          3,
          "a lower fence at a wrong version",
        );
        await expectConflict(
          store.append(sessionId, 0, [entry({ late: true })], { fence: 8 }),
          sessionId,
          0,
          1,
          "a higher fence at a wrong version",
        );
        // The conflicting append with fence 8 did not raise the fence: 4 still appends.
        expectValue(
          await store.append(sessionId, 1, [entry({ n: 1 })], { fence: 4 }),
          2,
          "fence 4 after a conflicting append with fence 8",
        );
        expectSnapshot(
          await store.load(sessionId),
          [entry({ n: 0 }), entry({ n: 1 })],
          "the session after refused appends",
        );
      }),
    },
    {
      name: "H28: a fenced append of no entries only raises the fence: the version stays, and an unknown session stays empty and unlisted",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-only");
        expectValue(
          await store.append(sessionId, 0, [], { fence: 7 }),
          0,
          "no entries with fence 7 on an unknown session",
        );
        expectSnapshot(await store.load(sessionId), [], "a session whose fence only was raised");
        if ((await store.list()).includes(sessionId)) {
          fail("a fenced append of no entries created the session: list() names it.");
        }
        await expectFenced(
          store.append(sessionId, 0, [entry({ stale: true })], { fence: 6 }),
          sessionId,
          6,
          7,
          "fence 6 after a raise to 7",
        );
        expectValue(
          await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 7 }),
          1,
          "fence 7 after a raise to 7",
        );
        expectValue(
          await store.append(sessionId, 1, [], { fence: 8 }),
          1,
          "no entries with fence 8",
        );
        await expectFenced(
          store.append(sessionId, 1, [entry({ stale: true })], { fence: 7 }),
          sessionId,
          7,
          8,
          "fence 7 after a raise to 8",
        );
        await expectConflict(
          store.append(sessionId, 0, [], { fence: 20 }),
          sessionId,
          0,
          1,
          "no entries with fence 20 at a wrong version",
        );
        expectValue(
          await store.append(sessionId, 1, [entry({ n: 1 })], { fence: 8 }),
          2,
          "fence 8 after a refused raise to 20",
        );
      }),
    },
    {
      name: "H28: appends without a fence are neither checked against the session's fence nor change it",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-unfenced");
        await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 10 });
        expectValue(await store.append(sessionId, 1, [entry({ n: 1 })]), 2, "no fence");
        expectValue(await store.append(sessionId, 2, [entry({ n: 2 })], {}), 3, "no fence, {}");
        await expectFenced(
          store.append(sessionId, 3, [entry({ stale: true })], { fence: 9 }),
          sessionId,
          9,
          10,
          "fence 9 after unfenced appends on fence 10",
        );
      }),
    },
    {
      name: "H28: a fence raise and a fenced append with a lower fence racing at one version never both succeed",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-race");
        const expected: SessionEntry[] = [];
        for (let round = 0; round < 20; round++) {
          const version = expected.length;
          const stale = entry({ round });
          // A worker frozen past its lease logs a result as its successor raises the fence.
          const [late, raise] = await Promise.allSettled([
            store.append(sessionId, version, [stale], { fence: 2 * round + 1 }),
            store.append(sessionId, version, [], { fence: 2 * round + 2 }),
          ]);
          if (late.status === "fulfilled" && raise.status === "fulfilled") {
            fail(
              `round ${round}: an append with fence ${2 * round + 1} and a raise to ${2 * round + 2} at version ${version} both succeeded: the fence check and the version check are not one atomic step.`,
            );
          }
          if (late.status === "rejected" && !isFenced(late.reason)) {
            fail(
              `round ${round}: the lower fence's append got ${show(String(late.reason))}, expected a SessionFencedError.`,
            );
          }
          if (raise.status === "rejected" && !isConflict(raise.reason)) {
            fail(
              `round ${round}: the raise got ${show(String(raise.reason))}, expected a SessionConflictError.`,
            );
          }
          if (late.status === "fulfilled") expected.push(stale);
          expectSnapshot(await store.load(sessionId), expected, `the session after round ${round}`);
        }
      }),
    },
    {
      name: "H28: concurrent fence raises with different fences leave the highest",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-max");
        await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 1 });
        // Raises from holders of successive leases, arriving in no particular order.
        const fences = [10, 3, 12, 7, 5, 11, 2, 9, 4, 8, 6];
        const raised = await Promise.allSettled(
          fences.map((fence) => store.append(sessionId, 1, [], { fence })),
        );
        raised.forEach((outcome, index) => {
          if (outcome.status === "rejected" && !isFenced(outcome.reason)) {
            fail(
              `a raise to ${fences[index]} among concurrent raises got ${show(String(outcome.reason))}, expected success or a SessionFencedError.`,
            );
          }
        });
        await expectFenced(
          store.append(sessionId, 1, [entry({ stale: 11 })], { fence: 11 }),
          sessionId,
          11,
          12,
          "fence 11 after concurrent raises up to 12",
        );
        expectValue(
          await store.append(sessionId, 1, [entry({ n: 1 })], { fence: 12 }),
          2,
          "fence 12 after concurrent raises up to 12",
        );
      }),
    },
    {
      name: "H28: the store declares fencedAppends: true, as @lattice/bullmq workers require",
      run: withStore(async (store) => {
        if (store.fencedAppends !== true) {
          fail(
            `fencedAppends is ${show(store.fencedAppends)}: a store that passes the H28 checks declares it (readonly fencedAppends: true), so that createRunWorker of @lattice/bullmq accepts it.`,
          );
        }
      }),
    },
    {
      name: "H28: delete forgets a session's fence with its entries",
      run: withStore(async (store, ids) => {
        const sessionId = ids("fence-delete");
        await store.append(sessionId, 0, [entry({ n: 0 })], { fence: 50 });
        expectValue(await store.delete(sessionId), true, "delete of a fenced session");
        expectValue(
          await store.append(sessionId, 0, [entry({ again: true })], { fence: 1 }),
          1,
          "fence 1 after delete",
        );
      }),
    },
  ];
}

/** How each check gets a fresh store, its own session ids, and a reopen of the store. */
type WithReopen<S extends SessionStore> = (
  body: (store: S, ids: (name: string) => string, reopened: () => Promise<S>) => Promise<void>,
) => () => Promise<void>;

/** Saves a checkpoint through a store that declares checkpoints; fails when it lacks the method. */
function saveCheckpoint(
  store: SessionStore,
  sessionId: string,
  checkpoint: SessionCheckpoint,
): Promise<boolean> {
  if (typeof store.saveCheckpoint !== "function") {
    fail(
      "the store declares checkpoints: true but has no saveCheckpoint method: implement saveCheckpoint(sessionId, { version, state }), or leave checkpoints out.",
    );
  }
  return store.saveCheckpoint(sessionId, checkpoint);
}

/** Loads a session from its checkpoint (C8). */
function loadFromCheckpoint(store: SessionStore, sessionId: string) {
  return store.load(sessionId, { fromCheckpoint: true });
}

/** A checkpoint's state in the checks: names the version it covers, so a mix-up shows. */
function stateAt(version: number, extra?: JsonValue): JsonValue {
  return extra === undefined
    ? { format: 1, covers: version }
    : { format: 1, covers: version, extra };
}

/** The first `count` entries that {@link appendTo} appends to a session: `entry({ n })`. */
function numbered(count: number): SessionEntry[] {
  return Array.from({ length: count }, (_, n) => entry({ n }));
}

/** Appends `count` entries numbered from the log's length, and returns the new log. */
async function appendTo(
  store: SessionStore,
  sessionId: string,
  log: SessionEntry[],
  count: number,
): Promise<SessionEntry[]> {
  const batch = Array.from({ length: count }, (_, index) => entry({ n: log.length + index }));
  expectValue(
    await store.append(sessionId, log.length, batch),
    log.length + count,
    `append of ${count} entries at ${log.length}`,
  );
  log.push(...batch);
  return log;
}

/**
 * The checks of checkpoints (C8), for a store that declares `checkpoints: true`; each passes at
 * once for a store that does not (a store without checkpoints still works).
 */
function checkpointChecks<S extends SessionStore>(
  withStore: WithReopen<S>,
  reopen: boolean,
): SessionStoreCheck[] {
  /** Runs `body` only when the store declares checkpoints. */
  const withCheckpoints = (
    body: (store: S, ids: (name: string) => string, reopened: () => Promise<S>) => Promise<void>,
  ) =>
    withStore(async (store, ids, reopened) => {
      if (store.checkpoints !== true) return;
      await body(store, ids, reopened);
    });

  const checks: SessionStoreCheck[] = [
    {
      name: "C8: a store that declares checkpoints: true implements saveCheckpoint",
      run: withStore(async (store) => {
        if (store.checkpoints !== undefined && typeof store.checkpoints !== "boolean") {
          fail(`checkpoints is ${show(store.checkpoints)}: declare it as true, or leave it out.`);
        }
        if (store.checkpoints === true && typeof store.saveCheckpoint !== "function") {
          fail(
            `checkpoints is true but saveCheckpoint is ${show(typeof store.saveCheckpoint)}: a store that keeps checkpoints implements saveCheckpoint(sessionId, { version, state }).`,
          );
        }
      }),
    },
    {
      name: "C8: load without fromCheckpoint returns every entry and no checkpoint, and a session without a checkpoint loads whole with it",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-whole");
        const log = await appendTo(store, sessionId, [], 6);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          log,
          "load with fromCheckpoint of a session without a checkpoint",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, ids("cp-never-written")),
          undefined,
          [],
          "load with fromCheckpoint of an unknown session",
        );
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 4, state: stateAt(4) }),
          true,
          "saveCheckpoint at 4 of 6",
        );
        expectFromCheckpoint(await store.load(sessionId), undefined, log, "load()");
        expectFromCheckpoint(await store.load(sessionId, {}), undefined, log, "load(id, {})");
        expectFromCheckpoint(
          await store.load(sessionId, { fromCheckpoint: false }),
          undefined,
          log,
          "load(id, { fromCheckpoint: false })",
        );
      }),
    },
    {
      name: "C8: load with fromCheckpoint returns the latest checkpoint and only the entries after it, with the session's version",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-tail");
        const log = await appendTo(store, sessionId, [], 10);
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 4, state: stateAt(4) }),
          true,
          "saveCheckpoint at 4 of 10",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: 4, state: stateAt(4) },
          log,
          "load from the checkpoint at 4 of 10",
        );
        await appendTo(store, sessionId, log, 3);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: 4, state: stateAt(4) },
          log,
          "load from the checkpoint at 4 after 3 more entries",
        );
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 12, state: stateAt(12) }),
          true,
          "saveCheckpoint at 12 of 13",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: 12, state: stateAt(12) },
          log,
          "load from the newer checkpoint at 12 of 13",
        );
        expectSnapshot(await store.load(sessionId), log, "load() after two checkpoints");
        // The version of a load from the checkpoint is the one to append at.
        const { version } = await loadFromCheckpoint(store, sessionId);
        expectValue(
          await store.append(sessionId, version, [entry({ n: 13 })]),
          14,
          "append at the version a load from the checkpoint gave",
        );
      }),
    },
    {
      name: "C8: a checkpoint at the session's whole version leaves no entries after it",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-full");
        const log = await appendTo(store, sessionId, [], 5);
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 5, state: stateAt(5) }),
          true,
          "saveCheckpoint at 5 of 5",
        );
        const snapshot = await loadFromCheckpoint(store, sessionId);
        expectFromCheckpoint(snapshot, { version: 5, state: stateAt(5) }, log, "load at 5 of 5");
        await appendTo(store, sessionId, log, 1);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: 5, state: stateAt(5) },
          log,
          "load from the checkpoint at 5 after one more entry",
        );
        const one = ids("cp-one");
        const single = await appendTo(store, one, [], 1);
        expectValue(
          await saveCheckpoint(store, one, { version: 1, state: stateAt(1) }),
          true,
          "saveCheckpoint at 1 of 1",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, one),
          { version: 1, state: stateAt(1) },
          single,
          "load at 1 of 1",
        );
      }),
    },
    {
      name: "C8: a checkpoint older than or as old as the session's is refused (false), and the newer one stays",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-older");
        const log = await appendTo(store, sessionId, [], 8);
        const kept = { version: 5, state: stateAt(5, "kept") };
        expectValue(await saveCheckpoint(store, sessionId, kept), true, "saveCheckpoint at 5");
        for (const version of [5, 4, 1]) {
          expectValue(
            await saveCheckpoint(store, sessionId, { version, state: stateAt(version, "late") }),
            false,
            `saveCheckpoint at ${version} after the checkpoint at 5`,
          );
          expectFromCheckpoint(
            await loadFromCheckpoint(store, sessionId),
            kept,
            log,
            `load after a refused checkpoint at ${version}`,
          );
        }
        const newer = { version: 6, state: stateAt(6) };
        expectValue(await saveCheckpoint(store, sessionId, newer), true, "saveCheckpoint at 6");
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          newer,
          log,
          "load after the checkpoint at 6",
        );
      }),
    },
    {
      name: "C8: a checkpoint beyond the session's version is refused (false) and changes nothing",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-beyond");
        const log = await appendTo(store, sessionId, [], 3);
        for (const version of [4, 100, Number.MAX_SAFE_INTEGER]) {
          expectValue(
            await saveCheckpoint(store, sessionId, { version, state: stateAt(version) }),
            false,
            `saveCheckpoint at ${version} of a session at version 3`,
          );
        }
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          log,
          "load after checkpoints beyond the session were refused",
        );
        const kept = { version: 2, state: stateAt(2) };
        expectValue(await saveCheckpoint(store, sessionId, kept), true, "saveCheckpoint at 2 of 3");
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 4, state: stateAt(4) }),
          false,
          "saveCheckpoint at 4 of 3 after one at 2",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          kept,
          log,
          "load after a checkpoint beyond the session was refused",
        );
        await appendTo(store, sessionId, log, 1);
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 4, state: stateAt(4) }),
          true,
          "saveCheckpoint at 4 once the session holds 4 entries",
        );
      }),
    },
    {
      name: "C8: a checkpoint of an unknown session is refused (false) and does not create the session",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-unknown");
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 1, state: stateAt(1) }),
          false,
          "saveCheckpoint on an unknown session",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          [],
          "an unknown session after a refused checkpoint",
        );
        if ((await store.list()).includes(sessionId)) {
          fail("a refused checkpoint of an unknown session created it: list() names it.");
        }
        const log = await appendTo(store, sessionId, [], 2);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          log,
          "the session once written, after a refused checkpoint",
        );
      }),
    },
    {
      name: "C8: a checkpoint's state round-trips exactly: any JSON value, unicode, nested values with key order, 1 MB",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-state-ünïcödé-😀");
        const manyKeys: Record<string, JsonValue> = {};
        for (let n = 99; n >= 0; n--) manyKeys[`key-${n}`] = n;
        let deep: JsonValue = { bottom: true };
        for (let level = 40; level > 0; level--) {
          deep = level % 2 === 0 ? { level, child: deep } : [level, deep];
        }
        const states: JsonValue[] = [
          { format: 1, messages: [] },
          "a string state",
          0,
          -1.5e-7,
          Number.MAX_SAFE_INTEGER,
          true,
          false,
          null,
          [],
          {},
          [1, "two", null, true, { three: 3 }, [4, [5, []]]],
          {
            zFirst: { z: 1, a: 2, m: 3 },
            manyKeys,
            deep,
            strings: [
              "😀 👩‍👩‍👧‍👦 🏳️‍🌈 𝕃𝕒𝕥𝕥𝕚𝕔𝕖 𠀀",
              "中文 日本語 한국어 مرحبا שלום",
              "e\u0301 \u0000 NUL \u0001\u001f\u007f controls, line\nbreaks\r\n\u2028\u2029",
              '\uFEFF \u200B \u202E quote " backslash \\ <script>',
            ],
            "ключ 🔑": "значение",
            "": "empty key",
            "\u0000": "NUL key",
          },
          {
            summary: repeatTo("Lattice keeps a 1 MB checkpoint whole. ", 1 << 20),
            mixed: repeatTo("ünïcödé 中文 😀 \u0000 \n ", 1 << 18),
          },
        ];
        const log = await appendTo(store, sessionId, [], states.length + 1);
        for (const [index, state] of states.entries()) {
          const version = index + 1;
          expectValue(
            await saveCheckpoint(store, sessionId, { version, state }),
            true,
            `saveCheckpoint of state ${index} (${show(state, 40)})`,
          );
          const snapshot = await loadFromCheckpoint(store, sessionId);
          expectFromCheckpoint(
            snapshot,
            { version, state },
            log,
            `the checkpoint of state ${index}`,
          );
          if (state !== null && typeof state === "object" && !Array.isArray(state)) {
            const keys = Object.keys(snapshot.checkpoint!.state as object);
            if (keys.join() !== Object.keys(state).join()) {
              fail(
                `state ${index}: its keys came back in another order (${show(keys.slice(0, 5))}...): keep the state's JSON text as saved (for example Postgres json or text, not jsonb).`,
              );
            }
          }
        }
        const large = (await loadFromCheckpoint(store, sessionId)).checkpoint!.state as {
          summary: string;
        };
        expectValue(large.summary.length, 1 << 20, "the 1 MB string's length");
      }),
    },
    {
      name: "C8: checkpoints are copies: changing a saved or a loaded state changes nothing stored",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-copies");
        const log = await appendTo(store, sessionId, [], 3);
        const original: JsonValue = { format: 1, messages: [{ role: "user", text: "original" }] };
        const saved = JSON.parse(JSON.stringify(original)) as {
          format: number;
          messages: { text: string }[];
        };
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 2, state: saved }),
          true,
          "saveCheckpoint at 2",
        );
        saved.format = 99;
        saved.messages[0]!.text = "changed after save";
        const first = await loadFromCheckpoint(store, sessionId);
        expectFromCheckpoint(
          first,
          { version: 2, state: original },
          log,
          "a load after the saved state was changed",
        );
        try {
          const loaded = first.checkpoint!.state as { messages: { text: string }[] };
          loaded.messages[0]!.text = "changed after load";
          loaded.messages.push({ text: "extra" });
          (first.checkpoint as { version: number }).version = 1;
          (first.entries as SessionEntry[]).length = 0;
        } catch {
          // A store may return frozen values: then nothing could change.
        }
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: 2, state: original },
          log,
          "a load after a loaded state was changed",
        );
      }),
    },
    {
      name: "C8: delete removes a session's checkpoint: written again, the session has none until one is saved",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-delete");
        const kept = ids("cp-delete-keep");
        await appendTo(store, sessionId, [], 5);
        const keptLog = await appendTo(store, kept, [], 2);
        const keptCheckpoint = { version: 1, state: stateAt(1, "neighbour") };
        expectValue(
          await saveCheckpoint(store, sessionId, { version: 4, state: stateAt(4) }),
          true,
          "saveCheckpoint at 4",
        );
        expectValue(
          await saveCheckpoint(store, kept, keptCheckpoint),
          true,
          "saveCheckpoint of another session",
        );
        expectValue(await store.delete(sessionId), true, "delete of a session with a checkpoint");
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          [],
          "a deleted session loaded with fromCheckpoint",
        );
        const again = await appendTo(store, sessionId, [], 2);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          undefined,
          again,
          "a session written again after delete",
        );
        // The deleted checkpoint covered 4 entries: a new one at 1 is not "older".
        const fresh = { version: 1, state: stateAt(1, "fresh") };
        expectValue(
          await saveCheckpoint(store, sessionId, fresh),
          true,
          "saveCheckpoint at 1 of the session written again",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          fresh,
          again,
          "the session written again, with its own checkpoint",
        );
        expectFromCheckpoint(
          await loadFromCheckpoint(store, kept),
          keptCheckpoint,
          keptLog,
          "the other session after a delete",
        );
      }),
    },
    {
      name: "C8: appends and checkpoint saves racing: every load from the checkpoint fits its entries and is never older than what was acknowledged, and the newest checkpoint stays",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-race");
        const log: SessionEntry[] = [];
        await appendTo(store, sessionId, log, 2);
        /** The session's version and its newest checkpoint, as acknowledged so far. */
        let acknowledged = 2;
        let newest = 0;
        let done = false;
        let loads = 0;
        const appender = async () => {
          try {
            for (let round = 0; round < 40; round++) {
              await appendTo(store, sessionId, log, (round % 3) + 1);
              acknowledged = log.length;
            }
          } finally {
            done = true;
          }
        };
        /** Saves behind the acknowledged version by `lag` entries, or ahead of it by one. */
        const saver = async (lag: number) => {
          while (!done) {
            const version = Math.max(1, acknowledged - lag);
            const saved = await saveCheckpoint(store, sessionId, {
              version,
              state: stateAt(version),
            });
            if (typeof saved !== "boolean") {
              fail(`saveCheckpoint resolved with ${show(saved)}, not true or false.`);
            }
            if (saved) newest = Math.max(newest, version);
          }
        };
        const reader = async () => {
          while (!done) {
            const [version, checkpoint] = [acknowledged, newest];
            const snapshot = await loadFromCheckpoint(store, sessionId);
            loads++;
            const got = snapshot.checkpoint;
            const what = `a load from the checkpoint while appends and saves race (load ${loads})`;
            if (snapshot.version < version) {
              fail(
                `${what}: version ${snapshot.version}, though ${version} was acknowledged before the load.`,
              );
            }
            if (got === undefined) {
              if (checkpoint > 0) {
                fail(
                  `${what}: no checkpoint, though the one at ${checkpoint} was acknowledged before the load.`,
                );
              }
              expectSnapshot(snapshot, numbered(snapshot.version), what);
              continue;
            }
            if (got.version < checkpoint) {
              fail(
                `${what}: the checkpoint at ${got.version}, though the one at ${checkpoint} was acknowledged before the load.`,
              );
            }
            if (got.version + snapshot.entries.length !== snapshot.version) {
              fail(
                `${what}: a checkpoint at ${got.version} with ${snapshot.entries.length} entries after it, but version ${snapshot.version}: the checkpoint and the entries were not read in one atomic step.`,
              );
            }
            expectFromCheckpoint(
              snapshot,
              { version: got.version, state: stateAt(got.version) },
              numbered(snapshot.version),
              what,
            );
          }
        };
        await Promise.all([
          appender(),
          saver(0),
          saver(3),
          saver(-1),
          saver(7),
          reader(),
          reader(),
        ]);
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          { version: newest, state: stateAt(newest) },
          log,
          "the session after the race (the newest checkpoint acknowledged must stay)",
        );
        const all = log.length;
        expectValue(
          await saveCheckpoint(store, sessionId, { version: all, state: stateAt(all) }),
          newest < all,
          `saveCheckpoint at the final version ${all} (the newest checkpoint was at ${newest})`,
        );
      }),
    },
    {
      name: "C8: bad arguments to saveCheckpoint and load are refused with InvalidOptionError and change nothing",
      run: withCheckpoints(async (store, ids) => {
        const sessionId = ids("cp-arguments");
        const log = await appendTo(store, sessionId, [], 3);
        const kept = { version: 2, state: stateAt(2) };
        expectValue(await saveCheckpoint(store, sessionId, kept), true, "saveCheckpoint at 2");
        const cyclic: Record<string, unknown> = { format: 1 };
        cyclic.self = cyclic;
        const invalid = ["invalid_option"];
        const badSaves: [string, unknown, unknown, readonly string[]][] = [
          ["an empty sessionId", "", { version: 3, state: {} }, invalid],
          ["a sessionId that is not a string", 42, { version: 3, state: {} }, invalid],
          ["no checkpoint", sessionId, undefined, invalid],
          ["a null checkpoint", sessionId, null, invalid],
          ["a checkpoint that is a number", sessionId, 3, invalid],
          ["a checkpoint that is an array", sessionId, [3, {}], invalid],
          ["version 0", sessionId, { version: 0, state: {} }, invalid],
          ["version -1", sessionId, { version: -1, state: {} }, invalid],
          ["version 2.5", sessionId, { version: 2.5, state: {} }, invalid],
          ['version "3"', sessionId, { version: "3", state: {} }, invalid],
          ["version NaN", sessionId, { version: Number.NaN, state: {} }, invalid],
          ["version 2^53", sessionId, { version: 2 ** 53, state: {} }, invalid],
          ["no version", sessionId, { state: {} }, invalid],
          ["no state", sessionId, { version: 3 }, invalid],
          ["a state that is undefined", sessionId, { version: 3, state: undefined }, invalid],
          ["a Date in the state", sessionId, { version: 3, state: { at: new Date(0) } }, invalid],
          ["a Map as the state", sessionId, { version: 3, state: new Map() }, invalid],
          ["Infinity in the state", sessionId, { version: 3, state: [Infinity] }, invalid],
          ["NaN as the state", sessionId, { version: 3, state: Number.NaN }, invalid],
          ["a BigInt in the state", sessionId, { version: 3, state: { n: 1n } }, invalid],
          ["a function in the state", sessionId, { version: 3, state: { f: () => 1 } }, invalid],
          ["undefined in an array", sessionId, { version: 3, state: [1, undefined] }, invalid],
          ["a state that contains itself", sessionId, { version: 3, state: cyclic }, invalid],
          [
            "an unknown key in the checkpoint",
            sessionId,
            { version: 3, state: {}, note: "x" },
            ["invalid_option", "unknown_option"],
          ],
        ];
        for (const [what, id, checkpoint, codes] of badSaves) {
          await expectRefused(
            () => saveCheckpoint(store, id as string, checkpoint as SessionCheckpoint),
            codes,
            `saveCheckpoint with ${what}`,
          );
        }
        const badLoads: [string, unknown, unknown, readonly string[]][] = [
          ["an empty sessionId", "", { fromCheckpoint: true }, invalid],
          ['fromCheckpoint "yes"', sessionId, { fromCheckpoint: "yes" }, invalid],
          ["fromCheckpoint 1", sessionId, { fromCheckpoint: 1 }, invalid],
          ["options that are a number", sessionId, 5, invalid],
          ["options that are null", sessionId, null, invalid],
          ["an unknown option", sessionId, { fromCheckpont: true }, ["unknown_option"]],
        ];
        for (const [what, id, options, codes] of badLoads) {
          await expectRefused(
            () => store.load(id as string, options as { fromCheckpoint?: boolean }),
            codes,
            `load with ${what}`,
          );
        }
        expectFromCheckpoint(
          await loadFromCheckpoint(store, sessionId),
          kept,
          log,
          "the session after refused arguments",
        );
        expectSnapshot(await store.load(sessionId), log, "load() after refused arguments");
      }),
    },
  ];

  if (reopen) {
    checks.push({
      name: "C8: a checkpoint survives closing and reopening the store",
      run: withCheckpoints(async (store, ids, reopened) => {
        const sessionId = ids("cp-reopen");
        const log = await appendTo(store, sessionId, [], 6);
        const kept = { version: 4, state: stateAt(4, "ünïcödé 😀 中文") };
        expectValue(await saveCheckpoint(store, sessionId, kept), true, "saveCheckpoint at 4");
        let current = await reopened();
        expectFromCheckpoint(
          await loadFromCheckpoint(current, sessionId),
          kept,
          log,
          "load from the checkpoint after a reopen",
        );
        expectValue(
          await saveCheckpoint(current, sessionId, { version: 3, state: stateAt(3) }),
          false,
          "saveCheckpoint at 3 after a reopen (the checkpoint at 4 survived)",
        );
        await appendTo(current, sessionId, log, 2);
        const newer = { version: 7, state: stateAt(7) };
        expectValue(
          await saveCheckpoint(current, sessionId, newer),
          true,
          "saveCheckpoint at 7 after a reopen",
        );
        current = await reopened();
        expectFromCheckpoint(
          await loadFromCheckpoint(current, sessionId),
          newer,
          log,
          "load from the checkpoint after a second reopen",
        );
      }),
    });
  }
  return checks;
}

/**
 * Registers every check of {@link sessionStoreConformance} with a test framework:
 * `define(check.name, check.run)` for each. `runSessionStoreConformance(makeStore, it)` works
 * with vitest, jest and `node:test`.
 *
 * @param makeStore - Creates a store to check.
 * @param define - Registers one test, such as `it` or `test`.
 * @param options - `reopen`, to check that entries survive a reopen.
 * @throws `InvalidOptionError` on bad arguments, as {@link sessionStoreConformance} does.
 */
export function runSessionStoreConformance<S extends SessionStore>(
  makeStore: () => S | Promise<S>,
  define: DefineSessionStoreCheck,
  options?: SessionStoreConformanceOptions<S>,
): void {
  if (typeof define !== "function") {
    throw new InvalidOptionError(
      "runSessionStoreConformance:",
      "define",
      `must be a function (name, run) that registers a test, such as vitest's it, received ${describeValue(define)}.`,
    );
  }
  for (const check of sessionStoreConformance(makeStore, options)) define(check.name, check.run);
}

type MutableEntry = { [key: string]: JsonValue };

/** A test entry: a schema version, a type, and the given fields. */
function entry(fields: Record<string, JsonValue>): SessionEntry {
  return { v: 1, type: "conformance", ...fields };
}

/** `pattern` repeated to exactly `length` UTF-16 code units, never ending in half a pair. */
function repeatTo(pattern: string, length: number): string {
  const text = pattern.repeat(Math.ceil(length / pattern.length)).slice(0, length);
  const last = text.charCodeAt(length - 1);
  return last >= 0xd800 && last <= 0xdbff ? `${text.slice(0, -1)}.` : text;
}

/** A fixed shuffle (a linear congruential generator), so failures repeat. */
function shuffle<T>(items: T[]): T[] {
  let seed = 12345;
  for (let index = items.length - 1; index > 0; index--) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    const other = seed % (index + 1);
    [items[index], items[other]] = [items[other]!, items[index]!];
  }
  return items;
}
