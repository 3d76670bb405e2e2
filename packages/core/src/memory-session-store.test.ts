import { describe, expect, it } from "vitest";
import { memorySessionStore } from "./memory-session-store.js";
import { SessionConflictError, type SessionEntry } from "./session-store.js";

describe("memorySessionStore()", () => {
  it("R11: keeps sessions in memory with compare-and-append", async () => {
    const store = memorySessionStore();
    expect(await store.append("s1", 0, [{ v: 1, type: "prompt", text: "hi" }])).toBe(1);
    const conflict = await store.append("s1", 0, [{ v: 1 }]).catch((error: unknown) => error);
    expect(conflict).toBeInstanceOf(SessionConflictError);
    expect(conflict).toMatchObject({
      code: "session_conflict",
      name: "SessionConflictError",
      sessionId: "s1",
      expectedVersion: 0,
      actualVersion: 1,
    });
    expect((conflict as Error).message).toBe(
      'Session "s1" was written by someone else: expected version 0, found 1. Nothing was appended. Another run is using this session; wait for it to finish, or load the session again.',
    );
    expect(await store.load("s1")).toEqual({
      entries: [{ v: 1, type: "prompt", text: "hi" }],
      version: 1,
    });
    expect(await store.list()).toEqual(["s1"]);
    expect(store.close).toBeUndefined();
  });

  it("R11: two stores are separate; one store shared is one set of sessions", async () => {
    const first = memorySessionStore();
    const second = memorySessionStore();
    await first.append("s", 0, [{ v: 1 }]);
    expect(await second.load("s")).toEqual({ entries: [], version: 0 });
  });

  it.each([
    [
      "load",
      (s: ReturnType<typeof memorySessionStore>) => s.load(""),
      'memorySessionStore load(): option "sessionId" must be a non-empty string, received "".',
    ],
    [
      "delete",
      (s: ReturnType<typeof memorySessionStore>) => s.delete(42 as never),
      'memorySessionStore delete(): option "sessionId" must be a non-empty string, received 42.',
    ],
    [
      "append",
      (s: ReturnType<typeof memorySessionStore>) => s.append("", 0, [{ v: 1 }]),
      'memorySessionStore append(): option "sessionId" must be a non-empty string, received "".',
    ],
  ])("R22: %s refuses an empty or non-string sessionId", async (_name, call, message) => {
    const error = await call(memorySessionStore()).catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: "invalid_option", name: "InvalidOptionError", message });
  });

  it.each([
    [-1, "-1"],
    [1.5, "1.5"],
    [Number.NaN, "NaN"],
    ["0", '"0"'],
    [undefined, "undefined"],
  ])("R22: append refuses expectedVersion %s", async (expectedVersion, shown) => {
    await expect(
      memorySessionStore().append("s", expectedVersion as number, [{ v: 1 }]),
    ).rejects.toThrow(
      `memorySessionStore append(): option "expectedVersion" must be a non-negative integer (the version last loaded or appended to; 0 for a new session), received ${shown}.`,
    );
  });

  it.each([
    [
      [],
      'option "entries" must be a non-empty array of JSON objects (empty only with a fence), received [].',
    ],
    [
      { v: 1 },
      'option "entries" must be a non-empty array of JSON objects (empty only with a fence), received {"v":1}.',
    ],
    [[null], "entries[0] is null, not a plain object."],
    [[[1, 2]], "entries[0] is an array, not a plain object."],
    [["text"], 'entries[0] is "text", not a plain object.'],
    [[{ v: 1 }, new Date(0)], "entries[1] is a Date, not a plain object."],
    [[{ v: 1, at: new Map() }], "entries[0].at is a Map, not a plain object."],
    [[{ v: 1, n: Number.POSITIVE_INFINITY }], "entries[0].n is Infinity."],
    [[{ v: 1, list: [1, undefined] }], "entries[0].list[1] is undefined."],
    [[{ v: 1, "odd key": { f: () => 1 } }], 'entries[0]["odd key"].f is a function.'],
    [[{ v: 1, big: 1n }], "entries[0].big is a bigint."],
  ])("R22: append refuses entries %#", async (entries, message) => {
    const store = memorySessionStore();
    await expect(store.append("s", 0, entries as SessionEntry[])).rejects.toThrow(message);
    expect(await store.list()).toEqual([]);
  });

  it.each([
    [-1, "-1"],
    [1.5, "1.5"],
    ["3", '"3"'],
    [Number.NaN, "NaN"],
    [2 ** 53, "9007199254740992"],
  ])("H28: append refuses fence %s, and an unknown append option", async (fence, shown) => {
    const store = memorySessionStore();
    await expect(store.append("s", 0, [{ v: 1 }], { fence: fence as number })).rejects.toThrow(
      `memorySessionStore append(): option "fence" must be a non-negative integer (the generation of the lease the append is made under), received ${shown}.`,
    );
    await expect(store.append("s", 0, [{ v: 1 }], { fense: 1 } as never)).rejects.toThrow(
      'memorySessionStore append(): unknown option "fense".',
    );
    expect(await store.list()).toEqual([]);
  });

  it("R22: append refuses an entry that contains itself", async () => {
    const cyclic: Record<string, unknown> = { v: 1 };
    cyclic.self = cyclic;
    await expect(memorySessionStore().append("s", 0, [cyclic as SessionEntry])).rejects.toThrow(
      "is nested more than 1000 levels deep (does it contain itself?)",
    );
  });

  it("R11: leaves out properties whose value is undefined, as JSON does", async () => {
    const store = memorySessionStore();
    await store.append("s", 0, [{ v: 1, gone: undefined } as unknown as SessionEntry]);
    expect((await store.load("s")).entries).toEqual([{ v: 1 }]);
    expect(Object.keys((await store.load("s")).entries[0]!)).toEqual(["v"]);
  });
});
