import {
  createScriptedModelServer,
  type RecordedRequest,
  type ScriptedModelServer,
  type ScriptedTurn,
} from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  agentTool,
  createInMemoryMailbox,
  createTeam,
  defineAgent,
  type Mailbox,
  type MailboxMessage,
  type TeamEvent,
  type TeamOptions,
} from "./index.js";

let server: ScriptedModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

interface Conversation {
  readonly member: string;
  readonly messages: ReadonlyArray<{ role: string; content: unknown }>;
  /** The text of the run's first user message (its prompt). */
  readonly prompt: string;
  /** Everything in the last user message, as JSON text. */
  readonly last: string;
  /** Model turns already taken in this run. */
  readonly turn: number;
}

/**
 * A scripted server that answers each member by its system prompt ("You are <name>."), so
 * concurrent runs of different members get the right replies whatever the request order.
 */
async function routedServer(
  script: Record<string, (conversation: Conversation) => ScriptedTurn>,
): Promise<ScriptedModelServer> {
  server = await createScriptedModelServer({
    respond(request: RecordedRequest) {
      const body = request.body as {
        system?: string;
        messages: Array<{ role: string; content: unknown }>;
      };
      const member = /^You are (\w+)\./.exec(body.system ?? "")?.[1] ?? "?";
      const first = body.messages[0]?.content;
      const conversation: Conversation = {
        member,
        messages: body.messages,
        prompt: typeof first === "string" ? first : JSON.stringify(first),
        last: JSON.stringify(body.messages.at(-1)?.content),
        turn: (body.messages.length - 1) / 2,
      };
      const answer = script[member];
      if (answer === undefined) return { status: 500, body: { error: `no script for ${member}` } };
      return answer(conversation);
    },
  });
  return server;
}

function teamOptions(extra: Partial<TeamOptions> & Pick<TeamOptions, "members">): TeamOptions {
  return {
    apiKey: "sk-team",
    baseURL: server?.anthropicBaseURL as string,
    model: "scripted",
    ...extra,
  };
}

const text = (value: string, delayMs?: number): ScriptedTurn => ({
  content: [{ type: "text", text: value }],
  ...(delayMs !== undefined ? { delayMs } : {}),
});
const handoff = (name: string, task: string): ScriptedTurn => ({
  content: [{ type: "tool_use", name, input: { task, mode: "handoff" } }],
});

/** "member:type" lines for runs and mail, the team's own account of who did what. */
function timeline(events: readonly TeamEvent[]): string[] {
  return events.flatMap((event) => {
    switch (event.type) {
      case "mail_posted":
        return [`${event.mail.from}→${event.mail.to}:${event.mail.kind}`];
      case "run_started":
      case "run_finished":
      case "run_failed":
      case "mail_delivered":
        return [`${event.member}:${event.type}`];
      default:
        return [];
    }
  });
}

const writer = defineAgent({ name: "writer", systemPrompt: "You are writer." });

