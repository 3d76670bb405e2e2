import { createAgent, defineAgent, type TraceEvent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { serveMcp } from "./serve-mcp.js";
import type { ServeMcpHttpHandle } from "./serve-mcp-options.js";

let model: ScriptedModelServer;
const handles: ServeMcpHttpHandle[] = [];
const clients: Client[] = [];

beforeEach(async () => {
  model = await createScriptedModelServer();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close()));
  await Promise.all(handles.splice(0).map((handle) => handle.close()));
  await model.close();
});

const finish = tool(
  "finish",
  "Submit the answer",
  z.object({ answer: z.string(), score: z.number() }),
  ({ answer, score }) => ({ content: answer, endTurn: true, structuredResult: { score } }),
);

function endpoint() {
  return { apiKey: "offline", baseURL: model.anthropicBaseURL, model: "scripted-model" };
}

async function serveAndConnect(
  agents: Parameters<typeof serveMcp>[0]["agents"],
  era: "legacy" | "modern" = "legacy",
): Promise<Client> {
  const handle = await serveMcp(
    { name: "agents", version: "1.0.0", agents },
    { transport: "http", port: 0 },
  );
  handles.push(handle);
  const client = new Client(
    { name: "test-client", version: "1.0.0" },
    era === "modern" ? { versionNegotiation: { mode: "auto" } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(handle.url)));
  clients.push(client);
  return client;
}

function text(result: { content: unknown }): string {
  return (result.content as { type: string; text?: string }[])
    .map((block) => block.text ?? "")
    .join("\n");
}

describe("serveMcp agents (M12)", () => {
  it("M12: an agent is one tool { prompt } answering with the run's final text and structuredResult", async () => {
    const researcher = createAgent({ name: "researcher", ...endpoint(), tools: [finish] });
    const client = await serveAndConnect([researcher]);
    const { tools } = await client.listTools();
    expect(tools).toHaveLength(1);
    expect(tools[0]).toMatchObject({
      name: "researcher",
      inputSchema: { type: "object", required: ["prompt"] },
    });

    model.enqueue({
      content: [{ type: "tool_use", name: "finish", input: { answer: "Paris", score: 9 } }],
    });
    const ended = await client.callTool({
      name: "researcher",
      arguments: { prompt: "Capital of France?" },
    });
    expect(text(ended)).toBe("Paris");
    expect(ended.isError).toBeFalsy();
    expect(ended.structuredContent).toEqual({ score: 9 });
    const sent = model.requests[0]?.body as { messages: { content: unknown }[] };
    expect(JSON.stringify(sent.messages[0]?.content)).toContain("Capital of France?");

    model.enqueue({ content: [{ type: "text", text: "Lyon is second." }] });
    const answered = await client.callTool({ name: "researcher", arguments: { prompt: "And?" } });
    expect([text(answered), answered.structuredContent]).toEqual(["Lyon is second.", undefined]);
  });

  it("M12: a failed run is answered isError with its errors; a missing prompt with Lattice's text", async () => {
    const researcher = createAgent({ name: "researcher", ...endpoint(), maxTurns: 1 });
    const client = await serveAndConnect([researcher]);
    model.enqueue({
      status: 400,
      body: { type: "error", error: { type: "invalid_request_error", message: "bad" } },
    });
    const failed = await client.callTool({ name: "researcher", arguments: { prompt: "Go" } });
    expect(failed.isError).toBe(true);
    expect(text(failed)).toMatch(/^Agent "researcher" failed \(error_during_execution\): /);

    const invalid = await client.callTool({ name: "researcher", arguments: {} });
    expect(invalid.isError).toBe(true);
    expect(text(invalid)).toMatch(/^Invalid input for tool "researcher":\n- prompt: /);
  });

  it("M12: a defineAgent definition that names its model is served with its description", async () => {
    const writer = defineAgent({ name: "writer", description: "Writes haiku", ...endpoint() });
    const client = await serveAndConnect([writer]);
    const { tools } = await client.listTools();
    expect(tools[0]).toMatchObject({ name: "writer", description: "Writes haiku" });
    model.enqueue({ content: [{ type: "text", text: "old pond / frog" }] });
    expect(text(await client.callTool({ name: "writer", arguments: { prompt: "Haiku" } }))).toBe(
      "old pond / frog",
    );
  });

  it("M12: agents that cannot be served are refused with a message", async () => {
    const serve = (agents: never[]) =>
      serveMcp({ name: "s", version: "1", agents }, { transport: "stdio" });
    await expect(serve([createAgent({ ...endpoint() })] as never[])).rejects.toThrow(
      'option "agents[0]" is an agent without a name',
    );
    await expect(serve([defineAgent({ name: "loose" })] as never[])).rejects.toThrow(
      /option "agents\[0\]" \(agent "loose"\) cannot run on its own: /,
    );
    await expect(serve([{ run: 1 }] as never[])).rejects.toThrow(
      'option "agents[0]" must be an Agent from createAgent() or a definition from defineAgent()',
    );
  });

  it.each(["legacy", "modern"] as const)(
    "M12: cancelling the MCP request aborts the agent's run (%s-era client)",
    async (era) => {
      const events: TraceEvent[] = [];
      let aborted: () => void = () => {};
      const runAborted = new Promise<void>((resolve) => {
        aborted = resolve;
      });
      const researcher = createAgent({
        name: "researcher",
        ...endpoint(),
        onTrace: (event) => {
          events.push(event);
          if (event.type === "run_aborted") aborted();
        },
      });
      const client = await serveAndConnect([researcher], era);
      model.enqueue({ fault: "hang" });
      const controller = new AbortController();
      const call = client.callTool(
        { name: "researcher", arguments: { prompt: "Take your time" } },
        { signal: controller.signal },
      );
      call.catch(() => {});
      await expect.poll(() => model.requests.length, { timeout: 5_000 }).toBe(1);
      controller.abort();
      await expect(call).rejects.toThrow(/abort/i);
      await runAborted;
      expect(events.some((event) => event.type === "run_finished")).toBe(false);
    },
  );
});
