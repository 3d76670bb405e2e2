// The golden record of what a run produces: every log entry, every message and every trace
// event of a plain run, a session run, an approval pause and its resume, a team-mail run and
// an aborted run, compared with the records in `__golden__/`. The run driver is being rebuilt as a
// step machine (one module per step kind); it must produce these records identically.
// Times, durations and random ids are replaced by stable tokens (the same id gets the same
// token within a scenario, so which entry names which run or call stays checked); everything
// else is compared as is, order included. A deliberate change of what runs produce is made by
// regenerating the record (`vitest run golden-runs -u`) and reviewing its diff.
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  agentTool,
  createAgent,
  createTeam,
  defineAgent,
  memorySessionStore,
  type SDKResultMessage,
  type SessionEntry,
  type SessionStore,
  stepMessages,
  type TraceEvent,
} from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const TIME_KEYS = /^(time|timestamp)$|(At|Ms|_ms)$/;
// UUIDs (bare or prefixed, such as `mail_…`), prefixed random ids (`appr_…`), flat ids.
const RANDOM_ID =
  /(?:[a-z]+_)?[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\b[a-z]+_[A-Za-z0-9_-]{20,}|\b[a-z]+[0-9a-f]{32}\b/g;

/** `text` with its random ids replaced by tokens (one per id) and the server's port hidden. */
function stableText(text: string, ids: Map<string, string>): string {
  return text
    .replace(RANDOM_ID, (id) => {
      if (!ids.has(id)) ids.set(id, `<id ${ids.size + 1}>`);
      return ids.get(id)!;
    })
    .replace(/127\.0\.0\.1:\d+/g, "127.0.0.1:<port>");
}

/** A copy of `value` with times replaced and random ids (keys too) made stable. */
function stable(value: unknown, ids = new Map<string, string>()): unknown {
  if (typeof value === "string") return stableText(value, ids);
  if (Array.isArray(value)) return value.map((item) => stable(item, ids));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      out[stableText(key, ids)] =
        TIME_KEYS.test(key) && (typeof item === "number" || typeof item === "string")
          ? "<time>"
          : stable(item, ids);
    }
    return out;
  }
  return value;
}

