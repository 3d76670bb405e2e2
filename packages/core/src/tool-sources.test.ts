import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { type AnyToolDefinition, type ToolSource, tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { type AgentOptions, createAgent } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-sources",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const named = (name: string, text = name) =>
  tool(name, `The ${name} tool`, z.object({}), async () => ({ content: text }));

/** A source whose list the test changes; counts its calls and closes. */
function fakeSource(name: string, initial: AnyToolDefinition[]) {
  let list: readonly AnyToolDefinition[] = initial;
  const state = { calls: 0, closed: 0, failWith: undefined as Error | undefined };
  const source: ToolSource = {
    kind: "tool_source",
    name,
    async tools() {
      state.calls++;
      if (state.failWith !== undefined) throw state.failWith;
      return list;
    },
    async close() {
      state.closed++;
    },
  };
  return {
    source,
    state,
    setTools(tools: AnyToolDefinition[]) {
      list = tools;
    },
  };
}

function requestToolNames(index: number): string[] {
  const body = server.requests[index]?.body as { tools?: { name: string }[] };
  return (body.tools ?? []).map((entry) => entry.name);
}

describe("tool sources", () => {
  it("a source's tools are asked for before each model call, sent to the model and run; a changed list is seen at the next turn", async () => {
    const fake = fakeSource("fs", [named("fs__read", "file text")]);
    server.enqueue(
      { content: [{ type: "tool_use", id: "a", name: "fs__read", input: {} }] },
      { content: [{ type: "tool_use", id: "b", name: "fs__write", input: {} }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const own = named("own");
    const agent = createAgent(
      agentOptions({
        tools: [own, fake.source],
        hooks: {
          onToolResult: (event) => {
            // After the first batch, the source announces a new tool.
            if (event.toolUseId === "a")
              fake.setTools([named("fs__read"), named("fs__write", "written")]);
          },
        },
      }),
    );
    expect(fake.state.calls).toBe(0);
    const result = await agent.run("go");
    expect(result.subtype).toBe("success");
    expect(requestToolNames(0)).toEqual(["own", "fs__read"]);
    expect(requestToolNames(1)).toEqual(["own", "fs__read", "fs__write"]);
    const texts = result.messages
      .filter((message) => message.role === "user" && Array.isArray(message.content))
      .map((message) => JSON.stringify(message.content));
    expect(texts[0]).toContain("file text");
    expect(texts[1]).toContain("written");
    expect(fake.state.calls).toBeGreaterThanOrEqual(3);
  });

  it("a source that fails ends the run with error_during_execution and its message; nothing is sent", async () => {
    const fake = fakeSource("broken", []);
    fake.state.failWith = new Error(
      'MCP server "broken" could not start: exit code 127 (command not found)',
    );
    const agent = createAgent(agentOptions({ tools: [fake.source] }));
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "error_during_execution", numTurns: 0 });
    expect(result.errors).toEqual([
      'MCP server "broken" could not start: exit code 127 (command not found)',
    ]);
    expect(server.requests).toHaveLength(0);
  });

  it("two tools of one name across sources fail the run naming both", async () => {
    const first = fakeSource("one", [named("search")]);
    const agent = createAgent(agentOptions({ tools: [named("search"), first.source] }));
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toBe(
      'Two tools are named "search": one from the agent\'s own tools, one from the tool source "one". The model could not tell them apart; rename one (an MCP source takes a prefix option).',
    );
  });

  it("agent.close() and await using release the sources; the same source listed twice is refused", async () => {
    const fake = fakeSource("fs", []);
    {
      await using agent = createAgent(agentOptions({ tools: [fake.source] }));
      expect(agent.name).toBeUndefined();
    }
    expect(fake.state.closed).toBe(1);
    const agent = createAgent(agentOptions({ tools: [fake.source] }));
    await agent.close();
    await agent.close();
    expect(fake.state.closed).toBe(3);
    expect(() => createAgent(agentOptions({ tools: [fake.source, fake.source] }))).toThrow(
      /AgentOptions: option "tools\[1\]" is the tool source "fs" a second time/,
    );
  });
});

describe("what long-running tools report", () => {
  it("ctx.reportProgress becomes tool_progress trace events; structuredContent reaches onToolResult, not the model", async () => {
    const events: unknown[] = [];
    const seen: unknown[] = [];
    const slow = tool("slow", "Reports progress", z.object({}), async (_input, ctx) => {
      ctx.reportProgress?.({ progress: 1, total: 2, message: "half way" });
      ctx.reportProgress?.({ progress: 2, total: 2 });
      return { content: "done", structuredContent: { rows: 2 } };
    });
    server.enqueue(
      { content: [{ type: "tool_use", id: "s1", name: "slow", input: {} }] },
      { content: [{ type: "text", text: "ok" }] },
    );
    await createAgent(
      agentOptions({
        tools: [slow],
        onTrace: (event) => {
          if (event.type === "tool_progress") events.push(event);
        },
        hooks: { onToolResult: (event) => void seen.push(event.result.structuredContent) },
      }),
    ).run("go");
    expect(events).toMatchObject([
      {
        type: "tool_progress",
        toolUseId: "s1",
        toolName: "slow",
        progress: 1,
        total: 2,
        message: "half way",
      },
      { type: "tool_progress", toolUseId: "s1", progress: 2, total: 2 },
    ]);
    expect(seen).toEqual([{ rows: 2 }]);
    expect(JSON.stringify(server.requests[1]?.body)).not.toContain("rows");
  });
});
