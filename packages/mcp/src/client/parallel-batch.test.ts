import { runToolBatch, type ToolCallOutcome } from "@lattice/scheduler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type FaultHttpServer, startFaultHttpServer } from "../test-servers/fault-server-http.js";
import { type McpToolSource, mcpServer } from "./mcp-server.js";

// M6 through Lattice's real scheduler: one model reply with three calls of a read-only MCP
// tool and two of a destructive one. The read-only calls overlap; the others run alone.

describe("M6: read-only MCP tools run concurrently in a batch, the others one at a time", () => {
  let server: FaultHttpServer;
  let source: McpToolSource;
  beforeAll(async () => {
    server = await startFaultHttpServer();
    source = mcpServer({ name: "fault", url: server.url, onWarning: () => {} });
  });
  afterAll(async () => {
    await source.close();
    await server.close();
  });

  it("M6: three 300 ms read-only calls overlap; two writes never overlap anything", async () => {
    const tools = await source.tools(new AbortController().signal);
    const started = Date.now();
    const batch = await runToolBatch({
      calls: [
        { id: "r1", name: "fault__slow", input: { ms: 300 } },
        { id: "r2", name: "fault__slow", input: { ms: 300 } },
        { id: "r3", name: "fault__slow", input: { ms: 300 } },
        { id: "w1", name: "fault__write", input: { ms: 150 } },
        { id: "w2", name: "fault__write", input: { ms: 150 } },
      ],
      tools: new Map(tools.map((tool) => [tool.name, tool])),
      signal: new AbortController().signal,
    });
    const elapsed = Date.now() - started;
    expect(batch.results.map((outcome) => [outcome.id, outcome.status])).toEqual([
      ["r1", "completed"],
      ["r2", "completed"],
      ["r3", "completed"],
      ["w1", "completed"],
      ["w2", "completed"],
    ]);
    const reads = batch.results.slice(0, 3);
    const writes = batch.results.slice(3);
    // The three reads were all running at one moment.
    expect(Math.max(...reads.map(startOf))).toBeLessThan(
      Math.min(...reads.map((r) => r.finishedAt)),
    );
    // No write overlaps any other call.
    for (const write of writes) {
      for (const other of batch.results) {
        if (other === write) continue;
        expect(startOf(other) >= write.finishedAt || other.finishedAt <= startOf(write)).toBe(true);
      }
    }
    // Serial would take 3 × 300 + 2 × 150 = 1200 ms; overlapped reads take about 600.
    expect(elapsed).toBeLessThan(1_100);
    expect(server.stats.maxInFlight).toBe(3);
  });
});

function startOf(outcome: ToolCallOutcome): number {
  if (outcome.startedAt === undefined) throw new Error(`${outcome.id} never started`);
  return outcome.startedAt;
}
