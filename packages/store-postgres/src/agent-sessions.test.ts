/**
 * The store under a real agent: conversations kept in Postgres (R6) and approvals resumed
 * through another pool, as another process would (R15), following the README's example.
 */
import { createAgent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type PostgresServer, startPostgres } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { z } from "zod/v4";
import { type PostgresSessionStore, postgresSessionStore } from "./index.js";

let database: PostgresServer;
let model: ScriptedModelServer;
const stores: PostgresSessionStore[] = [];
beforeAll(async () => {
  database = await startPostgres();
});
afterAll(async () => {
  await database?.stop();
});
beforeEach(async () => {
  model = await createScriptedModelServer();
});
afterEach(async () => {
  await Promise.all(stores.splice(0).map((store) => store.close()));
  await model.close();
});

/** A store with a pool of its own, as a separate process would have. */
function openStore(): PostgresSessionStore {
  const store = postgresSessionStore({ connectionString: database.connectionString });
  stores.push(store);
  return store;
}

it("D1: the README example: a run paused for approval is stored in Postgres, and resume() through another pool finishes it (R15)", async () => {
  model.enqueue(
    { content: [{ type: "tool_use", name: "deploy", input: { service: "api" } }] },
    { content: [{ type: "text", text: "Deployed api." }] },
  );
  const deployed: string[] = [];
  const deploy = tool(
    "deploy",
    "Deploys a service",
    z.object({ service: z.string() }),
    async ({ service }) => {
      deployed.push(service);
      return { content: `deployed ${service}` };
    },
    { needsApproval: true },
  );
  const options = {
    apiKey: "offline",
    baseURL: model.anthropicBaseURL,
    model: "any",
    tools: [deploy],
  };

  const store = openStore();
  await store.migrate();
  const sessionId = "ops-1";
  const paused = await createAgent({ ...options, sessionStore: store }).run("Ship the api", {
    sessionId,
  });
  expect(paused.subtype).toBe("interrupted");
  expect(deployed).toEqual([]);
  const [approval] = paused.pendingApprovals ?? [];

  const elsewhere = openStore();
  await elsewhere.migrate();
  const done = await createAgent({ ...options, sessionStore: elsewhere })
    .resume(sessionId, { decisions: { [approval!.approvalId]: { approved: true } } })
    .finalResult();
  expect(done).toMatchObject({ subtype: "success", result: "Deployed api.", runId: paused.runId });
  expect(deployed).toEqual(["api"]);
  expect(await store.list()).toEqual([sessionId]);
});

it("D1: a second run with the same sessionId, through another pool, continues the conversation kept in Postgres (R6)", async () => {
  model.enqueue(
    { content: [{ type: "text", text: "Three invoices are open." }] },
    { content: [{ type: "text", text: "They total 420 EUR." }] },
  );
  const options = { apiKey: "offline", baseURL: model.anthropicBaseURL, model: "any" };
  const first = openStore();
  await first.migrate();
  await createAgent({ ...options, sessionStore: first }).run("Find the open invoices", {
    sessionId: "user-42",
  });
  const next = await createAgent({ ...options, sessionStore: openStore() }).run("Now total them", {
    sessionId: "user-42",
  });
  expect(next.result).toBe("They total 420 EUR.");
  const sent = (model.requests[1]!.body as { messages: { role: string; content: unknown }[] })
    .messages;
  expect(sent.map((message) => message.role)).toEqual(["user", "assistant", "user"]);
  expect(JSON.stringify(sent[1]!.content)).toContain("Three invoices are open.");
  expect((await first.load("user-42")).entries.map((entry) => entry.type)).toEqual([
    "run_started",
    "reply",
    "run_finished",
    "run_started",
    "reply",
    "run_finished",
  ]);
});
