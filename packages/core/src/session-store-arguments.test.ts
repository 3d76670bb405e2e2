import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { InvalidOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createAgent, endRun, memorySessionStore } from "./index.js";
import { checkSessionId } from "./session-store-arguments.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

/** Ids that are not well-formed UTF-16: a store keeping them as UTF-8 gets U+FFFD back. */
const illFormed = ["\uD800", "a\uDC00b", "user-\uD83D", "\uDE00\uD83D"];

async function caught(call: () => unknown): Promise<unknown> {
  try {
    await call();
  } catch (error) {
    return error;
  }
  return "no error";
}

describe("session ids are checked where they enter (H25)", () => {
  it("H25: checkSessionId refuses a lone surrogate, naming the option and the code unit", () => {
    for (const id of illFormed) {
      const error = (() => {
        try {
          checkSessionId("myStore append():", id);
        } catch (thrown) {
          return thrown;
        }
        return undefined;
      })();
      expect(error).toBeInstanceOf(InvalidOptionError);
      expect(error).toMatchObject({ code: "invalid_option", option: "sessionId" });
      expect((error as Error).message).toMatch(
        /^myStore append\(\): option "sessionId" must be well-formed UTF-16 text: it holds a lone surrogate \(U\+D[89A-F][0-9A-F]{2} at index \d+\)/,
      );
    }
    // Well-formed ids, a surrogate pair among them, pass.
    for (const id of ["s1", "ü-ß", "emoji-😀", "\uD83D\uDE00"]) checkSessionId("x:", id);
  });

  it("H25: the memory store refuses such an id in append, load and delete, so list() returns only ids that load", async () => {
    const store = memorySessionStore();
    for (const id of illFormed) {
      for (const call of [
        () => store.append(id, 0, [{ v: 1 }]),
        () => store.load(id),
        () => store.delete(id),
      ]) {
        expect(await caught(call)).toBeInstanceOf(InvalidOptionError);
      }
    }
    await store.append("ok-😀", 0, [{ v: 1 }]);
    const ids = await store.list();
    expect(ids).toEqual(["ok-😀"]);
    for (const id of ids) expect((await store.load(id)).version).toBe(1);
  });

  it("H25: run, query, resume, step and endRun refuse an ill-formed sessionId with InvalidOptionError before anything runs", async () => {
    const store = memorySessionStore();
    const agent = createAgent({
      apiKey: "sk-test",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      sessionStore: store,
    });
    const id = "chat-\uD800";
    const calls: [string, () => unknown][] = [
      ["run", () => agent.run("hi", { sessionId: id })],
      ["query", () => agent.query("hi", { sessionId: id })],
      ["resume", () => agent.resume(id)],
      ["step", () => agent.step(id, { prompt: "hi" })],
      ["endRun", () => endRun({ store, sessionId: id, errors: ["x"] })],
    ];
    for (const [name, call] of calls) {
      const error = await caught(call);
      expect(error, name).toBeInstanceOf(InvalidOptionError);
      expect(error, name).toMatchObject({ option: "sessionId" });
      expect((error as Error).message, name).toContain("lone surrogate");
    }
    expect(server.requests).toHaveLength(0);
    expect(await store.list()).toEqual([]);
  });
});
