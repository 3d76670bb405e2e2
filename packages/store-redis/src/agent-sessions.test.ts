/**
 * Agents on a Redis session store, each with its own connection, as separate processes or
 * workers would have: a conversation continues anywhere (R6), racing prompts never interleave
 * (R8), and an interrupted run resumes through another connection (R15).
 */
import { createAgent, type SessionStore } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from "vitest";
import { z } from "zod/v4";
import { type RedisSessionStore, redisSessionStore } from "./index.js";

let redis: RedisServer;
beforeAll(async () => {
  redis = await startRedis();
});
afterAll(async () => {
  await redis?.stop();
});

let model: ScriptedModelServer;
const stores: RedisSessionStore[] = [];
beforeEach(async () => {
  model = await createScriptedModelServer();
});
afterEach(async () => {
  await model.close();
  await Promise.all(stores.splice(0).map((store) => store.close()));
});

/** A store with a connection of its own. */
function openStore(): RedisSessionStore {
  const store = redisSessionStore({ url: redis.url });
  stores.push(store);
  return store;
}

function agentOn(
  sessionStore: SessionStore,
  tools: Parameters<typeof createAgent>[0]["tools"] = [],
) {
  return createAgent({
    model: "scripted",
    apiKey: "sk-test-store-redis",
    baseURL: model.anthropicBaseURL,
    tools,
    sessionStore,
  });
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

it("R6, D1: a conversation kept in Redis continues in an agent with a connection of its own", async () => {
  model.enqueue(text("Noted: your name is Ada."), text("Your name is Ada."));
  const first = await agentOn(openStore()).run("My name is Ada.", { sessionId: "r6" });
  expect(first.subtype).toBe("success");
  const second = await agentOn(openStore()).run("What is my name?", { sessionId: "r6" });
  expect(second).toMatchObject({
    subtype: "success",
    result: "Your name is Ada.",
    sessionId: "r6",
  });
  expect((model.requests[1]!.body as { messages: unknown[] }).messages).toEqual([
    { role: "user", content: "My name is Ada." },
    { role: "assistant", content: [{ type: "text", text: "Noted: your name is Ada." }] },
    { role: "user", content: "What is my name?" },
  ]);
  expect(await openStore().list()).toContain("r6");
});

it("R8: two agents on separate connections racing a new prompt on one session: exactly one runs, the other rejects with session_conflict and never calls the model", async () => {
  model.enqueue(text("winner"), text("loser"));
  const outcomes = await Promise.allSettled([
    agentOn(openStore()).run("a", { sessionId: "r8" }),
    agentOn(openStore()).run("b", { sessionId: "r8" }),
  ]);
  expect(outcomes.filter((outcome) => outcome.status === "fulfilled")).toHaveLength(1);
  const rejected = outcomes.filter((outcome) => outcome.status === "rejected");
  expect(rejected).toHaveLength(1);
  expect((rejected[0] as PromiseRejectedResult).reason).toMatchObject({
    name: "SessionConflictError",
    code: "session_conflict",
  });
  expect(model.requests).toHaveLength(1);
  const { entries } = await openStore().load("r8");
  expect(entries.map((entry) => entry.type)).toEqual(["run_started", "reply", "run_finished"]);
});

it("R15: a run interrupted for approval is resumed by another agent through another connection; the tool runs once", async () => {
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
  model.enqueue(
    { content: [{ type: "tool_use", id: "call_1", name: "deploy", input: { service: "api" } }] },
    text("The api is deployed."),
  );
  const paused = await agentOn(openStore(), [deploy]).run("Ship the api", { sessionId: "r15" });
  expect(paused.subtype).toBe("interrupted");
  const [pending] = paused.pendingApprovals ?? [];
  expect(pending).toMatchObject({ toolName: "deploy", input: { service: "api" } });
  expect(deployed).toEqual([]);

  const done = await agentOn(openStore(), [deploy])
    .resume("r15", { decisions: { [pending!.approvalId]: { approved: true } } })
    .finalResult();
  expect(done).toMatchObject({ subtype: "success", result: "The api is deployed." });
  expect(done.runId).toBe(paused.runId);
  expect(deployed).toEqual(["api"]);
});
