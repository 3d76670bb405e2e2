import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  agentTool,
  createAgent,
  defineAgent,
  memorySessionStore,
  type TraceEvent,
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
    apiKey: "sk-test-approvals",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const call = (id: string, name: string, input: Record<string, unknown>) => ({
  type: "tool_use" as const,
  id,
  name,
  input,
});
const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] });

function resultTexts(messages: readonly { content: unknown }[], index: number): string[] {
  const content = messages[index]?.content as { content: { text: string }[]; is_error?: boolean }[];
  return content.map(
    (block) => `${block.is_error ? "✗ " : ""}${block.content.map((part) => part.text).join("")}`,
  );
}

function opsTools(ran: string[]) {
  const deploy = tool(
    "deploy",
    "Deploys a service",
    z.object({ service: z.string(), version: z.string() }),
    async ({ service, version }) => {
      ran.push(`deploy ${service}@${version}`);
      return { content: `deployed ${service}@${version}` };
    },
    { needsApproval: true },
  );
  const status = tool(
    "status",
    "Reads a service's status",
    z.object({ service: z.string() }),
    async ({ service }) => {
      ran.push(`status ${service}`);
      return { content: `${service} is healthy` };
    },
    { isConcurrencySafe: () => true },
  );
  const scale = tool(
    "scale",
    "Scales a service",
    z.object({ replicas: z.number().int() }),
    async ({ replicas }) => {
      ran.push(`scale ${replicas}`);
      return { content: `scaled to ${replicas}` };
    },
    // Only big changes need a person.
    { needsApproval: ({ replicas }) => replicas > 10 },
  );
  return [deploy, status, scale];
}

