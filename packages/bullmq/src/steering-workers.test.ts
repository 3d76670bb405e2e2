// L12: a run steered by typed output, prepareStep, an output guardrail, a fallback and a budget
// runs on workers step by step, like any other: each step on whichever worker takes it.
import { type AgentOptions, memorySessionStore, type RunLogEntry } from "@lattice/core";
import { anthropic } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createRunQueue, createRunWorker } from "./index.js";

let redis: RedisServer;
let primary: ScriptedModelServer;
let backup: ScriptedModelServer;
beforeAll(async () => {
  redis = await startRedis();
  primary = await createScriptedModelServer();
  backup = await createScriptedModelServer();
});
afterAll(async () => {
  await primary?.close();
  await backup?.close();
  await redis?.stop();
});

const lookup = tool("lookup", "Look up an order", z.object({ id: z.string() }), ({ id }) => ({
  content: `order ${id}: 2 items, 30 EUR`,
}));

describe("@lattice/bullmq: steering a run on workers (L12)", () => {
  it("L12: typed output, a prepareStep override, an output guardrail's retry, a fallback and a budget across two workers", async () => {
    primary.enqueue({ status: 529 });
    backup.enqueue(
      {
        content: [{ type: "tool_use", name: "lookup", input: { id: "o-7" } }],
        usage: { inputTokens: 100, outputTokens: 10 },
      },
      {
        content: [{ type: "text", text: '{"items":2,"total":30,"note":"ok"}' }],
        usage: { inputTokens: 150, outputTokens: 10 },
      },
      {
        content: [{ type: "text", text: '{"items":2,"total":30,"note":"Two items, 30 EUR."}' }],
        usage: { inputTokens: 200, outputTokens: 12 },
      },
    );
    const guardrailRuns: string[] = [];
    const agent: AgentOptions = {
      provider: anthropic({ apiKey: "k", baseURL: primary.anthropicBaseURL, maxRetries: 0 }),
      model: "claude-sonnet-4-6",
      fallback: [
        {
          provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }),
          model: "claude-haiku-4-5",
        },
      ],
      tools: [lookup],
      outputSchema: z.object({ items: z.number(), total: z.number(), note: z.string() }),
      prepareStep: ({ stepNumber }) =>
        stepNumber === 0 ? { system: "Look the order up first." } : undefined,
      guardrails: {
        output: [
          function sentence({ output }) {
            guardrailRuns.push(JSON.stringify(output));
            return (output as { note: string }).note.length < 5
              ? { retry: "The note must be a sentence." }
              : { tripwire: false };
          },
        ],
      },
      maxTotalTokens: 100_000,
    };
    const sessionStore = memorySessionStore();
    const connection = redis.url;
    const name = "steering-runs";
    const queue = createRunQueue({ connection, name, stepBackoffMs: 50 });
    const workers = [0, 1].map(() =>
      createRunWorker({
        connection,
        name,
        agents: { desk: agent },
        sessionStore,
        lockDurationMs: 2_000,
        stepBackoffMs: 50,
      }),
    );
    try {
      const { runId } = await queue.enqueue("desk", "Order o-7?", { sessionId: "desk-1" });
      const result = await queue.result(runId, { timeoutMs: 20_000 });
      expect(result).toMatchObject({
        subtype: "success",
        output: { items: 2, total: 30, note: "Two items, 30 EUR." },
      });
      // Haiku 4.5 served every call: $1 in, $5 out per million tokens.
      expect(result.usage.costUsd).toBeCloseTo((450 * 1 + 32 * 5) / 1e6, 12);
      expect(primary.requests).toHaveLength(1);
      expect(backup.requests).toHaveLength(3);
      // The override went with the first call only, to the fallback it moved to.
      expect((backup.requests[0]!.body as { system?: unknown }).system).toEqual(
        expect.stringContaining("Look the order up first."),
      );
      expect(
        JSON.stringify((backup.requests[1]!.body as { system?: unknown }).system ?? ""),
      ).not.toContain("Look the order up first.");
      // The guardrail ran once per answer, never again for a step taken by another worker.
      expect(guardrailRuns).toHaveLength(2);
      const entries = (await sessionStore.load("desk-1")).entries as unknown as RunLogEntry[];
      const replies = entries.filter((entry) => entry.type === "reply");
      expect(replies.map((reply) => [reply.model, reply.fallback])).toEqual([
        ["claude-haiku-4-5", 1],
        ["claude-haiku-4-5", 1],
        ["claude-haiku-4-5", 1],
      ]);
      expect(replies[0]!.overrides).toEqual({ system: "Look the order up first." });
      expect(entries.filter((entry) => entry.type === "guardrail")).toHaveLength(2);
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
    }
  });
});