describe("createTeam: handoffs and replies", () => {
  it("a handed-off task starts a run of its target; the result comes back to the finished sender as a new run", async () => {
    await routedServer({
      lead: (c) =>
        c.prompt.startsWith('Reply from "writer"')
          ? text(`Final: ${c.prompt.split("\n\n")[1]}`)
          : c.turn === 0
            ? handoff("writer", "Draft the summary")
            : text("Waiting for writer."),
      writer: (c) => text(`DRAFT for <${c.prompt}>`, 300),
    });
    const lead = defineAgent({
      name: "lead",
      systemPrompt: "You are lead.",
      tools: [agentTool(writer)],
    });
    const posted: MailboxMessage[] = [];
    const inner = createInMemoryMailbox();
    const mailbox: Mailbox = {
      post(message) {
        posted.push(message);
        return inner.post(message);
      },
      take: (member) => inner.take(member),
      size: (member) => inner.size(member),
    };
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [lead, writer], mailbox, onEvent: (event) => events.push(event) }),
    );
    expect(team.members).toEqual(["lead", "writer"]);

    const first = await team.run("lead", "Write a report");
    expect(first.result).toBe("Waiting for writer.");
    await team.idle();

    expect(timeline(events)).toEqual([
      "user→lead:task",
      "lead:run_started",
      "lead→writer:task",
      "writer:run_started",
      "lead:run_finished",
      "writer:run_finished",
      "writer→lead:reply",
      "lead:run_started",
      "lead:run_finished",
    ]);
    // The pluggable mailbox carried every message.
    expect(posted.map((mail) => `${mail.kind}:${mail.from}→${mail.to}`)).toEqual([
      "task:user→lead",
      "task:lead→writer",
      "reply:writer→lead",
    ]);
    const [, task, reply] = posted;
    expect(task).toMatchObject({ task: "Draft the summary", chain: ["lead", "writer"] });
    expect(reply).toMatchObject({
      inReplyTo: task?.id,
      task: "Draft the summary",
      result: 'DRAFT for <"lead" handed you this task:\n\nDraft the summary>',
      chain: ["lead", "writer", "lead"],
    });
    const finished = events.filter((event) => event.type === "run_finished");
    expect(finished.at(-1)).toMatchObject({
      member: "lead",
      mail: { kind: "reply" },
      result: { result: 'Final: DRAFT for <"lead" handed you this task:' },
    });
    expect(await mailbox.size()).toBe(0);
    // The members' messages are in the events too, marked with their run.
    const leadMessages = events.filter(
      (event) => event.type === "agent_message" && event.member === "lead",
    );
    expect(leadMessages.length).toBeGreaterThan(0);
  });

  it("a reply to a sender that is still running reaches it at its next turn", async () => {
    const wait = tool("wait", "Waits a moment", z.object({}), async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return { content: "waited" };
    });
    await routedServer({
      lead: (c) =>
        c.turn === 0
          ? {
              content: [
                {
                  type: "tool_use",
                  name: "writer",
                  input: { task: "Draft it", mode: "handoff" },
                },
                { type: "tool_use", name: "wait", input: {} },
              ],
            }
          : text(c.last.includes('Reply from \\"writer\\"') ? "Got the draft." : "No reply yet."),
      writer: () => text("DRAFT"),
    });
    const lead = defineAgent({
      name: "lead",
      systemPrompt: "You are lead.",
      tools: [agentTool(writer), wait],
    });
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [lead, writer], onEvent: (event) => events.push(event) }),
    );
    const result = await team.run("lead", "Write a report");
    await team.idle();
    expect(result.result).toBe("Got the draft.");
    expect(timeline(events).filter((line) => line.startsWith("lead:"))).toEqual([
      "lead:run_started",
      "lead:mail_delivered",
      "lead:run_finished",
    ]);
    // The reply is a text block after the tool results of the lead's next request.
    const leadSecond = server?.requests
      .map((request) => request.body as { system: string; messages: unknown[] })
      .filter((body) => body.system.startsWith("You are lead."))[1];
    const lastMessage = leadSecond?.messages.at(-1) as
      | { content: Array<{ type: string; text?: string }> }
      | undefined;
    const content = lastMessage?.content ?? [];
    expect(content.map((block) => block.type)).toEqual(["tool_result", "tool_result", "text"]);
    expect(content[2]?.text).toBe(
      'Reply from "writer" to the task you handed off ("Draft it"):\n\nDRAFT',
    );
  });

  it("guards against handoff cycles (A → B → A → …) with maxDepth and a clear error", async () => {
    // B hands off to "A" by name; the team resolves the name to its member A.
    const aByName = defineAgent({ name: "A" });
    const b = defineAgent({
      name: "B",
      systemPrompt: "You are B.",
      tools: [agentTool(aByName, { modes: ["handoff"] })],
    });
    const a = defineAgent({
      name: "A",
      systemPrompt: "You are A.",
      tools: [agentTool(b, { modes: ["handoff"] })],
    });
    const refusals: string[] = [];
    const answer =
      (next: string) =>
      (c: Conversation): ScriptedTurn => {
        if (c.turn === 0) return handoff(next, "ping");
        if (c.last.includes("agent_depth_exceeded") || c.last.includes("over maxDepth")) {
          refusals.push(c.last);
          return text("stopped");
        }
        return text("passed on");
      };
    await routedServer({ A: answer("B"), B: answer("A") });
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [a, b], maxDepth: 2, onEvent: (event) => events.push(event) }),
    );
    await team.run("A", "start");
    await team.idle();
    expect(refusals.length).toBeGreaterThan(0);
    expect(refusals[0]).toContain("the agent chain A → B → A → B would be 3 deep, over maxDepth 2");
    const started = events.filter((event) => event.type === "run_started");
    expect(started.length).toBeLessThan(12);
    for (const event of started) expect(event.depth).toBeLessThanOrEqual(3);
  });

  it("a handoff to an agent that is not a member answers is_error", async () => {
    const stranger = defineAgent({ name: "stranger" });
    await routedServer({
      lead: (c) =>
        c.turn === 0
          ? handoff("stranger", "t")
          : text(c.last.includes("not a member") ? "refused" : "posted"),
    });
    const lead = defineAgent({
      name: "lead",
      systemPrompt: "You are lead.",
      tools: [agentTool(stranger)],
    });
    const team = createTeam(teamOptions({ members: [lead] }));
    expect((await team.run("lead", "go")).result).toBe("refused");
    await team.idle();
    expect(await team.mailbox.size()).toBe(0);
  });
});