describe("approvals (R13–R17)", () => {
  it("R13, R14: a batch with a call that needs approval runs nothing; the run ends interrupted with the pending calls, and a fresh session holds it", async () => {
    const ran: string[] = [];
    const events: TraceEvent[] = [];
    server.enqueue({
      content: [
        call("s1", "status", { service: "api" }),
        call("d1", "deploy", { service: "api", version: "2.1" }),
        call("c1", "scale", { replicas: 3 }),
      ],
    });
    const agent = createAgent(
      agentOptions({ tools: opsTools(ran), onTrace: (event) => events.push(event) }),
    );
    const result = await agent.run("Ship api 2.1");
    expect(ran).toEqual([]);
    expect(result).toMatchObject({ subtype: "interrupted", isError: false, numTurns: 1 });
    expect(result.pendingApprovals).toHaveLength(1);
    const [pending] = result.pendingApprovals!;
    expect(pending).toMatchObject({
      toolUseId: "d1",
      toolName: "deploy",
      kind: "tool",
      input: { service: "api", version: "2.1" },
    });
    expect(pending?.approvalId).toMatch(/^appr_[A-Za-z0-9_-]{24}$/);
    // The run had no session: one was made in the agent's store so that resume() finds it.
    expect(await agent.sessionStore.list()).toEqual([result.sessionId]);
    const { entries } = await agent.sessionStore.load(result.sessionId);
    expect(entries.map((entry) => entry.type)).toEqual(["run_started", "reply", "interrupt"]);
    expect(events.filter((event) => event.type === "approval_requested")).toHaveLength(1);
    expect(events.some((event) => event.type === "tool_call_started")).toBe(false);
  });

  it("R15: resume with decisions: an approved call runs, a denied one answers with the reason, edited input is validated again; the batch keeps its order and the run its runId", async () => {
    const ran: string[] = [];
    server.enqueue(
      {
        content: [
          call("s1", "status", { service: "api" }),
          call("d1", "deploy", { service: "api", version: "2.1" }),
          call("c1", "scale", { replicas: 40 }),
          call("d2", "deploy", { service: "web", version: "9.9" }),
        ],
      },
      text("Deployed api with the approved version; web was not deployed."),
    );
    const store = memorySessionStore();
    const first = createAgent(agentOptions({ tools: opsTools(ran), sessionStore: store }));
    const paused = await first.run("Ship it", { sessionId: "ops" });
    expect(paused.pendingApprovals?.map((approval) => approval.toolUseId)).toEqual([
      "d1",
      "c1",
      "d2",
    ]);
    const [d1, c1, d2] = paused.pendingApprovals!;
    // Another agent on the same store (as another process would be) decides.
    const second = createAgent(agentOptions({ tools: opsTools(ran), sessionStore: store }));
    const result = await second
      .resume("ops", {
        decisions: {
          [d1!.approvalId]: { approved: true, input: { service: "api", version: "2.0" } },
          [c1!.approvalId]: { approved: true, input: { replicas: "many" } },
          [d2!.approvalId]: { approved: false, reason: "web is frozen this week" },
        },
      })
      .finalResult();
    expect(result).toMatchObject({ subtype: "success", runId: paused.runId, numTurns: 2 });
    expect(ran.sort()).toEqual(["deploy api@2.0", "status api"]);
    const texts = resultTexts(result.messages, 2);
    expect(texts[0]).toBe("api is healthy");
    expect(texts[1]).toBe("deployed api@2.0");
    expect(texts[2]).toMatch(
      /^✗ Tool call "scale" \(c1\) was approved with an edited input that is not valid, so it did not run/,
    );
    expect(texts[3]).toBe(
      '✗ Tool call "deploy" (d2) was denied by the person asked to approve it: web is frozen this week',
    );
    // The model saw the results in tool_use order.
    const body = server.requests[1]?.body as {
      messages: { content: { tool_use_id?: string }[] }[];
    };
    const sent = body.messages;
    expect(sent[2]?.content.map((block) => block.tool_use_id)).toEqual(["s1", "d1", "c1", "d2"]);
  });

  it("R16: a missing decision, an unknown id, a second resume, and a resume of a session not interrupted fail clearly, and no tool runs", async () => {
    const ran: string[] = [];
    server.enqueue(
      {
        content: [
          call("d1", "deploy", { service: "api", version: "1" }),
          call("d2", "deploy", { service: "web", version: "1" }),
        ],
      },
      text("done"),
    );
    const agent = createAgent(agentOptions({ tools: opsTools(ran) }));
    const paused = await agent.run("Ship both");
    const [a, b] = paused.pendingApprovals!;
    const id = paused.sessionId;
    await expect(
      agent.resume(id, { decisions: { [a!.approvalId]: { approved: true } } }).finalResult(),
    ).rejects.toMatchObject({
      code: "approval_missing",
      message: expect.stringMatching(/waits for a decision on deploy \(appr_/),
    });
    await expect(agent.resume(id).finalResult()).rejects.toMatchObject({
      code: "approval_missing",
    });
    await expect(
      agent
        .resume(id, {
          decisions: {
            [a!.approvalId]: { approved: true },
            [b!.approvalId]: { approved: true },
            appr_guess: { approved: true },
          },
        })
        .finalResult(),
    ).rejects.toMatchObject({
      code: "approval_unknown",
      message: expect.stringContaining('"appr_guess"'),
    });
    expect(ran).toEqual([]);
    const decisions = {
      [a!.approvalId]: { approved: true as const },
      [b!.approvalId]: { approved: false as const },
    };
    expect((await agent.resume(id, { decisions }).finalResult()).subtype).toBe("success");
    expect(ran).toEqual(["deploy api@1"]);
    await expect(agent.resume(id, { decisions }).finalResult()).rejects.toMatchObject({
      code: "not_interrupted",
    });
    expect(ran).toEqual(["deploy api@1"]);
    await expect(agent.resume("never-seen").finalResult()).rejects.toMatchObject({
      code: "session_not_found",
    });
  });

  it("R16, R8: two resumes of one interrupt race: exactly one runs the tools, the other gets session_conflict; a new prompt is refused while approvals wait", async () => {
    const ran: string[] = [];
    server.enqueue(
      { content: [call("d1", "deploy", { service: "api", version: "3" })] },
      text("done"),
      text("never"),
    );
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: opsTools(ran), sessionStore: store }));
    const paused = await agent.run("Ship", { sessionId: "race" });
    await expect(agent.run("Something else", { sessionId: "race" })).rejects.toMatchObject({
      code: "session_conflict",
      message: expect.stringMatching(
        /waiting for approval of 1 tool call\(s\) \(deploy: appr_.*agent\.resume\("race", \{ decisions/,
      ),
    });
    const decisions = { [paused.pendingApprovals![0]!.approvalId]: { approved: true as const } };
    const outcomes = await Promise.allSettled([
      agent.resume("race", { decisions }).finalResult(),
      createAgent(agentOptions({ tools: opsTools(ran), sessionStore: store }))
        .resume("race", { decisions })
        .finalResult(),
    ]);
    expect(outcomes.map((outcome) => outcome.status).sort()).toEqual(["fulfilled", "rejected"]);
    const rejected = outcomes.find(
      (outcome) => outcome.status === "rejected",
    ) as PromiseRejectedResult;
    expect(rejected.reason).toMatchObject({ code: "session_conflict" });
    expect(ran).toEqual(["deploy api@3"]);
  });

  it("R13, R14: the batch policy sees the batch first; needsApproval gets the validated input; one that throws answers its call and does not pause the run", async () => {
    const order: string[] = [];
    const risky = tool(
      "risky",
      "Might need approval",
      z.object({ level: z.coerce.number() }),
      async ({ level }) => ({ content: `ran at ${level}` }),
      {
        needsApproval: (input) => {
          order.push(`needsApproval ${typeof input.level}`);
          if (input.level < 0) throw new Error("cannot judge a negative level");
          return false;
        },
      },
    );
    server.enqueue(
      { content: [call("r1", "risky", { level: "2" }), call("r2", "risky", { level: "-1" })] },
      text("done"),
    );
    const agent = createAgent(
      agentOptions({
        tools: [risky],
        toolBatchPolicy: {
          validate: () => {
            order.push("policy");
            return { allowed: true };
          },
        },
      }),
    );
    const result = await agent.run("go");
    expect(order).toEqual(["policy", "needsApproval number", "needsApproval number"]);
    expect(result.subtype).toBe("success");
    expect(resultTexts(result.messages, 2)).toEqual([
      "ran at 2",
      '✗ Tool call "risky" (r2) did not run: its needsApproval check threw: cannot judge a negative level',
    ]);
  });

  it("R17: needsApproval is checked before beforeToolCall; after the decision beforeToolCall still decides in-process", async () => {
    const asked: string[] = [];
    const ran: string[] = [];
    server.enqueue(
      { content: [call("d1", "deploy", { service: "api", version: "1" })] },
      text("done"),
    );
    const agent = createAgent(
      agentOptions({
        tools: opsTools(ran),
        hooks: {
          beforeToolCall: (request) => {
            asked.push(request.id);
            return { deny: "the change window is closed" };
          },
        },
      }),
    );
    const paused = await agent.run("Ship");
    expect(asked).toEqual([]);
    const result = await agent
      .resume(paused.sessionId, {
        decisions: { [paused.pendingApprovals![0]!.approvalId]: { approved: true } },
      })
      .finalResult();
    expect(asked).toEqual(["d1"]);
    expect(ran).toEqual([]);
    expect(resultTexts(result.messages, 2)).toEqual(["✗ the change window is closed"]);
  });

  it("R13: agent tools, and built-ins by name through createAgent, take needsApproval; unknown names are refused", async () => {
    const helper = defineAgent({ name: "helper", description: "Helps" });
    server.enqueue({ content: [call("h1", "helper", { task: "do it" })] });
    const agent = createAgent(
      agentOptions({ tools: [agentTool(helper, { needsApproval: true })] }),
    );
    const paused = await agent.run("go");
    expect(paused.pendingApprovals?.[0]).toMatchObject({ toolName: "helper", kind: "agent_tool" });
    expect(() =>
      createAgent(agentOptions({ builtinTools: ["Read"], needsApproval: { Bash: true } })),
    ).toThrow(
      /AgentOptions: option "needsApproval" names "Bash", which is none of the agent's tools \(Read\)/,
    );
    server.enqueue({ content: [call("b1", "Bash", { command: "echo hi" })] });
    const withBash = createAgent(
      agentOptions({ builtinTools: ["Bash"], needsApproval: { Bash: true } }),
    );
    expect((await withBash.run("go")).pendingApprovals?.[0]).toMatchObject({
      toolName: "Bash",
      kind: "builtin",
    });
  });

  it("R22: the new options are checked strictly", () => {
    const schema = z.object({});
    expect(() =>
      tool("t", "d", schema, () => ({ content: "" }), { needsApproval: "yes" as never }),
    ).toThrow(/tool\("t"\): needsApproval must be true or a function/);
    expect(() => tool("t", "d", schema, () => ({ content: "" }), { timeoutMs: 0 })).toThrow(
      /tool\("t"\): timeoutMs must be a number of milliseconds > 0/,
    );
    expect(() => createAgent(agentOptions({ toolTimeoutMs: -5 }))).toThrow(
      /AgentOptions: option "toolTimeoutMs" must be a number of milliseconds > 0/,
    );
    const agent = createAgent(agentOptions());
    expect(() => agent.resume("s", { decisions: { a: { approved: "yes" } } as never })).toThrow(
      /ResumeOptions: option "decisions" has .* for "a"; a decision is \{ approved: true \}/,
    );
  });
});

describe("tool time limits (R20, R21)", () => {
  it("R20: at the deadline the call is answered, its signal aborts with a TimeoutError, its slot is released, siblings go on, and a late outcome is discarded and traced", async () => {
    const events: TraceEvent[] = [];
    let reason: unknown;
    let lateSettle!: () => void;
    const stuck = tool(
      "stuck",
      "Ignores its signal",
      z.object({}),
      async (_input, { signal }) => {
        signal.addEventListener("abort", () => {
          reason = signal.reason;
        });
        await new Promise<void>((resolve) => {
          lateSettle = resolve;
        });
        return { content: "too late" };
      },
      { timeoutMs: 60 },
    );
    const started: string[] = [];
    const quick = tool("quick", "Quick", z.object({ n: z.number() }), async ({ n }) => {
      started.push(`quick ${n}`);
      return { content: `quick ${n}` };
    });
    server.enqueue(
      { content: [call("s1", "stuck", {}), call("q1", "quick", { n: 1 })] },
      text("went on"),
    );
    const agent = createAgent(
      agentOptions({
        tools: [stuck, quick],
        toolConcurrency: { mode: "sequential" },
        onTrace: (event) => events.push(event),
      }),
    );
    const result = await agent.run("go");
    expect(result.subtype).toBe("success");
    expect(resultTexts(result.messages, 2)).toEqual([
      '✗ Tool "stuck" timed out after 60 ms.',
      "quick 1",
    ]);
    expect(started).toEqual(["quick 1"]);
    expect(reason).toMatchObject({ name: "TimeoutError" });
    const finished = events.find(
      (event) => event.type === "tool_call_finished" && event.id === "s1",
    );
    expect(finished).toMatchObject({ status: "timed_out", isError: true });
    lateSettle();
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events.find((event) => event.type === "tool_call_settled_late")).toMatchObject({
      id: "s1",
      givenStatus: "timed_out",
      lateIsError: false,
    });
  });

  it("R20, R21: the agent's toolTimeoutMs bounds tools without their own, and an agent tool's limit aborts its child run", async () => {
    let childSignal: AbortSignal | undefined;
    const slow = tool("slow", "Slow", z.object({}), async (_input, { signal }) => {
      childSignal = signal;
      await new Promise((_resolve, reject) =>
        signal.addEventListener("abort", () => reject(signal.reason)),
      );
      return { content: "never" };
    });
    const helper = defineAgent({ name: "helper", description: "Helps", tools: [slow] });
    server.enqueue(
      { content: [call("h1", "helper", { task: "work" })] },
      { content: [call("x1", "slow", {})] },
      text("parent continues"),
    );
    const agent = createAgent(agentOptions({ tools: [agentTool(helper)], toolTimeoutMs: 80 }));
    const result = await agent.run("go");
    expect(result.subtype).toBe("success");
    expect(resultTexts(result.messages, 2)).toEqual(['✗ Tool "helper" timed out after 80 ms.']);
    expect(childSignal?.aborted).toBe(true);
  });
});

