import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { catchRejection, raceAbort } from "./race-abort.js";

describe("raceAbort", () => {
  it("resolves or rejects like the promise while the signal does not abort", async () => {
    const controller = new AbortController();
    await expect(raceAbort(Promise.resolve(1), controller.signal)).resolves.toBe(1);
    await expect(raceAbort(2, controller.signal)).resolves.toBe(2);
    await expect(raceAbort(Promise.resolve(3), undefined)).resolves.toBe(3);
    await expect(raceAbort(Promise.reject(new Error("no")), controller.signal)).rejects.toThrow(
      "no",
    );
  });

  it("rejects with an AbortError when the signal aborts first, or was aborted already", async () => {
    const controller = new AbortController();
    const pending = raceAbort(new Promise<never>(() => {}), controller.signal);
    controller.abort("stop");
    await expect(pending).rejects.toMatchObject({ name: "AbortError", cause: "stop" });
    let lateRejection: () => void = () => {};
    const late = new Promise<never>((_resolve, reject) => {
      lateRejection = () => reject(new Error("late"));
    });
    await expect(raceAbort(late, controller.signal)).rejects.toMatchObject({
      name: "AbortError",
    });
    lateRejection(); // Swallowed: no unhandled rejection fails the run.
    await new Promise((resolve) => setTimeout(resolve, 0));
  });

  it("removes its abort listener as soon as the promise settles", async () => {
    const controller = new AbortController();
    for (let index = 0; index < 100; index++) {
      await raceAbort(Promise.resolve(index), controller.signal);
      await raceAbort(Promise.reject(new Error("x")), controller.signal).catch(() => {});
    }
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
    const pending = raceAbort(new Promise(() => {}), controller.signal).catch(() => {});
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(1);
    controller.abort();
    await pending;
    expect(getEventListeners(controller.signal, "abort")).toHaveLength(0);
  });
});

describe("catchRejection", () => {
  it("H1: a listener's rejected promise or thenable goes to onRejected, never unhandled; other values are ignored", async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on("unhandledRejection", onUnhandled);
    try {
      const rejected: string[] = [];
      catchRejection(Promise.reject(new Error("async listener")), () => rejected.push("promise"));
      const thenable = {
        // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise is the case tested.
        then: (_: unknown, reject: (reason: unknown) => void) => reject("thenable"),
      };
      catchRejection(thenable, () => rejected.push("thenable"));
      catchRejection(Promise.resolve(1), () => rejected.push("resolved"));
      // biome-ignore lint/suspicious/noThenProperty: an object whose then is no function is no thenable.
      const notThenable = { then: 1 };
      for (const value of [undefined, null, 0, "text", notThenable]) {
        catchRejection(value, () => rejected.push(String(value)));
      }
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(rejected.sort()).toEqual(["promise", "thenable"]);
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });
});
