// One function builds every result message (issue 22): the result a run gives as it ends and
// the one rebuilt from its stored log (a step asked again after the run ended, endRun() on a
// finished run) are the same message, but for how long the run took.
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, expect, it } from "vitest";
import { z } from "zod/v4";
import { createAgent, endRun, memorySessionStore, type SDKResultMessage } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const report = tool(
  "report",
  "Files the report and ends the run",
  z.object({ title: z.string() }),
  async ({ title }) => ({
    content: `filed ${title}`,
    endTurn: true,
    // What JSON cannot keep: a Date becomes its ISO text, an undefined field is dropped.
    structuredResult: { title, filedAt: new Date(Date.UTC(2026, 0, 2)), draft: undefined },
  }),
);

function withoutDuration(result: SDKResultMessage): Omit<SDKResultMessage, "durationMs"> {
  const { durationMs: _durationMs, ...rest } = result;
  return rest;
}

it("R2: a run's live result equals its result rebuilt from the log, structuredResult as the log keeps it", async () => {
  const store = memorySessionStore();
  const agent = createAgent({
    apiKey: "sk-test",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    tools: [report],
    sessionStore: store,
  });
  server.enqueue({
    content: [{ type: "tool_use", id: "c1", name: "report", input: { title: "Q3" } }],
  });
  const live = await agent.run("File the Q3 report", { sessionId: "s-1" });
  expect(live.subtype).toBe("success");
  expect(live.structuredResult).toEqual({ title: "Q3", filedAt: "2026-01-02T00:00:00.000Z" });

  const again = await agent.step("s-1", { runId: live.runId });
  expect(again.status).toBe("ended");
  if (again.status !== "ended") return;
  expect(withoutDuration(again.result)).toEqual(withoutDuration(live));
  expect(Object.keys(again.result)).toEqual(Object.keys(live));

  const ended = await endRun({ store, sessionId: "s-1", errors: ["not needed"] });
  expect(withoutDuration(ended)).toEqual(withoutDuration(live));
});
