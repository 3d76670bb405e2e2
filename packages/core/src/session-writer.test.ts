import { describe, expect, it } from "vitest";
import { memorySessionStore, type SessionStore } from "./index.js";
import { SessionWriter } from "./session-writer.js";

describe("SessionWriter", () => {
  it("R6: an append that fails before it awaits (a store that throws at once, a lapsed lease) ends flush() with the failure instead of spinning for ever", async () => {
    const inner = memorySessionStore();
    const throwsAtOnce: SessionStore = {
      ...inner,
      append: () => {
        throw new Error("disk full");
      },
    };
    const writer = new SessionWriter(throwsAtOnce, "s", 0);
    writer.push({ v: 1 });
    expect(await writer.flush()).toMatchObject({ message: "disk full" });

    const lapsed = new SessionWriter(inner, "s", 0, {
      fence: 3,
      held: () => false,
      fenced: () => {},
    });
    lapsed.push({ v: 1 });
    expect(await lapsed.flush()).toMatchObject({ code: "session_fenced", fence: 3 });
    expect((await inner.load("s")).version).toBe(0);
  });

  it("H28: a fenced writer raises the fence once, with its first append or with an append of no entries", async () => {
    const store = memorySessionStore();
    const calls: [number, number | undefined][] = [];
    const spy: SessionStore = {
      ...store,
      append: (sessionId, version, entries, options) => {
        calls.push([entries.length, options?.fence]);
        return store.append(sessionId, version, entries, options);
      },
    };
    const fencing = { fence: 4, held: () => true, fenced: () => {} };
    const raising = new SessionWriter(spy, "a", 0, fencing);
    raising.raiseFence();
    raising.raiseFence();
    expect(await raising.flush()).toBeUndefined();
    raising.push({ v: 1 });
    raising.raiseFence();
    expect(await raising.flush()).toBeUndefined();
    expect(calls).toEqual([
      [0, 4],
      [1, 4],
    ]);
    calls.length = 0;
    const appending = new SessionWriter(spy, "b", 0, fencing);
    appending.push({ v: 1 });
    appending.raiseFence();
    expect(await appending.flush()).toBeUndefined();
    expect(calls).toEqual([[1, 4]]);
    await expect(store.append("b", 1, [{ v: 2 }], { fence: 3 })).rejects.toMatchObject({
      code: "session_fenced",
    });
  });
});