describe("approvals over several resumes", () => {
  it("R15: a resumed batch that pauses again for another call keeps the decisions given before", async () => {
    const ran: string[] = [];
    const deploy = tool(
      "deploy",
      "Deploy",
      z.object({}),
      async () => {
        ran.push("deploy");
        return { content: "deployed" };
      },
      { needsApproval: true },
    );
    const refund = tool(
      "refund",
      "Refund",
      z.object({}),
      async () => {
        ran.push("refund");
        return { content: "refunded" };
      },
      { needsApproval: (_input, ctx) => (ctx.context as { role: string }).role !== "admin" },
    );
    server.enqueue({ content: [call("c1", "deploy", {}), call("c2", "refund", {})] }, text("done"));
    const agent = createAgent(agentOptions({ tools: [deploy, refund] }));
    const approveAll = (result: { pendingApprovals?: readonly { approvalId: string }[] }) =>
      Object.fromEntries(
        (result.pendingApprovals ?? []).map((a) => [a.approvalId, { approved: true as const }]),
      );
    const first = await agent.run("go", { sessionId: "s", context: { role: "admin" } });
    expect(first.pendingApprovals?.map((a) => a.toolUseId)).toEqual(["c1"]);
    const second = await agent
      .resume("s", { decisions: approveAll(first), context: { role: "reviewer" } })
      .finalResult();
    expect(second.pendingApprovals?.map((a) => a.toolUseId)).toEqual(["c2"]);
    const third = await agent
      .resume("s", { decisions: approveAll(second), context: { role: "reviewer" } })
      .finalResult();
    expect(third.subtype).toBe("success");
    expect(ran.sort()).toEqual(["deploy", "refund"]);
  });
});

