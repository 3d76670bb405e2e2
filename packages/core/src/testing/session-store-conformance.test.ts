import { describe, expect, it } from "vitest";
import { memorySessionStore } from "../memory-session-store.js";
import type { SessionCheckpoint, SessionEntry, SessionStore } from "../session-store.js";
import { SessionConflictError, SessionFencedError } from "../session-store.js";
import { runSessionStoreConformance, sessionStoreConformance } from "./index.js";

describe("memorySessionStore() passes the conformance suite", () => {
  runSessionStoreConformance(memorySessionStore, it);
});

describe("memorySessionStore() with a reopen that keeps the same store", () => {
  const checks = sessionStoreConformance(memorySessionStore, { reopen: (store) => store });
  it.each(
    checks.filter((check) => check.name.includes("reopen")).map((check) => [check.name, check]),
  )("%s", async (_name, check) => {
    await check.run();
  });
});

/** Runs one check of the suite against `store` and returns its failure message. */
async function failureOf(makeStore: () => SessionStore, name: string): Promise<string> {
  const check = sessionStoreConformance(makeStore).find((candidate) =>
    candidate.name.startsWith(name),
  );
  if (check === undefined) throw new Error(`no check named ${name}`);
  try {
    await check.run();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error(`the check "${check.name}" passed a broken store`);
}

/** A memory store with one method replaced. */
function broken(overrides: (inner: SessionStore) => Partial<SessionStore>): () => SessionStore {
  return () => {
    const inner = memorySessionStore();
    return { ...inner, ...overrides(inner) };
  };
}

/**
 * A memory store that checks an append's fence, then waits a moment (appends with entries
 * always, raises when `raisesWait`) before it sets the fence (the highest, or the last when not
 * `keepsHighest`) and appends: not one atomic step.
 */
function fencedLater(options: {
  readonly raisesWait: boolean;
  readonly keepsHighest: boolean;
}): () => SessionStore {
  return broken((inner) => {
    const fences = new Map<string, number>();
    return {
      async append(sessionId, expectedVersion, entries, appendOptions) {
        const fence = appendOptions?.fence;
        const current = fences.get(sessionId);
        if (fence !== undefined && fence < (current ?? 0)) {
          throw new SessionFencedError(sessionId, fence, current);
        }
        if (entries.length > 0 || options.raisesWait) {
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
        if (fence !== undefined) {
          const highest = Math.max(fence, fences.get(sessionId) ?? 0);
          fences.set(sessionId, options.keepsHighest ? highest : fence);
        }
        if (entries.length > 0) return inner.append(sessionId, expectedVersion, entries);
        const { version } = await inner.load(sessionId);
        if (version !== expectedVersion) {
          throw new SessionConflictError(sessionId, expectedVersion, version);
        }
        return version;
      },
    };
  });
}

/**
 * A memory store whose checkpoints are kept beside it, with one flaw: it keeps an older
 * checkpoint over a newer (`keepsOlder`), keeps a session's checkpoint after delete
 * (`keepsAfterDelete`), or checks a save and writes it after a wait (`savesLater`).
 */
function checkpointsBeside(flaw: {
  readonly keepsOlder?: boolean;
  readonly keepsAfterDelete?: boolean;
  readonly savesLater?: boolean;
}): () => SessionStore {
  return broken((inner) => {
    const kept = new Map<string, SessionCheckpoint>();
    return {
      async saveCheckpoint(sessionId, checkpoint) {
        const { version } = await inner.load(sessionId);
        const current = kept.get(sessionId);
        if (checkpoint.version > version) return false;
        if (!flaw.keepsOlder && current !== undefined && current.version >= checkpoint.version) {
          return false;
        }
        if (flaw.savesLater) {
          await new Promise((resolve) => setTimeout(resolve, checkpoint.version % 3));
        }
        kept.set(sessionId, JSON.parse(JSON.stringify(checkpoint)) as SessionCheckpoint);
        return true;
      },
      async load(sessionId, options) {
        const snapshot = await inner.load(sessionId);
        const checkpoint = options?.fromCheckpoint ? kept.get(sessionId) : undefined;
        if (checkpoint === undefined) return snapshot;
        return {
          entries: snapshot.entries.slice(checkpoint.version),
          version: snapshot.version,
          checkpoint: JSON.parse(JSON.stringify(checkpoint)) as SessionCheckpoint,
        };
      },
      async delete(sessionId) {
        if (!flaw.keepsAfterDelete) kept.delete(sessionId);
        return inner.delete(sessionId);
      },
    };
  });
}

describe("the conformance suite", () => {
  it("R12: every check is named for its clause (R12, H28 for fencing, C8 for checkpoints) and the suite has the listed checks", () => {
    const names = sessionStoreConformance(memorySessionStore).map((check) => check.name);
    expect(names.filter((name) => name.startsWith("R12: "))).toHaveLength(14);
    expect(names.filter((name) => name.startsWith("H28: "))).toHaveLength(8);
    expect(names.filter((name) => name.startsWith("C8: "))).toHaveLength(12);
    expect(names).toHaveLength(34);
    expect(sessionStoreConformance(memorySessionStore, { reopen: (store) => store })).toHaveLength(
      37,
    );
    expect(new Set(names).size).toBe(names.length);
  });

  it("H28: fails a store that ignores fences, and one whose fence check is not atomic with the append", async () => {
    const ignoresFences = broken((inner) => ({
      append: (sessionId, expectedVersion, entries) =>
        entries.length === 0
          ? inner.load(sessionId).then(({ version }) => version)
          : inner.append(sessionId, expectedVersion, entries),
    }));
    expect(await failureOf(ignoresFences, "H28: a fenced append raises")).toMatch(
      /an append with fence 4 after fence 5: append\(.*\) resolved with 2 although the session's fence was 5; it must reject with a SessionFencedError/,
    );
    // Checks, then writes entries after an await: a fence raise may slip in between.
    const checksFirst = fencedLater({ raisesWait: false, keepsHighest: true });
    expect(await failureOf(checksFirst, "H28: a fence raise and a fenced append")).toMatch(
      /both succeeded: the fence check and the version check are not one atomic step/,
    );
  });

  it("H28: fails a store whose concurrent fence raises leave the last one instead of the highest, and one that does not declare fencedAppends", async () => {
    // Checked, then set after a wait: of racing raises the last one wins.
    const lastWins = fencedLater({ raisesWait: true, keepsHighest: false });
    expect(await failureOf(lastWins, "H28: concurrent fence raises")).toMatch(
      /resolved with 2 although the session's fence was 12/,
    );
    const undeclared = () => {
      const { fencedAppends: _, ...store } = memorySessionStore();
      return store;
    };
    expect(await failureOf(undeclared, "H28: the store declares fencedAppends")).toMatch(
      /fencedAppends is undefined/,
    );
  });

  it("C8: a store without checkpoints passes the C8 checks (checkpoints are optional); one that declares them without saveCheckpoint fails", async () => {
    const plain = () => {
      const { checkpoints: _, saveCheckpoint: __, ...store } = memorySessionStore();
      return store as SessionStore;
    };
    for (const check of sessionStoreConformance(plain, { reopen: (store) => store })) {
      if (check.name.startsWith("C8: ")) await check.run();
    }
    const undeclared = () => {
      const { saveCheckpoint: _, ...store } = memorySessionStore();
      return store as SessionStore;
    };
    expect(await failureOf(undeclared, "C8: a store that declares checkpoints")).toMatch(
      /checkpoints is true but saveCheckpoint is "undefined"/,
    );
    expect(await failureOf(undeclared, "C8: load with fromCheckpoint returns")).toMatch(
      /declares checkpoints: true but has no saveCheckpoint method/,
    );
  });

  it("C8: fails a store that ignores fromCheckpoint, keeps an older checkpoint over a newer, or keeps a checkpoint after delete", async () => {
    const ignoresOption = broken((inner) => ({ load: (sessionId) => inner.load(sessionId) }));
    expect(await failureOf(ignoresOption, "C8: load with fromCheckpoint returns")).toMatch(
      /load from the checkpoint at 4 of 10: the snapshot's checkpoint is undefined/,
    );
    const lastWins = checkpointsBeside({ keepsOlder: true });
    expect(await failureOf(lastWins, "C8: a checkpoint older than")).toMatch(
      /saveCheckpoint at 5 after the checkpoint at 5: got true, expected false/,
    );
    const keepsAfterDelete = checkpointsBeside({ keepsAfterDelete: true });
    expect(await failureOf(keepsAfterDelete, "C8: delete removes")).toMatch(
      /a deleted session loaded with fromCheckpoint: the snapshot has the checkpoint/,
    );
  });

  it("C8: fails a store whose checkpoint saves are not atomic (an older one lands after a newer), and one that reads the entries and the checkpoint in two steps", async () => {
    // Checks the versions, then writes after a wait: of racing saves the last one wins.
    const saveLater = checkpointsBeside({ savesLater: true });
    expect(await failureOf(saveLater, "C8: appends and checkpoint saves racing")).toMatch(
      /the checkpoint at \d+, though the one at \d+ was acknowledged|the newest checkpoint acknowledged must stay/,
    );
    // Reads the entries, waits, then reads the checkpoint: a newer one may cover entries it lacks.
    const twoSteps = broken((inner) => ({
      async load(sessionId, options) {
        const whole = await inner.load(sessionId);
        if (!options?.fromCheckpoint) return whole;
        await new Promise((resolve) => setTimeout(resolve, 1));
        const { checkpoint } = await inner.load(sessionId, { fromCheckpoint: true });
        if (checkpoint === undefined) return whole;
        return {
          entries: whole.entries.slice(checkpoint.version),
          version: whole.version,
          checkpoint,
        };
      },
    }));
    expect(await failureOf(twoSteps, "C8: appends and checkpoint saves racing")).toMatch(
      /not read in one atomic step/,
    );
  });

  it("R12: runSessionStoreConformance registers each check with define(name, run)", async () => {
    const defined: [string, () => Promise<void>][] = [];
    runSessionStoreConformance(memorySessionStore, (name, run) => defined.push([name, run]));
    expect(defined.map(([name]) => name)).toEqual(
      sessionStoreConformance(memorySessionStore).map((check) => check.name),
    );
    await defined[0]![1]();
  });

  it("R12: fails a store that ignores expectedVersion", async () => {
    const ignoresVersion = () => {
      const sessions = new Map<string, string[]>();
      const store: SessionStore = {
        async load(sessionId) {
          const texts = sessions.get(sessionId) ?? [];
          return { entries: texts.map((text) => JSON.parse(text)), version: texts.length };
        },
        async append(sessionId, _expectedVersion, entries) {
          const texts = sessions.get(sessionId) ?? [];
          texts.push(...entries.map((entry) => JSON.stringify(entry)));
          sessions.set(sessionId, texts);
          return texts.length;
        },
        list: async () => [...sessions.keys()].sort(),
        delete: async (sessionId) => sessions.delete(sessionId),
      };
      return store;
    };
    expect(await failureOf(ignoresVersion, "R12: compare-and-append")).toMatch(
      /append at version 1 to an unknown session: .* resolved with 1 although the session's version was 0; it must reject with a SessionConflictError/,
    );
    expect(await failureOf(ignoresVersion, "R12: of 20 writers")).toMatch(
      /20 writers appended at version 0: 20 succeeded/,
    );
  });

  it("R12: fails a store whose load-check-write is not atomic (lost updates under concurrent writers)", async () => {
    const racy = broken((inner) => ({
      async append(sessionId, expectedVersion, entries) {
        const { version } = await inner.load(sessionId);
        if (version !== expectedVersion) {
          throw new SessionConflictError(sessionId, expectedVersion, version);
        }
        await new Promise((resolve) => setTimeout(resolve, 1));
        // Writes without checking again: the check and the write are not one step.
        return inner.append(sessionId, (await inner.load(sessionId)).version, entries);
      },
    }));
    expect(await failureOf(racy, "R12: of 20 writers")).toMatch(/expected exactly one/);
  });

  it("R12: fails a store that interleaves the entries of one append with another's", async () => {
    const oneByOne = broken((inner) => ({
      async append(sessionId, expectedVersion, entries) {
        const { version } = await inner.load(sessionId);
        if (version !== expectedVersion) {
          throw new SessionConflictError(sessionId, expectedVersion, version);
        }
        let current = version;
        for (const entry of entries) {
          await new Promise((resolve) => setTimeout(resolve, 0));
          current = await inner.append(sessionId, (await inner.load(sessionId)).version, [entry]);
        }
        return current;
      },
    }));
    expect(await failureOf(oneByOne, "R12: writers that reload and retry")).toMatch(
      /batches interleaved|in the log twice|got \d+ entries|the entry count/,
    );
  });

  it("R12: fails a store that shares entry objects with its callers", async () => {
    const sharing = () => {
      const sessions = new Map<string, SessionEntry[]>();
      const store: SessionStore = {
        async load(sessionId) {
          const entries = sessions.get(sessionId) ?? [];
          return { entries, version: entries.length };
        },
        async append(sessionId, expectedVersion, entries) {
          const log = sessions.get(sessionId) ?? [];
          if (log.length !== expectedVersion) {
            throw new SessionConflictError(sessionId, expectedVersion, log.length);
          }
          log.push(...entries);
          sessions.set(sessionId, log);
          return log.length;
        },
        async list() {
          return [...sessions.keys()].sort();
        },
        async delete(sessionId) {
          return sessions.delete(sessionId);
        },
      };
      return store;
    };
    expect(await failureOf(sharing, "R12: entries are copies")).toMatch(
      /a load after the appended entry was changed: entry 0 is not the entry appended there/,
    );
  });

  it("R12: fails a store that sorts keys, lists in code-point order, or keeps deleted sessions", async () => {
    const sortsKeys = broken((inner) => ({
      async load(sessionId) {
        const snapshot = await inner.load(sessionId);
        const sort = (value: unknown): unknown =>
          Array.isArray(value)
            ? value.map(sort)
            : value !== null && typeof value === "object"
              ? Object.fromEntries(
                  Object.keys(value)
                    .sort()
                    .map((key) => [key, sort((value as Record<string, unknown>)[key])]),
                )
              : value;
        return { ...snapshot, entries: snapshot.entries.map(sort) as SessionEntry[] };
      },
    }));
    expect(await failureOf(sortsKeys, "R12: nested JSON")).toMatch(
      /keys came back in another order/,
    );

    const codePointOrder = broken((inner) => ({
      async list() {
        return (await inner.list()).sort((a, b) => {
          const left = [...a].map((c) => c.codePointAt(0)!);
          const right = [...b].map((c) => c.codePointAt(0)!);
          for (let i = 0; i < Math.min(left.length, right.length); i++) {
            if (left[i] !== right[i]) return left[i]! - right[i]!;
          }
          return left.length - right.length;
        });
      },
    }));
    expect(await failureOf(codePointOrder, "R12: 200 sessions")).toMatch(/not in code-unit order/);

    const keepsDeleted = broken(() => ({ delete: async () => true }));
    expect(await failureOf(keepsDeleted, "R12: delete")).toMatch(
      /a second delete of the same session: got true, expected false/,
    );
  });

  it("R12: fails a store that loses large or unicode entries", async () => {
    const truncates = broken((inner) => ({
      append: (sessionId, expectedVersion, entries) =>
        inner.append(
          sessionId,
          expectedVersion,
          JSON.parse(JSON.stringify(entries).replace(/\\u0000/g, "")) as SessionEntry[],
        ),
    }));
    expect(await failureOf(truncates, "R12: unicode")).toMatch(/entry 0 is not the entry appended/);
    expect(await failureOf(truncates, "R12: 1 MB")).toMatch(/is not the entry appended there/);
  });

  it("R12: refuses bad arguments with InvalidOptionError", () => {
    expect(() => sessionStoreConformance("store" as never)).toThrow(
      'sessionStoreConformance: option "makeStore" must be a function',
    );
    expect(() =>
      sessionStoreConformance(memorySessionStore, { reopn: () => undefined } as never),
    ).toThrow(
      'sessionStoreConformance: unknown option "reopn". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(() => runSessionStoreConformance(memorySessionStore, undefined as never)).toThrow(
      'runSessionStoreConformance: option "define" must be a function',
    );
  });
});