function options(events: TraceEvent[], extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-golden",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    onTrace: (event) => events.push(event),
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

const lookup = tool(
  "lookup",
  "Looks a word up",
  z.object({ word: z.string() }),
  async ({ word }) => ({ content: `${word}: found` }),
  { isConcurrencySafe: () => true },
);
const write = tool("write", "Writes a note", z.object({ note: z.string() }), async ({ note }) => ({
  content: `wrote ${note}`,
}));
const deploy = tool(
  "deploy",
  "Deploys a service",
  z.object({ service: z.string() }),
  async ({ service }) => ({ content: `deployed ${service}` }),
  { needsApproval: true },
);

/** Every entry of every session in `store`, by session. */
async function logOf(store: SessionStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  for (const sessionId of (await store.list()).sort()) {
    out[sessionId] = (await store.load(sessionId)).entries;
  }
  return out;
}

/** The messages `stepMessages` rebuilds from `entries`, for every step of every run in them. */
function rebuiltSteps(sessionId: string, entries: readonly SessionEntry[]): unknown[] {
  const steps = [];
  for (const start of entries) {
    if (start.type !== "run_started") continue;
    const replies = entries.filter(
      (entry) => entry.type === "reply" && entry.runId === start.runId,
    ).length;
    for (let step = 0; step < 2 * replies; step++) {
      steps.push({
        step,
        messages: stepMessages(entries, { sessionId, runId: String(start.runId), step }),
      });
    }
  }
  return steps;
}

/** Compares what a scenario produced with its golden record, `__golden__/<name>.json`. */
async function golden(name: string, produced: unknown): Promise<void> {
  await expect(`${JSON.stringify(stable(produced), null, 2)}\n`).toMatchFileSnapshot(
    `./__golden__/${name}.json`,
  );
}

describe("golden runs: what the run driver produces", () => {
  it("a plain run: a batch of two safe calls and an unsafe one, then a reply", async () => {
    server.enqueue(
      {
        content: [
          { type: "text", text: "Looking both up." },
          call("c1", "lookup", { word: "lattice" }),
          call("c2", "lookup", { word: "agent" }),
          call("c3", "write", { note: "both" }),
        ],
      },
      text("Both found and noted."),
    );
    const events: TraceEvent[] = [];
    const store = memorySessionStore();
    const agent = createAgent(options(events, { tools: [lookup, write], sessionStore: store }));
    const messages = [];
    for await (const message of agent.query("Look up lattice and agent")) messages.push(message);
    await golden("plain", { messages, events, log: await logOf(store) });
  });

  it("a session run: two prompts on one session, the second seeing the first", async () => {
    server.enqueue(
      { content: [call("c1", "lookup", { word: "first" })] },
      text("First done."),
      text("Second done."),
    );
    const events: TraceEvent[] = [];
    const store = memorySessionStore();
    const agent = createAgent(options(events, { tools: [lookup], sessionStore: store }));
    const first = [];
    for await (const message of agent.query("First", { sessionId: "golden" })) first.push(message);
    const second = [];
    for await (const message of agent.query("Second", { sessionId: "golden" }))
      second.push(message);
    const { entries } = await store.load("golden");
    await golden("session", {
      first,
      second,
      events,
      log: await logOf(store),
      rebuilt: rebuiltSteps("golden", entries),
      sentToModel: server.requests.map((request) => request.body),
    });
  });

  it("an approval pause and its resume: one call approved, one denied", async () => {
    server.enqueue(
      {
        content: [
          call("s1", "lookup", { word: "api" }),
          call("d1", "deploy", { service: "api" }),
          call("d2", "deploy", { service: "web" }),
        ],
      },
      text("Deployed api only."),
    );
    const events: TraceEvent[] = [];
    const store = memorySessionStore();
    const agent = createAgent(options(events, { tools: [lookup, deploy], sessionStore: store }));
    const paused = [];
    for await (const message of agent.query("Ship", { sessionId: "ops" })) paused.push(message);
    const last = paused.at(-1) as SDKResultMessage;
    const [api, web] = last.pendingApprovals!;
    const resumed = [];
    for await (const message of agent.resume("ops", {
      decisions: {
        [api!.approvalId]: { approved: true },
        [web!.approvalId]: { approved: false, reason: "web is frozen" },
      },
    })) {
      resumed.push(message);
    }
    const { entries } = await store.load("ops");
    await golden("approval", {
      paused,
      resumed,
      events,
      log: await logOf(store),
      rebuilt: rebuiltSteps("ops", entries),
    });
  });

  it("a team-mail run: the lead hands a task off and gets the reply as mail at its next turn", async () => {
    await server.close();
    server = await createScriptedModelServer({
      respond(request) {
        const body = request.body as { system?: string; messages: unknown[] };
        if (body.system?.startsWith("You are writer.")) return text("DRAFT");
        if (body.messages.length === 1) {
          return {
            content: [
              call("h1", "writer", { task: "Draft it", mode: "handoff" }),
              call("w1", "wait", {}),
            ],
          };
        }
        return text("Got the draft.");
      },
    });
    // The lead's second call waits until the writer's reply is posted, so that the reply is
    // always there for the lead's next turn, however loaded the machine.
    let replyPosted!: () => void;
    const posted = new Promise<void>((resolve) => {
      replyPosted = resolve;
    });
    const wait = tool("wait", "Waits for the writer", z.object({}), async () => {
      await posted;
      return { content: "waited" };
    });
    const leadEvents: TraceEvent[] = [];
    const writerEvents: TraceEvent[] = [];
    const writer = defineAgent({
      name: "writer",
      systemPrompt: "You are writer.",
      onTrace: (event) => writerEvents.push(event),
    });
    const lead = defineAgent({
      name: "lead",
      systemPrompt: "You are lead.",
      tools: [agentTool(writer), wait],
      onTrace: (event) => leadEvents.push(event),
    });
    const teamEvents: unknown[] = [];
    const team = createTeam({
      apiKey: "sk-test-golden",
      baseURL: server.anthropicBaseURL,
      model: "scripted",
      members: [lead, writer],
      onEvent: (event) => {
        teamEvents.push(event);
        if (event.type === "mail_posted" && event.mail.kind === "reply") replyPosted();
      },
    });
    const result = await team.run("lead", "Write a report");
    await team.idle();
    await golden("team", {
      result,
      leadEvents,
      writerEvents,
      teamEvents,
      sentToModel: server.requests.map((request) => request.body),
    });
  });

  it("an aborted run: the signal fires while a call runs", async () => {
    server.enqueue({ content: [call("c1", "stall", {})] }, text("never sent"));
    const controller = new AbortController();
    const stall = tool("stall", "Waits until aborted", z.object({}), (_input, ctx) => {
      controller.abort();
      return new Promise((_resolve, reject) => {
        if (ctx.signal.aborted) reject(ctx.signal.reason);
        ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
      });
    });
    const events: TraceEvent[] = [];
    const store = memorySessionStore();
    const agent = createAgent(options(events, { tools: [stall], sessionStore: store }));
    const messages = [];
    let error: unknown;
    try {
      for await (const message of agent.query("Stall", {
        sessionId: "aborted",
        signal: controller.signal,
      })) {
        messages.push(message);
      }
    } catch (caught) {
      error = { name: (caught as Error).name, message: (caught as Error).message };
    }
    await golden("abort", { messages, error, events, log: await logOf(store) });
  });
});
