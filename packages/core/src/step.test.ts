import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  type AgentStepResult,
  createAgent,
  memorySessionStore,
  type SDKMessage,
} from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-steps",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const ran: string[] = [];
const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => {
  ran.push(text);
  return { content: `echo: ${text}` };
});
const toolCall = (id: string, text: string) => ({
  type: "tool_use" as const,
  id,
  name: "echo",
  input: { text },
});

function scriptTwoTurns(): void {
  server.enqueue(
    { content: [toolCall("c1", "a"), toolCall("c2", "b")] },
    { content: [toolCall("c3", "c")] },
    { content: [{ type: "text", text: "done" }] },
  );
}

describe("agent.step(): the run as a step function (R2)", () => {
  it("R2: steps alternate model call and batch, numbered 2t-2 and 2t-1; messages and log equal a run()'s", async () => {
    ran.length = 0;
    scriptTwoTurns();
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    const messages: SDKMessage[] = [];
    const onMessage = (message: SDKMessage) => messages.push(message);
    const steps: AgentStepResult[] = [];
    let step = await agent.step("s1", { prompt: "go", runId: "run-1", onMessage });
    steps.push(step);
    while (step.status === "continue") {
      step = await agent.step("s1", { expectedStep: step.nextStep, runId: "run-1", onMessage });
      steps.push(step);
    }
    expect(steps.map((s) => (s.status === "continue" ? [s.step, s.nextStep] : s.status))).toEqual([
      [0, 1],
      [1, 2],
      [2, 3],
      [3, 4],
      "ended",
    ]);
    expect(ran).toEqual(["a", "b", "c"]);
    const ended = steps.at(-1)!;
    if (ended.status !== "ended") throw new Error("not ended");
    expect(ended.result).toMatchObject({ subtype: "success", result: "done", numTurns: 3 });
    expect(ended.runId).toBe("run-1");
    expect(messages.map((m) => m.type)).toEqual([
      "system",
      "assistant",
      "user",
      "assistant",
      "user",
      "assistant",
      "result",
    ]);
    const types = (await store.load("s1")).entries.map((entry) => entry.type);
    // No run_resumed between steps: a step continues the run, it does not resume it.
    expect(types).toEqual([
      "run_started",
      "reply",
      "tool_result",
      "tool_result",
      "reply",
      "tool_result",
      "reply",
      "run_finished",
    ]);

    // The log alone gives each step's messages again (for a runner that lost them).
    const { stepMessages } = await import("./index.js");
    const { entries } = await store.load("s1");
    const replayed = [0, 1, 2, 3, 4].flatMap((number) =>
      stepMessages(entries, { sessionId: "s1", runId: "run-1", step: number }),
    );
    expect(replayed).toEqual(messages.filter((m) => m.type === "assistant" || m.type === "user"));
    expect(stepMessages(entries, { sessionId: "s1", runId: "run-1", step: 9 })).toEqual([]);

    // The same conversation as one run() of the same script.
    scriptTwoTurns();
    const whole = await createAgent(agentOptions({ tools: [echo] })).run("go");
    expect(ended.result.messages).toEqual(whole.messages);
    expect(ended.result.usage).toEqual(whole.usage);
  });

  it("R2: a step asked again (a job delivered twice) is stale and runs nothing; a repeated first step continues the run", async () => {
    ran.length = 0;
    scriptTwoTurns();
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    const first = await agent.step("s1", { prompt: "go", runId: "run-1" });
    expect(first).toMatchObject({ status: "continue", step: 0, nextStep: 1 });
    const requests = server.requests.length;
    // The first step again: the run exists, so this is the step after it, if expected.
    expect(await agent.step("s1", { prompt: "go", runId: "run-1", expectedStep: 0 })).toEqual({
      status: "stale",
      sessionId: "s1",
      runId: "run-1",
      nextStep: 1,
    });
    expect(server.requests.length).toBe(requests);
    expect(await agent.step("s1", { expectedStep: 1 })).toMatchObject({ step: 1, nextStep: 2 });
    expect(await agent.step("s1", { expectedStep: 1 })).toMatchObject({
      status: "stale",
      nextStep: 2,
    });
    expect(ran).toEqual(["a", "b"]);
    // Without expectedStep, whatever comes next is taken.
    let step = await agent.step("s1");
    while (step.status === "continue") step = await agent.step("s1");
    expect(step.status).toBe("ended");
    // A step on an ended run gives its result again, rebuilt from the log; nothing runs.
    const again = await agent.step("s1", { runId: "run-1" });
    if (again.status !== "ended" || step.status !== "ended") throw new Error("not ended");
    expect({ ...again.result, durationMs: 0 }).toEqual({ ...step.result, durationMs: 0 });
    expect(ran).toEqual(["a", "b", "c"]);
  });

  it("R8: a prompt on a session with an unfinished run is refused; a step of another run is refused", async () => {
    scriptTwoTurns();
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    await agent.step("s1", { prompt: "go", runId: "run-1" });
    await expect(agent.step("s1", { prompt: "other", runId: "run-2" })).rejects.toMatchObject({
      code: "session_conflict",
    });
    await expect(agent.step("s1", { runId: "run-2" })).rejects.toMatchObject({
      code: "not_interrupted",
    });
    await expect(agent.step("nobody")).rejects.toMatchObject({ code: "session_not_found" });
    // A first step asked again after its run ended and another run began never starts it again.
    let step = await agent.step("s1", { runId: "run-1" });
    while (step.status === "continue") step = await agent.step("s1");
    server.enqueue({ content: [{ type: "text", text: "second" }] });
    await agent.step("s1", { prompt: "next", runId: "run-2" });
    const requests = server.requests.length;
    await expect(
      agent.step("s1", { prompt: "go", runId: "run-1", expectedStep: 0 }),
    ).rejects.toMatchObject({ code: "not_interrupted" });
    expect(server.requests.length).toBe(requests);
  });

  it("R14, R15, D7: a step that pauses for approval ends interrupted, and again when asked again; the step with decisions runs the batch", async () => {
    ran.length = 0;
    const risky = tool(
      "echo",
      "Echo, after approval",
      z.object({ text: z.string() }),
      async ({ text }) => {
        ran.push(text);
        return { content: `echo: ${text}` };
      },
      { needsApproval: true },
    );
    server.enqueue(
      { content: [toolCall("c1", "a")] },
      { content: [{ type: "text", text: "done" }] },
    );
    const agent = createAgent(agentOptions({ tools: [risky] }));
    await agent.step("s1", { prompt: "go" });
    const paused = await agent.step("s1", { expectedStep: 1 });
    if (paused.status !== "ended") throw new Error("expected the interrupt");
    expect(paused.result.subtype).toBe("interrupted");
    const approvalId = paused.result.pendingApprovals![0]!.approvalId;
    // The same step asked again (its job delivered again) gives the pause again, and runs
    // nothing; a step with neither decisions nor expectedStep is refused, as resume() is.
    const again = await agent.step("s1", { expectedStep: 1 });
    expect(again).toMatchObject({
      status: "ended",
      result: { subtype: "interrupted", isError: false, numTurns: 1 },
    });
    if (again.status !== "ended") throw new Error("expected the interrupt again");
    expect(again.result.pendingApprovals).toEqual(paused.result.pendingApprovals);
    expect(again.result.messages).toEqual(paused.result.messages);
    expect(again.result.usage).toEqual(paused.result.usage);
    await expect(agent.step("s1")).rejects.toMatchObject({ code: "approval_missing" });
    expect(ran).toEqual([]);
    const started: number[] = [];
    const resumed = await agent.step("s1", {
      decisions: { [approvalId]: { approved: true } },
      onStepStart: (step) => started.push(step),
    });
    expect(resumed).toMatchObject({ status: "continue", step: 1, nextStep: 2 });
    expect(started).toEqual([1]);
    expect(ran).toEqual(["a"]);
    const last = await agent.step("s1", { expectedStep: 2 });
    expect(last).toMatchObject({ status: "ended", result: { subtype: "success", result: "done" } });
  });

  it("R22: step options are checked strictly", async () => {
    const agent = createAgent(agentOptions());
    await expect(agent.step("s1", { prompt: "go", turbo: true } as never)).rejects.toMatchObject({
      code: "unknown_option",
    });
    await expect(agent.step("s1", { expectedStep: -1 })).rejects.toThrow(/expectedStep/);
    await expect(agent.step("s1", { runId: "" })).rejects.toThrow(/runId/);
    await expect(agent.step("s1", { onMessage: 3 } as never)).rejects.toThrow(/onMessage/);
    await expect(agent.step("", { prompt: "go" })).rejects.toThrow(/sessionId|session/);
  });

  it("H1: an onMessage listener that throws does not reach the step", async () => {
    server.enqueue({ content: [{ type: "text", text: "hi" }] });
    const agent = createAgent(agentOptions());
    const step = await agent.step("s1", {
      prompt: "go",
      onMessage: () => {
        throw new Error("listener down");
      },
    });
    expect(step).toMatchObject({ status: "ended", result: { subtype: "success", result: "hi" } });
  });

  it("H1: an async onStepStart that rejects leaves no unhandled rejection and does not reach the step", async () => {
    server.enqueue({ content: [{ type: "text", text: "hi" }] });
    const agent = createAgent(agentOptions());
    const unhandled: unknown[] = [];
    const listener = (reason: unknown): void => void unhandled.push(reason);
    process.on("unhandledRejection", listener);
    try {
      const step = await agent.step("s1", {
        prompt: "go",
        onStepStart: (async () => {
          throw new Error("listener down");
        }) as never,
      });
      expect(step).toMatchObject({ status: "ended", result: { subtype: "success" } });
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      process.off("unhandledRejection", listener);
    }
    expect(unhandled).toEqual([]);
  });
});