describe("createTeam: replies to senders outside the team", () => {
  it("a task posted to team.mailbox from outside runs; its reply (here a failure) waits in the mailbox under the sender", async () => {
    await routedServer({
      brief: () => ({ content: [{ type: "tool_use", name: "missing_tool", input: {} }] }),
    });
    const brief = defineAgent({ name: "brief", systemPrompt: "You are brief.", maxTurns: 1 });
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [brief], onEvent: (event) => events.push(event) }),
    );
    await team.mailbox.post({
      id: "mail_ops_1",
      kind: "task",
      from: "ops",
      to: "brief",
      task: "Summarise the incident",
      createdAt: new Date().toISOString(),
      chain: ["ops", "brief"],
    });
    await team.idle();
    expect(timeline(events)).toEqual([
      "ops→brief:task",
      "brief:run_started",
      "brief:run_finished",
      "brief→ops:reply",
    ]);
    const [reply] = await team.mailbox.take("ops");
    expect(reply).toMatchObject({
      kind: "reply",
      from: "brief",
      to: "ops",
      inReplyTo: "mail_ops_1",
      isError: true,
    });
    expect(reply?.result).toContain('Agent "brief" failed (error_max_turns)');
  });
});

describe("createTeam: abort and idle", () => {
  it("abort() aborts running runs (run() rejects with AbortError) and idle() resolves", async () => {
    server = await createScriptedModelServer({ turns: [{ fault: "hang" }] });
    const lead = defineAgent({ name: "lead" });
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [lead], onEvent: (event) => events.push(event) }),
    );
    const pending = team.run("lead", "go");
    while ((server?.requests.length ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
    const started = performance.now();
    team.abort();
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    expect((error as Error).name).toBe("AbortError");
    await team.idle();
    expect(performance.now() - started).toBeLessThan(1000);
    expect(team.aborted).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "run_failed", member: "lead" });
    await expect(team.run("lead", "again")).rejects.toMatchObject({ name: "AbortError" });
  });

  it("run()'s own signal aborts that run only", async () => {
    server = await createScriptedModelServer({
      turns: [{ fault: "hang" }, { content: [{ type: "text", text: "second" }] }],
    });
    const lead = defineAgent({ name: "lead" });
    const team = createTeam(teamOptions({ members: [lead] }));
    const controller = new AbortController();
    const first = team.run("lead", "one", { signal: controller.signal });
    while ((server?.requests.length ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
    controller.abort();
    await expect(first).rejects.toMatchObject({ name: "AbortError" });
    expect((await team.run("lead", "two")).result).toBe("second");
    await team.idle();
    expect(team.aborted).toBe(false);
  });

  it("abort() while a durable mailbox's post is in flight: no unhandled rejection; run() rejects", async () => {
    server = await createScriptedModelServer();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on("unhandledRejection", onUnhandled);
    try {
      const inner = createInMemoryMailbox();
      let posting: (() => void) | undefined;
      const slow: Mailbox = {
        post: (mail) =>
          new Promise<void>((resolve) => {
            posting = () => {
              inner.post(mail);
              resolve();
            };
          }),
        take: (member) => inner.take(member),
        size: (member) => inner.size(member),
      };
      const team = createTeam(teamOptions({ members: [writer], mailbox: slow }));
      const pending = team.run("writer", "go");
      while (posting === undefined) await new Promise((r) => setTimeout(r, 1));
      team.abort("shutting down");
      // Give an unhandled rejection of the run's promise time to be reported.
      await new Promise((r) => setTimeout(r, 20));
      posting();
      const error = await pending.then(
        () => undefined,
        (caught: unknown) => caught,
      );
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
      expect((error as Error).name).toBe("AbortError");
      expect((error as Error).message).toBe(
        "The team was aborted: shutting down. Every run it had started has settled; tasks still waiting never started.",
      );
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("a failed post rejects run() with the mailbox's error and leaves no waiter behind", async () => {
    server = await createScriptedModelServer();
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown): void => {
      unhandled.push(reason);
    };
    process.on("unhandledRejection", onUnhandled);
    try {
      const inner = createInMemoryMailbox();
      const broken: Mailbox = {
        post: async () => {
          throw new Error("disk full");
        },
        take: (member) => inner.take(member),
        size: (member) => inner.size(member),
      };
      const team = createTeam(teamOptions({ members: [writer], mailbox: broken }));
      await expect(team.run("writer", "go")).rejects.toThrow("disk full");
      // A leaked waiter would be rejected here, with nobody listening.
      team.abort();
      await team.idle();
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).toEqual([]);
    } finally {
      process.off("unhandledRejection", onUnhandled);
    }
  });

  it("run() rejects with the team's own message, once the runs the team had started have settled", async () => {
    server = await createScriptedModelServer({ turns: [{ fault: "hang" }] });
    const lead = defineAgent({ name: "lead" });
    const events: TeamEvent[] = [];
    const team = createTeam(
      teamOptions({ members: [lead], onEvent: (event) => events.push(event) }),
    );
    const running = team.run("lead", "one");
    const queued = team.run("lead", "two");
    while ((server?.requests.length ?? 0) < 1) await new Promise((r) => setTimeout(r, 5));
    team.abort();
    const settled = (promise: Promise<unknown>) =>
      promise.then(
        () => undefined,
        (caught: unknown) => ({ error: caught as Error, failedRuns: failedRuns() }),
      );
    const failedRuns = () => events.filter((event) => event.type === "run_failed").length;
    const [first, second] = await Promise.all([settled(running), settled(queued)]);
    const message =
      "The team was aborted. Every run it had started has settled; tasks still waiting never started.";
    expect(first?.error.name).toBe("AbortError");
    expect(first?.error.message).toBe(message);
    expect(second?.error.name).toBe("AbortError");
    expect(second?.error.message).toBe(message);
    // The queued task's caller hears of the abort only after the running run has failed.
    expect(second?.failedRuns).toBe(1);
    let late: unknown;
    try {
      await team.run("lead", "three");
    } catch (error) {
      late = error;
    }
    expect((late as Error).name).toBe("AbortError");
    expect((late as Error).message).toBe("The team was aborted. It starts no more runs.");
  });

  it("idle() resolves at once for a team with nothing to do", async () => {
    server = await createScriptedModelServer();
    const team = createTeam(teamOptions({ members: [writer] }));
    await team.idle();
  });
});

describe("createTeam: options", () => {
  it("checks its options strictly and its members when created", async () => {
    server = await createScriptedModelServer();
    expect(() => createTeam(teamOptions({ members: [writer], bogusOption: 1 } as never))).toThrow(
      'createTeam(): unknown option "bogusOption". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
    expect(() => createTeam({ members: [] })).toThrow(/option "members"/);
    expect(() => createTeam(teamOptions({ members: [writer, writer] }))).toThrow(
      /two members named "writer"/,
    );
    expect(() => createTeam({ members: [writer] })).toThrow(/names no model/);
    expect(() => createTeam(teamOptions({ members: [writer], maxDepth: 1.5 }))).toThrow(
      /option "maxDepth"/,
    );
    const team = createTeam(teamOptions({ members: [writer] }));
    await expect(team.run("nobody", "t")).rejects.toMatchObject({ code: "unknown_member" });
    await expect(team.run("writer", "t", { bogus: 1 } as never)).rejects.toThrow(
      /team\.run\(\): unknown option "bogus"/,
    );
  });
});
