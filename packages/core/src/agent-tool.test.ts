import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { InvalidOptionError, UnknownOptionError } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  type AgentOptions,
  agentTool,
  createAgent,
  createInMemoryMailbox,
  DEFAULT_MAX_DEPTH,
  defineAgent,
  delegateTool,
  type SDKMessage,
  type SDKResultMessage,
  type SDKUserMessage,
  type TraceEvent,
} from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const API_KEY = "sk-test-secret-key-123";

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    name: "lead",
    apiKey: API_KEY,
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    maxTurns: 10,
    ...extra,
  };
}

async function collect(iterable: AsyncIterable<SDKMessage>): Promise<SDKMessage[]> {
  const messages: SDKMessage[] = [];
  for await (const message of iterable) messages.push(message);
  return messages;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function requestBody(index: number): {
  model: string;
  system?: string;
  messages: Array<{ role: string; content: unknown }>;
  tools?: Array<{ name: string; input_schema: { properties: Record<string, unknown> } }>;
} {
  return server.requests[index]?.body as never;
}

function topLevelUser(messages: SDKMessage[]): SDKUserMessage[] {
  return messages.filter(
    (message): message is SDKUserMessage =>
      message.type === "user" && message.parentToolUseId === null,
  );
}

function resultText(user: SDKUserMessage | undefined, index = 0): string {
  const block = user?.message.content[index];
  return JSON.stringify(block?.content ?? "");
}

const researcher = defineAgent({
  name: "researcher",
  description: "Finds facts.",
  systemPrompt: "You research.",
  maxTurns: 3,
});

describe("agentTool: the definition it makes (T23, T30–T32)", () => {
  it("T23: kind is agent_tool, named after the definition unless name is given", () => {
    const made = agentTool(researcher);
    expect(made.kind).toBe("agent_tool");
    expect(made.name).toBe("researcher");
    expect(made.description).toContain("Finds facts.");
    expect(Object.keys(made.inputSchema.properties ?? {})).toEqual(["task", "mode"]);
    expect(made.inputSchema.required).toEqual(["task"]);
    expect(agentTool(researcher, { name: "ask_researcher" }).name).toBe("ask_researcher");
    expect(
      Object.keys(agentTool(researcher, { modes: ["call"] }).inputSchema.properties ?? {}),
    ).toEqual(["task"]);
  });

  it("T30: metadata passes through unchanged; without it there is no metadata key", () => {
    const metadata = { owner: "team-a", cost: { tier: 2 } };
    expect(agentTool(researcher, { metadata }).metadata).toBe(metadata);
    expect("metadata" in agentTool(researcher)).toBe(false);
    const delegate = delegateTool({ name: "delegate", agents: [researcher], metadata });
    expect(delegate.metadata).toBe(metadata);
    expect("metadata" in delegateTool({ name: "delegate", agents: [researcher] })).toBe(false);
  });

  it("T31, T32: unknown options throw with the agentTool / delegateTool prefix", () => {
    const thrown = (make: () => unknown): unknown => {
      try {
        make();
      } catch (error) {
        return error;
      }
      return undefined;
    };
    const agentError = thrown(() => agentTool(researcher, { bogusOption: true } as never));
    expect(agentError).toBeInstanceOf(UnknownOptionError);
    expect((agentError as Error).message).toBe(
      'agentTool("researcher"): unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(
      (thrown(() => agentTool(researcher, { name: "ask", bogusOption: 1 } as never)) as Error)
        .message,
    ).toBe(
      'agentTool("ask"): unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    const delegateError = thrown(() =>
      delegateTool({ name: "delegate", agents: [researcher], bogusOption: 1 } as never),
    );
    expect(delegateError).toBeInstanceOf(UnknownOptionError);
    expect((delegateError as Error).message).toBe(
      'delegateTool("delegate"): unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("T32: a bad name or metadata is an InvalidOptionError with the factory's own prefix", () => {
    const thrown = (make: () => unknown): InvalidOptionError => {
      try {
        make();
      } catch (error) {
        expect(error).toBeInstanceOf(InvalidOptionError);
        return error as InvalidOptionError;
      }
      throw new Error("expected a throw");
    };
    const badName = thrown(() => agentTool(researcher, { name: "ask researcher" }));
    expect(badName.option).toBe("name");
    expect(badName.message).toBe(
      'agentTool("ask researcher"): option "name" must be 1 to 64 letters, digits, "_" or "-" (pattern ^[a-zA-Z0-9_-]{1,64}$; it names the tool), received "ask researcher".',
    );
    const badMetadata = thrown(() => agentTool(researcher, { metadata: null as never }));
    expect(badMetadata.option).toBe("metadata");
    expect(badMetadata.message).toBe(
      'agentTool("researcher"): option "metadata" must be a plain object (Record<string, unknown>), received null.',
    );
    expect(thrown(() => agentTool(researcher, { metadata: ["x"] as never })).message).toBe(
      'agentTool("researcher"): option "metadata" must be a plain object (Record<string, unknown>), received ["x"].',
    );
    const delegateName = thrown(() => delegateTool({ name: "team!", agents: [researcher] }));
    expect(delegateName.option).toBe("name");
    expect(delegateName.message).toBe(
      'delegateTool("team!"): option "name" must be 1 to 64 letters, digits, "_" or "-" (pattern ^[a-zA-Z0-9_-]{1,64}$; it names the tool), received "team!".',
    );
    const delegateMetadata = thrown(() =>
      delegateTool({ name: "team", agents: [researcher], metadata: "owner" as never }),
    );
    expect(delegateMetadata.option).toBe("metadata");
    expect(delegateMetadata.message).toBe(
      'delegateTool("team"): option "metadata" must be a plain object (Record<string, unknown>), received "owner".',
    );
  });

  it("refuses bad values when the tool is made", () => {
    expect(() => agentTool({ name: "x" } as never)).toThrow(/defineAgent/);
    expect(() => agentTool(researcher, { modes: [] })).toThrow(/option "modes"/);
    expect(() => agentTool(researcher, { modes: ["later" as never] })).toThrow(/option "modes"/);
    expect(() => agentTool(researcher, { maxDepth: -1 })).toThrow(/option "maxDepth"/);
    expect(() => agentTool(researcher, { mailbox: {} as never })).toThrow(/option "mailbox"/);
    expect(() => delegateTool({ name: "delegate", agents: [] })).toThrow(/option "agents"/);
    expect(() => delegateTool({ name: "delegate", agents: [researcher, researcher] })).toThrow(
      /two agents named "researcher"/,
    );
  });

  it("T23: the batch policy sees agent tool calls with kind agent_tool", async () => {
    const seen: unknown[] = [];
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_d",
            name: "delegate",
            input: { agent: "researcher", task: "t" },
          },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    await createAgent(
      agentOptions({
        tools: [delegateTool({ name: "delegate", agents: [researcher] })],
        toolBatchPolicy: {
          validate({ toolCalls }) {
            seen.push(...toolCalls);
            return {
              allowed: false,
              code: "no_delegation",
              message: "Not now.",
              conflictingToolCallIds: [],
              suggestedNextStep: "Answer yourself.",
            };
          },
        },
      }),
    ).run("go");
    expect(seen).toEqual([
      {
        id: "toolu_d",
        name: "delegate",
        input: { agent: "researcher", task: "t" },
        kind: "agent_tool",
      },
    ]);
    expect(server.requests).toHaveLength(2);
  });
});

describe('agentTool "call" mode', () => {
  it("runs the member to completion; its result is the tool_result; its messages carry parentToolUseId; usage adds up", async () => {
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_call",
            name: "researcher",
            input: { task: "Find the capital of France" },
          },
        ],
        usage: { inputTokens: 10, outputTokens: 5 },
      },
      { content: [{ type: "text", text: "Paris." }], usage: { inputTokens: 3, outputTokens: 2 } },
      {
        content: [{ type: "text", text: "The capital is Paris." }],
        usage: { inputTokens: 20, outputTokens: 4 },
      },
    );
    const traced: TraceEvent[] = [];
    const agent = createAgent(
      agentOptions({ tools: [agentTool(researcher)], onTrace: (event) => void traced.push(event) }),
    );
    const messages = await collect(agent.query("What is the capital of France?"));

    const nested = messages.filter((message) => message.parentToolUseId === "toolu_call");
    expect(nested.map((message) => message.type)).toEqual(["system", "assistant", "result"]);
    expect(nested[2]).toMatchObject({
      type: "result",
      subtype: "success",
      result: "Paris.",
      usage: { inputTokens: 3, outputTokens: 2 },
    });
    // The member's messages come between the parent's assistant turn and its tool results.
    const order = messages.map((message) => `${message.type}:${message.parentToolUseId ?? "-"}`);
    expect(order).toEqual([
      "system:-",
      "assistant:-",
      "system:toolu_call",
      "assistant:toolu_call",
      "result:toolu_call",
      "user:-",
      "assistant:-",
      "result:-",
    ]);
    const [user] = topLevelUser(messages);
    expect(user?.message.content[0]).toEqual({
      type: "tool_result",
      tool_use_id: "toolu_call",
      content: [{ type: "text", text: "Paris." }],
    });
    const result = messages.at(-1) as SDKResultMessage;
    expect(result).toMatchObject({ result: "The capital is Paris.", parentToolUseId: null });
    expect(result.usage).toEqual({
      inputTokens: 33,
      outputTokens: 11,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      contextTokens: 24,
    });

    // The member inherited the parent's provider and model, and got its own system prompt.
    expect(server.requests).toHaveLength(3);
    expect(requestBody(1)).toMatchObject({
      model: "scripted",
      system: "You research.",
      messages: [{ role: "user", content: "Find the capital of France" }],
    });
    // The parent's trace sees the nested run, marked with the call it serves.
    expect(traced.filter((event) => event.type === "run_started")).toMatchObject([
      { parentToolUseId: null },
      { parentToolUseId: "toolu_call" },
    ]);
  });

  it("agent.run() resolves with the parent's result, not the member's", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "researcher", input: { task: "t" } }] },
      { content: [{ type: "text", text: "member answer" }] },
      { content: [{ type: "text", text: "parent answer" }] },
    );
    const result = await createAgent(agentOptions({ tools: [agentTool(researcher)] })).run("go");
    expect(result).toMatchObject({ result: "parent answer", parentToolUseId: null, numTurns: 2 });
  });

  it("a failed member run answers is_error with its errors; the parent goes on", async () => {
    const brief = defineAgent({ name: "brief", maxTurns: 1 });
    server.enqueue(
      { content: [{ type: "tool_use", id: "toolu_b", name: "brief", input: { task: "t" } }] },
      { content: [{ type: "tool_use", name: "nothing_here", input: {} }] },
      { content: [{ type: "text", text: "I will answer myself." }] },
    );
    const messages = await collect(
      createAgent(agentOptions({ tools: [agentTool(brief)] })).query("go"),
    );
    const [user] = topLevelUser(messages);
    expect(user?.message.content[0]?.is_error).toBe(true);
    expect(resultText(user)).toContain('Agent \\"brief\\" failed (error_max_turns)');
    expect(resultText(user)).toContain("maxTurns (1)");
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "I will answer myself." });
  });

  it("a member with its own endpoint and model uses them instead of the parent's", async () => {
    const other = await createScriptedModelServer({
      turns: [{ content: [{ type: "text", text: "from the other endpoint" }] }],
    });
    try {
      const remote = defineAgent({
        name: "remote",
        apiKey: "sk-other",
        baseURL: other.anthropicBaseURL,
        model: "member-model",
      });
      server.enqueue(
        { content: [{ type: "tool_use", id: "toolu_r", name: "remote", input: { task: "t" } }] },
        { content: [{ type: "text", text: "ok" }] },
      );
      const messages = await collect(
        createAgent(agentOptions({ tools: [agentTool(remote)] })).query("go"),
      );
      expect(resultText(topLevelUser(messages)[0])).toContain("from the other endpoint");
      expect(other.requests).toHaveLength(1);
      expect(other.requests[0]?.body).toMatchObject({ model: "member-model" });
      expect(server.requests).toHaveLength(2);
    } finally {
      await other.close();
    }
  });

  it("T22: aborting the parent aborts the member; the query rejects with AbortError", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "researcher", input: { task: "t" } }] },
      { fault: "hang" },
      { content: [{ type: "text", text: "never" }] },
    );
    const controller = new AbortController();
    const seen: SDKMessage[] = [];
    const agent = createAgent(agentOptions({ tools: [agentTool(researcher)] }));
    const pending = (async () => {
      for await (const message of agent.query("go", { signal: controller.signal })) {
        seen.push(message);
      }
    })();
    while (server.requests.length < 2) await sleep(5);
    const started = performance.now();
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe("AbortError");
    expect(performance.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(2);
    expect(seen.some((message) => message.type === "result")).toBe(false);
  });

  it("refuses a chain deeper than maxDepth with an is_error naming the chain", async () => {
    const helper = defineAgent({ name: "helper" });
    const middle = defineAgent({ name: "middle", tools: [agentTool(helper)] });
    server.enqueue(
      { content: [{ type: "tool_use", name: "middle", input: { task: "t" } }] },
      { content: [{ type: "tool_use", id: "toolu_h", name: "helper", input: { task: "t2" } }] },
      { content: [{ type: "text", text: "helper was refused" }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const result = await createAgent(
      agentOptions({ tools: [agentTool(middle, { maxDepth: 1 })] }),
    ).run("go");
    expect(result.result).toBe("done");
    expect(server.requests).toHaveLength(4);
    const refused = requestBody(2).messages[2]?.content as Array<{
      is_error?: boolean;
      content: unknown;
    }>;
    expect(refused[0]?.is_error).toBe(true);
    expect(JSON.stringify(refused[0]?.content)).toContain(
      'agentTool(\\"helper\\"): refused to run \\"helper\\": the agent chain lead → middle → helper would be 2 deep, over maxDepth 1.',
    );
    expect(DEFAULT_MAX_DEPTH).toBe(8);
  });
});

describe('agentTool "handoff" mode', () => {
  it("posts { id, from, to, task, createdAt } to the mailbox and answers at once with a receipt", async () => {
    const mailbox = createInMemoryMailbox();
    const writer = defineAgent({ name: "writer" });
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_h",
            name: "writer",
            input: { task: "Draft the summary", mode: "handoff" },
          },
        ],
      },
      { content: [{ type: "text", text: "Handed off." }] },
    );
    const messages = await collect(
      createAgent(agentOptions({ tools: [agentTool(writer, { mailbox })] })).query("go"),
    );
    expect(server.requests).toHaveLength(2);
    expect(mailbox.size()).toBe(1);
    const [mail] = (await mailbox.take("writer")) as unknown as [Record<string, unknown>];
    expect(mail).toMatchObject({
      kind: "task",
      from: "lead",
      to: "writer",
      task: "Draft the summary",
      chain: ["lead", "writer"],
    });
    expect(mail.id).toMatch(/^mail_/);
    expect(new Date(mail.createdAt as string).toISOString()).toBe(mail.createdAt);
    const [user] = topLevelUser(messages);
    expect(user?.message.content[0]?.is_error).toBeUndefined();
    expect(resultText(user)).toContain(`Handed off to \\"writer\\" (message ${mail.id})`);
  });

  it("modes restricts what is offered: a handoff-only tool hands off by default", async () => {
    const mailbox = createInMemoryMailbox();
    const writer = defineAgent({ name: "writer" });
    server.enqueue(
      { content: [{ type: "tool_use", name: "writer", input: { task: "t" } }] },
      { content: [{ type: "text", text: "ok" }] },
    );
    await createAgent(
      agentOptions({ tools: [agentTool(writer, { mailbox, modes: ["handoff"] })] }),
    ).run("go");
    expect(mailbox.size("writer")).toBe(1);
    expect(Object.keys(requestBody(0).tools?.[0]?.input_schema.properties ?? {})).toEqual(["task"]);
  });

  it("without a mailbox, a handoff answers is_error saying how to configure one", async () => {
    const writer = defineAgent({ name: "writer" });
    server.enqueue(
      { content: [{ type: "tool_use", name: "writer", input: { task: "t", mode: "handoff" } }] },
      { content: [{ type: "text", text: "ok" }] },
    );
    const messages = await collect(
      createAgent(agentOptions({ tools: [agentTool(writer)] })).query("go"),
    );
    const [user] = topLevelUser(messages);
    expect(user?.message.content[0]?.is_error).toBe(true);
    expect(resultText(user)).toContain("no mailbox is configured");
    expect(resultText(user)).toContain("createTeam");
  });

  it("T25: a batch the policy refuses posts nothing", async () => {
    const mailbox = createInMemoryMailbox();
    const writer = defineAgent({ name: "writer" });
    server.enqueue(
      {
        content: [
          { type: "tool_use", name: "writer", input: { task: "a", mode: "handoff" } },
          { type: "tool_use", name: "writer", input: { task: "b", mode: "handoff" } },
        ],
      },
      { content: [{ type: "text", text: "refused" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [agentTool(writer, { mailbox })],
          toolBatchPolicy: {
            validate: ({ toolCalls }) => ({
              allowed: false,
              code: "one_handoff_per_reply",
              message: "Hand off one task at a time.",
              conflictingToolCallIds: toolCalls.map((call) => call.id),
              suggestedNextStep: "Send one handoff.",
            }),
          },
        }),
      ).query("go"),
    );
    expect(mailbox.size()).toBe(0);
    const [user] = topLevelUser(messages);
    expect(user?.message.content.map((block) => block.is_error)).toEqual([true, true]);
    expect(resultText(user)).toContain("one_handoff_per_reply");
  });
});