describe("endRun()", () => {
  it("R8: ends an unfinished run as failed with its turns and usage, so the session takes a new prompt", async () => {
    const { endRun } = await import("./index.js");
    server.enqueue({ content: [toolCall("c1", "a")] });
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    await agent.step("s1", { prompt: "go", runId: "run-1" });
    const ended = await endRun({
      store,
      sessionId: "s1",
      errors: ["step failed 5 times: store down"],
    });
    expect(ended).toMatchObject({
      subtype: "error_during_execution",
      isError: true,
      errors: ["step failed 5 times: store down"],
      numTurns: 1,
      runId: "run-1",
    });
    expect(ended.usage.outputTokens).toBeGreaterThan(0);
    // Ending it again gives the same result; a new prompt is taken.
    expect((await endRun({ store, sessionId: "s1", errors: ["again"] })).errors).toEqual([
      "step failed 5 times: store down",
    ]);
    server.enqueue({ content: [{ type: "text", text: "fresh" }] });
    expect((await agent.run("next", { sessionId: "s1" })).result).toBe("fresh");
    await expect(
      endRun({ store, sessionId: "s1", runId: "run-1", errors: ["x"] }),
    ).rejects.toMatchObject({
      code: "not_interrupted",
    });
    await expect(endRun({ store, sessionId: "s1", errors: [] })).rejects.toThrow(/errors/);
    await expect(
      endRun({ store, sessionId: "s1", errors: ["x"], turbo: 1 } as never),
    ).rejects.toThrow(/turbo/);
  });

  it("R2: a run ended mid-batch answers its open calls, so the next prompt's request is valid", async () => {
    const { endRun } = await import("./index.js");
    server.enqueue({ content: [toolCall("c1", "a"), toolCall("c2", "b")] });
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: [echo], sessionStore: store }));
    await agent.step("s2", { prompt: "go" });
    // c1 settled and was logged; c2 was cut.
    const { entries, version } = await store.load("s2");
    const reply = entries[1]!;
    await store.append("s2", version, [
      {
        v: 1,
        type: "tool_result",
        runId: reply.runId as string,
        toolUseId: "c1",
        toolName: "echo",
        status: "completed",
        block: {
          type: "tool_result",
          tool_use_id: "c1",
          content: [{ type: "text", text: "echo: a" }],
        },
      },
    ]);
    const ended = await endRun({ store, sessionId: "s2", errors: ["gave up"] });
    const results = ended.messages.at(-1)!.content as unknown as {
      tool_use_id: string;
      is_error?: boolean;
    }[];
    expect(results.map((block) => [block.tool_use_id, block.is_error === true])).toEqual([
      ["c1", false],
      ["c2", true],
    ]);
    server.enqueue({ content: [{ type: "text", text: "fresh" }] });
    expect((await agent.run("next", { sessionId: "s2" })).result).toBe("fresh");
  });
});