describe("a decision's edited input is bounded like a model's (H26)", () => {
  /** An object `levels` deep: { a: { a: ... { a: 1 } } }. */
  const nested = (levels: number): Record<string, unknown> => {
    let value: Record<string, unknown> = { a: 1 };
    for (let level = 1; level < levels; level++) value = { a: value };
    return value;
  };

  async function pausedDeploy() {
    const ran: string[] = [];
    server.enqueue({ content: [call("d1", "deploy", { service: "api", version: "2.1" })] });
    const store = memorySessionStore();
    const agent = createAgent(agentOptions({ tools: opsTools(ran), sessionStore: store }));
    const paused = await agent.run("Ship it", { sessionId: "ops" });
    const approvalId = paused.pendingApprovals![0]!.approvalId;
    const { version } = await store.load("ops");
    return { agent, store, ran, approvalId, version };
  }

  for (const [what, input, bound] of [
    ["nested 1,500 levels deep", nested(1_500), /nested more than 100 levels deep/],
    ["nested 5,000 levels deep", nested(5_000), /nested more than 100 levels deep/],
    [
      "5 MB of JSON",
      { service: "api", version: "x".repeat(5 * 1024 * 1024) },
      /longer than the 4194304 characters of JSON allowed/,
    ],
  ] as const) {
    for (const via of ["resume", "step"] as const) {
      it(`H26: an edited input ${what} is refused by ${via}() naming the bound, before anything is stored; never a RangeError`, async () => {
        const { agent, store, ran, approvalId, version } = await pausedDeploy();
        const decisions = { [approvalId]: { approved: true as const, input } };
        let error: unknown;
        try {
          if (via === "resume") await agent.resume("ops", { decisions }).finalResult();
          else await agent.step("ops", { decisions });
        } catch (caught) {
          error = caught;
        }
        expect(error).not.toBeInstanceOf(RangeError);
        expect(error).toMatchObject({ name: "InvalidOptionError", option: "decisions" });
        const message = (error as Error).message;
        expect(message).toMatch(bound);
        expect(message).toContain(approvalId);
        expect(message).not.toMatch(/session store|failed to/i);
        // Nothing was stored and nothing ran; the run still waits for its decision.
        expect((await store.load("ops")).version).toBe(version);
        expect(ran).toEqual([]);
        expect(server.requests).toHaveLength(1);
      });
    }
  }

  it("H26: an edited input that is not an object (an array 5,000 levels deep, a string) is refused, as a model's would be", async () => {
    let deepArray: unknown = [];
    for (let level = 0; level < 5_000; level++) deepArray = [deepArray];
    for (const input of [deepArray, "service=api"]) {
      const { agent, store, approvalId, version } = await pausedDeploy();
      const error = await Promise.resolve()
        .then(() =>
          agent
            .resume("ops", { decisions: { [approvalId]: { approved: true, input } } })
            .finalResult(),
        )
        .catch((caught: unknown) => caught);
      expect(error).toMatchObject({ name: "InvalidOptionError", option: "decisions" });
      expect((error as Error).message).toContain("which is not a JSON object");
      expect((await store.load("ops")).version).toBe(version);
      server.requests.length = 0;
    }
  });

  /** An object that JSON.stringify turns into one `levels` deep, through its toJSON(). */
  const deepWhenSerialized = (levels: number) => ({
    service: "api",
    version: "2.1",
    toJSON: () => nested(levels),
  });

  for (const [what, input, rule] of [
    [
      "whose toJSON() nests 10,000 levels",
      deepWhenSerialized(10_000),
      /input\.toJSON is a function/,
    ],
    [
      "holding an object whose toJSON() nests 10,000 levels",
      { service: "api", version: "2.1", meta: { toJSON: () => nested(10_000) } },
      /input\.meta\.toJSON is a function/,
    ],
    ["holding a BigInt", { service: "api", version: 1n }, /input\.version is a bigint/],
    ["that is a Date", new Date(0), /, a Date, which is not a JSON object/],
    ["that is a Map", new Map([["service", "api"]]), /, a Map, which is not a JSON object/],
    [
      "holding a Date",
      { service: "api", version: "2.1", at: new Date(0) },
      /input\.at is a Date, not a plain object/,
    ],
    [
      "with a getter that throws",
      {
        service: "api",
        get version(): string {
          throw new TypeError("boom");
        },
      },
      /could not be read as plain data \(boom\)/,
    ],
  ] as const) {
    for (const via of ["resume", "step"] as const) {
      it(`H26: an edited input ${what} is refused by ${via}() as not plain JSON, with an InvalidOptionError naming ${via === "resume" ? "ResumeOptions" : "StepOptions"}; never a RangeError or TypeError`, async () => {
        const { agent, store, ran, approvalId, version } = await pausedDeploy();
        const decisions = { [approvalId]: { approved: true as const, input } };
        let error: unknown;
        try {
          if (via === "resume") await agent.resume("ops", { decisions }).finalResult();
          else await agent.step("ops", { decisions });
        } catch (caught) {
          error = caught;
        }
        expect(error).toMatchObject({ name: "InvalidOptionError", option: "decisions" });
        const message = (error as Error).message;
        expect(message).toMatch(via === "resume" ? /^ResumeOptions: / : /^StepOptions: /);
        expect(message).toMatch(rule);
        expect(message).toContain(approvalId);
        expect((await store.load("ops")).version).toBe(version);
        expect(ran).toEqual([]);
      });
    }
  }

  it("H26: an edited input with undefined properties is kept as JSON keeps it (they are left out)", async () => {
    const { agent, approvalId, store } = await pausedDeploy();
    server.enqueue(text("done"));
    const result = await agent
      .resume("ops", {
        decisions: {
          [approvalId]: {
            approved: true,
            input: { service: "api", version: "2.2", note: undefined },
          },
        },
      })
      .finalResult();
    expect(result.subtype).toBe("success");
    const { entries } = await store.load("ops");
    const logged = entries.find((entry) => entry.type === "decisions") as {
      decisions: Record<string, unknown>;
    };
    expect(logged.decisions[approvalId]).toEqual({
      approved: true,
      input: { service: "api", version: "2.2" },
    });
  });

  it("H26: an edited input at the bound (100 levels) is accepted and judged by the tool's schema, as a model's would be", async () => {
    const { agent, approvalId } = await pausedDeploy();
    server.enqueue(text("done"));
    const result = await agent
      .resume("ops", {
        decisions: { [approvalId]: { approved: true, input: { ...nested(99), service: "api" } } },
      })
      .finalResult();
    expect(result.subtype).toBe("success");
    // The schema, not the bound, answered: "version" is missing.
    expect(resultTexts(result.messages, 2)[0]).toMatch(/^✗ .*version/s);
  });
});