describe("delegateTool", () => {
  const writer = defineAgent({
    name: "writer",
    description: "Writes prose.",
    systemPrompt: "You write.",
  });

  it("offers { agent, task } with agent an enum of the names, and runs the chosen one in call mode", async () => {
    const delegate = delegateTool({ name: "delegate", agents: [researcher, writer] });
    expect(delegate.kind).toBe("agent_tool");
    expect(delegate.inputSchema.properties?.agent).toMatchObject({
      enum: ["researcher", "writer"],
    });
    expect(delegate.description).toContain("- writer: Writes prose.");
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "toolu_w",
            name: "delegate",
            input: { agent: "writer", task: "Write a haiku" },
          },
        ],
        usage: { inputTokens: 1, outputTokens: 1 },
      },
      { content: [{ type: "text", text: "A haiku." }], usage: { inputTokens: 2, outputTokens: 2 } },
      {
        content: [{ type: "text", text: "Here it is." }],
        usage: { inputTokens: 4, outputTokens: 4 },
      },
    );
    const messages = await collect(createAgent(agentOptions({ tools: [delegate] })).query("go"));
    expect(requestBody(1).system).toBe("You write.");
    expect(resultText(topLevelUser(messages)[0])).toContain("A haiku.");
    expect(messages.filter((message) => message.parentToolUseId === "toolu_w")).toHaveLength(3);
    expect((messages.at(-1) as SDKResultMessage).usage).toEqual({
      inputTokens: 7,
      outputTokens: 7,
      cacheReadInputTokens: 0,
      cacheCreationInputTokens: 0,
      contextTokens: 8,
    });
  });

  it("an agent name outside the enum is invalid input; nothing runs", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "delegate", input: { agent: "nobody", task: "t" } }] },
      { content: [{ type: "text", text: "ok" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({ tools: [delegateTool({ name: "delegate", agents: [researcher] })] }),
      ).query("go"),
    );
    const [user] = topLevelUser(messages);
    expect(user?.message.content[0]?.is_error).toBe(true);
    expect(resultText(user)).toContain("agent");
    expect(server.requests).toHaveLength(2);
  });
});