describe("agent.step() with a mailbox (D8)", () => {
  it("R2: handoffs go to StepOptions.mailbox; takeMail's texts are logged as mail and sent with the next model call; chain bounds the depth", async () => {
    const { agentTool, defineAgent, mailboxMessageText, mailboxReply } = await import("./index.js");
    const writer = defineAgent({ name: "writer", description: "Writes", model: "scripted" });
    const posted: unknown[] = [];
    const mailbox = {
      post: (message: unknown) => {
        posted.push(message);
      },
      take: () => [],
      size: () => 0,
    };
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "h1", name: "writer", input: { task: "Draft", mode: "handoff" } },
        ],
      },
      { content: [{ type: "text", text: "thanks" }] },
    );
    const store = memorySessionStore();
    const agent = createAgent(
      agentOptions({
        name: "lead",
        tools: [agentTool(writer, { modes: ["handoff"] })],
        sessionStore: store,
      }),
    );
    const started: number[] = [];
    await agent.step("s1", { prompt: "go", mailbox, onStepStart: (n) => started.push(n) });
    await agent.step("s1", { mailbox, onStepStart: (n) => started.push(n) });
    expect(posted).toHaveLength(1);
    const task = posted[0] as Parameters<typeof mailboxReply>[0];
    expect(task).toMatchObject({ kind: "task", from: "lead", to: "writer", task: "Draft" });
    const reply = mailboxMessageText(mailboxReply(task, "the draft", false));
    expect(reply).toMatch(/^Reply from "writer" to the task you handed off \("Draft"\):/);
    const last = await agent.step("s1", { takeMail: () => [reply] });
    expect(last.status).toBe("ended");
    expect(JSON.stringify(server.requests.at(-1)?.body)).toContain("the draft");
    expect((await store.load("s1")).entries.some((entry) => entry.type === "mail")).toBe(true);
    // A stale step never starts.
    expect(
      await agent.step("s1", { expectedStep: 0, onStepStart: (n) => started.push(n) }),
    ).toMatchObject({ status: "ended" });
    expect(started).toEqual([0, 1]);

    // A chain at the depth limit refuses the handoff (the tool answers is_error).
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "h2", name: "writer", input: { task: "Again", mode: "handoff" } },
        ],
      },
      { content: [{ type: "text", text: "ok" }] },
    );
    const deep = Array.from({ length: 9 }, (_, index) => `agent${index}`).concat("lead");
    await agent.step("s3", { prompt: "go", mailbox, chain: deep });
    const batch = await agent.step("s3", { mailbox, chain: deep });
    expect(batch.status).toBe("continue");
    const entries = (await store.load("s3")).entries;
    const result = entries.find((entry) => entry.type === "tool_result") as {
      block: { is_error?: boolean };
    };
    expect(result.block.is_error).toBe(true);
    expect(posted).toHaveLength(1);
    await expect(agent.step("s9", { prompt: "go", chain: [] })).rejects.toThrow(/chain/);
    await expect(
      agent.step("s9", { prompt: "go", decisions: { a: { approved: true } } }),
    ).rejects.toThrow(/decisions/);
  });
});
