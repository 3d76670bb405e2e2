import { createAgent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { faultServerCommand, isRunning, waitFor } from "../test-servers/commands.js";
import type { FaultServerStats } from "../test-servers/fault-server.js";
import { mcpServer } from "./mcp-server.js";

// An MCP server's tools in a real agent run, on the scripted model server (offline).

let model: ScriptedModelServer;
beforeEach(async () => {
  model = await createScriptedModelServer();
});
afterEach(async () => {
  await model.close();
});

const agentOptions = () => ({
  apiKey: "sk-test-mcp",
  baseURL: model.anthropicBaseURL,
  model: "scripted",
});

const own = tool("own_tool", "Says hello", z.object({}), async () => ({
  content: "hello from Lattice",
}));

function toolResults(messages: readonly { role: string; content: unknown }[]) {
  return messages
    .filter((message) => message.role === "user" && Array.isArray(message.content))
    .flatMap(
      (message) =>
        message.content as {
          type: string;
          tool_use_id?: string;
          is_error?: boolean;
          content?: unknown;
        }[],
    )
    .filter((block) => block.type === "tool_result");
}

describe("mcpServer in an agent", () => {
  it("M1, M2, M6, M8: the server's tools sit next to the agent's own; read-only calls overlap; a JSON-RPC error is is_error and the run goes on; agent.close() ends the process", async () => {
    const source = mcpServer({ name: "fault", ...faultServerCommand(), onWarning: () => {} });
    const agent = createAgent({ ...agentOptions(), tools: [own, source] });
    model.enqueue(
      {
        content: [
          { type: "tool_use", id: "s1", name: "fault__slow", input: { ms: 300 } },
          { type: "tool_use", id: "s2", name: "fault__slow", input: { ms: 300 } },
          { type: "tool_use", id: "s3", name: "fault__slow", input: { ms: 300 } },
          { type: "tool_use", id: "own", name: "own_tool", input: {} },
        ],
      },
      {
        content: [
          { type: "tool_use", id: "err", name: "fault__rpc_error", input: {} },
          { type: "tool_use", id: "bad", name: "fault__echo", input: { text: 7 } },
        ],
      },
      { content: [{ type: "tool_use", id: "stats", name: "fault__stats", input: {} }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const result = await agent.run("go");
    expect(result.subtype).toBe("success");
    const firstRequest = model.requests[0]?.body as { tools?: { name: string }[] } | undefined;
    const sent = (firstRequest?.tools ?? []).map((t) => t.name);
    expect(sent).toEqual(
      expect.arrayContaining(["own_tool", "fault__echo", "fault__slow", "fault__write"]),
    );
    const results = toolResults(result.messages);
    const byId = new Map(results.map((block) => [block.tool_use_id, block]));
    expect(JSON.stringify(byId.get("own")?.content)).toContain("hello from Lattice");
    expect(byId.get("err")).toMatchObject({ is_error: true });
    expect(JSON.stringify(byId.get("err")?.content)).toContain(
      'mcp server \\"fault\\": tool \\"rpc_error\\" failed with JSON-RPC error -32001: the database is locked',
    );
    expect(byId.get("bad")).toMatchObject({ is_error: true });
    expect(JSON.stringify(byId.get("bad")?.content)).toContain("text: must be string");
    const statsBlock = byId.get("stats")?.content as { type: string; text: string }[] | string;
    const statsText = typeof statsBlock === "string" ? statsBlock : (statsBlock[0]?.text ?? "");
    const stats = JSON.parse(statsText) as FaultServerStats;
    expect(stats.maxInFlight).toBe(3);
    expect(stats.calls.echo).toBeUndefined();
    await agent.close();
    expect(await waitFor(() => !isRunning(stats.pid))).toBe(true);
  });

  it("M8: a server that cannot start ends the run with error_during_execution, naming the server, the command, the exit code and its stderr", async () => {
    const source = mcpServer({
      name: "broken",
      command: process.execPath,
      args: ["-e", "console.error('fatal: no API key'); process.exit(3)"],
    });
    const agent = createAgent({ ...agentOptions(), tools: [source] });
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toContain('mcp server "broken" could not start: `');
    expect(result.errors[0]).toContain("exited with code 3 before the MCP handshake finished");
    expect(result.errors[0]).toContain("fatal: no API key");
    expect(model.requests).toHaveLength(0);
    await agent.close();
  });
});
