// C11: a run whose conversation is compacted runs on workers step by step like any other: the
// compaction is part of the model step whichever worker takes it, stored before its call.
import { type AgentOptions, compact, memorySessionStore, type RunLogEntry } from "@lattice/core";
import { anthropic } from "@lattice/providers";
import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
} from "@lattice/providers/testing";
import { type RedisServer, startRedis } from "@lattice/test-servers";
import { tool } from "@lattice/tools";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createRunQueue, createRunWorker } from "./index.js";

let redis: RedisServer;
let model: ScriptedModelServer;
let calls = 0;
const isSummary = (request: RecordedRequest): boolean =>
  JSON.stringify(request.body).includes("You write summaries of conversations");
beforeAll(async () => {
  redis = await startRedis();
  model = await createScriptedModelServer({
    respond: (request) => {
      if (isSummary(request)) return { content: [{ type: "text", text: "SUMMARY of the reads" }] };
      calls++;
      return calls <= 6
        ? { content: [{ type: "tool_use", name: "read", input: { path: `f${calls}` } }] }
        : { content: [{ type: "text", text: "all read" }] };
    },
  });
});
afterAll(async () => {
  await model?.close();
  await redis?.stop();
});

const read = tool("read", "Read a file", z.object({ path: z.string() }), ({ path }) => ({
  content: `${path}: ${"x".repeat(2048)}`,
}));

describe("@lattice/bullmq: compaction on workers (C11)", () => {
  it("C11: a run compacts across two workers' steps; the compacted conversation is what the next call sends", async () => {
    const agent: AgentOptions = {
      provider: anthropic({ apiKey: "k", baseURL: model.anthropicBaseURL }),
      model: "scripted",
      tools: [read],
      contextManagement: { maxInputTokens: 2500, strategies: [compact({ keepLastTurns: 2 })] },
    };
    const sessionStore = memorySessionStore();
    const connection = redis.url;
    const name = "context-runs";
    const queue = createRunQueue({ connection, name, stepBackoffMs: 50 });
    const workers = [0, 1].map(() =>
      createRunWorker({
        connection,
        name,
        agents: { reader: agent },
        sessionStore,
        lockDurationMs: 2_000,
        stepBackoffMs: 50,
      }),
    );
    try {
      const { runId } = await queue.enqueue("reader", "Read six files", { sessionId: "ctx-1" });
      const result = await queue.result(runId, { timeoutMs: 20_000 });
      expect(result.subtype).toBe("success");
      const entries = (await sessionStore.load("ctx-1")).entries as unknown as RunLogEntry[];
      const at = entries.findIndex((entry) => entry.type === "compaction");
      expect(at).toBeGreaterThan(0);
      // The request after the summary call starts from the summary.
      const summaryAt = model.requests.findIndex(isSummary);
      expect(summaryAt).toBeGreaterThan(0);
      const next = (model.requests[summaryAt + 1]!.body as { messages: unknown[] }).messages;
      expect(JSON.stringify(next[0])).toContain("SUMMARY of the reads");
      // Its usage is the run's (C5).
      const compaction = entries[at]!;
      expect(compaction.type === "compaction" && compaction.usage !== undefined).toBe(true);
    } finally {
      await Promise.all(workers.map((worker) => worker.close()));
      await queue.close();
    }
  });
});
