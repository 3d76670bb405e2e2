import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { MAX_TOOL_INPUT_DEPTH, MAX_TOOL_INPUT_LENGTH } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  createAgent,
  createTeam,
  defineAgent,
  type SDKMessage,
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

function agentOptions(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-robustness",
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

function userMessages(messages: SDKMessage[]): SDKUserMessage[] {
  return messages.filter((message): message is SDKUserMessage => message.type === "user");
}

function resultText(message: SDKUserMessage | undefined, index = 0): string {
  const block = message?.message.content[index];
  return JSON.stringify(block?.content ?? "");
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Records unhandled rejections while `body` runs (and a little after). */
async function withUnhandledRejections(body: () => Promise<void>): Promise<unknown[]> {
  const seen: unknown[] = [];
  const listener = (reason: unknown): void => void seen.push(reason);
  process.on("unhandledRejection", listener);
  try {
    await body();
    await sleep(50);
  } finally {
    process.off("unhandledRejection", listener);
  }
  return seen;
}

describe("callbacks that fail (H1)", () => {
  it("H1: an async onTrace that rejects does not end the host process; the run succeeds and counts the failures", async () => {
    // Node's default for an unhandled rejection is to exit with code 1: run it in a child.
    const cwd = fileURLToPath(new URL("..", import.meta.url));
    const code = `
      import { createScriptedModelServer } from "@lattice/providers/testing";
      import { tool } from "@lattice/tools";
      import { z } from "zod/v4";
      import { createAgent } from "./src/index.ts";
      const server = await createScriptedModelServer();
      server.enqueue(
        { content: [{ type: "tool_use", name: "echo", input: { text: "a" } }] },
        { content: [{ type: "text", text: "done" }] },
      );
      const echo = tool("echo", "Echo", z.object({ text: z.string() }), async ({ text }) => ({ content: text }));
      const agent = createAgent({
        apiKey: "sk-test", baseURL: server.anthropicBaseURL, model: "scripted", tools: [echo],
        onTrace: async () => { await new Promise((resolve) => setTimeout(resolve, 1)); throw new Error("database is down"); },
      });
      const result = await agent.run("go");
      await new Promise((resolve) => setTimeout(resolve, 100));
      await server.close();
      console.log(JSON.stringify({ subtype: result.subtype, traceErrors: result.traceErrors ?? 0 }));
    `;
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--conditions=@lattice/source", "--import", "tsx", "--input-type=module", "-e", code],
      { cwd, timeout: 60_000 },
    );
    const outcome = JSON.parse(stdout.trim().split("\n").at(-1)!) as {
      subtype: string;
      traceErrors: number;
    };
    expect(outcome.subtype).toBe("success");
    // Rejections that land before the run ends are counted (at least the early events').
    expect(outcome.traceErrors).toBeGreaterThan(0);
  });

  it("H1: async onTrace, hooks and policy that reject never become unhandled rejections", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", id: "t1", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "tool_use", id: "t2", name: "echo", input: { text: "b" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const echo = tool("echo", "Echo", z.object({ text: z.string() }), async ({ text }) => ({
      content: text,
    }));
    let policyCalls = 0;
    let result: SDKMessage | undefined;
    const unhandled = await withUnhandledRejections(async () => {
      const messages = await collect(
        createAgent(
          agentOptions({
            tools: [echo],
            onTrace: async () => {
              throw new Error("trace sink down");
            },
            toolBatchPolicy: {
              validate: async () => {
                policyCalls++;
                if (policyCalls === 1) throw new Error("policy store down");
                return { allowed: true };
              },
            },
            hooks: {
              beforeToolCall: async () => {
                throw new Error("hook store down");
              },
            },
          }),
        ).query("go"),
      );
      result = messages.at(-1);
      const [first, second] = userMessages(messages);
      expect(resultText(first)).toContain("policy store down");
      expect(resultText(second)).toContain("hook store down");
    });
    expect(unhandled).toEqual([]);
    expect(result).toMatchObject({ type: "result", subtype: "success" });
    expect((result as { traceErrors?: number }).traceErrors).toBeGreaterThan(0);
  });
});

describe("team listeners that fail (H1)", () => {
  it("H1: an async team onEvent that rejects is ignored, never an unhandled rejection", async () => {
    server.enqueue({ content: [{ type: "text", text: "done" }] });
    const solo = defineAgent({ name: "solo", systemPrompt: "You are solo." });
    let result: { result: string } | undefined;
    const unhandled = await withUnhandledRejections(async () => {
      const team = createTeam({
        members: [solo],
        apiKey: "sk-team",
        baseURL: server.anthropicBaseURL,
        model: "scripted",
        onEvent: async () => {
          throw new Error("event sink down");
        },
      });
      result = await team.run("solo", "go");
      await team.idle();
    });
    expect(unhandled).toEqual([]);
    expect(result?.result).toBe("done");
  });
});

describe("hooks cannot smuggle input past the schema (H2)", () => {
  const schema = z.object({ path: z.string().startsWith("src/") });

  it("H2: a beforeToolCall that changes call.input in place cannot reach the handler", async () => {
    const received: unknown[] = [];
    const read = tool("read", "Read", schema, async (input) => {
      received.push(input);
      return { content: "ok" };
    });
    server.enqueue(
      { content: [{ type: "tool_use", id: "r1", name: "read", input: { path: "src/a.ts" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const messages = await collect(
      createAgent(
        agentOptions({
          tools: [read],
          hooks: {
            beforeToolCall: (call) => {
              (call.input as { path: string }).path = "/etc/passwd";
            },
          },
        }),
      ).query("go"),
    );
    // The hook's change fails loudly (the input it sees is frozen) and the call does not run.
    expect(received).toEqual([]);
    const [user] = userMessages(messages);
    expect(user?.message.content[0]).toMatchObject({ tool_use_id: "r1", is_error: true });
    expect(resultText(user)).toContain("beforeToolCall hook failed");
  });

  it("H2: a hook that keeps the input (or the { input } it returned) and changes it later cannot reach the running handler", async () => {
    const received: string[] = [];
    let kept: { path: string } | undefined;
    let returned: { path: string } | undefined;
    const read = tool("read", "Read", schema, async (input) => {
      await sleep(30);
      received.push(input.path);
      return { content: "ok" };
    });
    server.enqueue(
      {
        content: [
          { type: "tool_use", id: "r1", name: "read", input: { path: "src/a.ts" } },
          { type: "tool_use", id: "r2", name: "read", input: { path: "src/b.ts" } },
        ],
      },
      { content: [{ type: "text", text: "done" }] },
    );
    await createAgent(
      agentOptions({
        tools: [read],
        toolConcurrency: { mode: "sequential" },
        hooks: {
          beforeToolCall: (call) => {
            if (call.id === "r1") {
              kept = call.input as { path: string };
              return undefined;
            }
            returned = { path: "src/c.ts" };
            return { input: returned };
          },
        },
        onTrace: (event: TraceEvent) => {
          if (event.type !== "tool_call_started") return;
          // Both handlers have their input by now: change the objects the hook holds.
          try {
            if (kept !== undefined) kept.path = "/etc/passwd";
          } catch {
            // frozen: fine
          }
          if (returned !== undefined) returned.path = "/etc/shadow";
        },
      }),
    ).run("go");
    expect(received).toEqual(["src/a.ts", "src/c.ts"]);
  });
});

describe("abort grace (H5)", () => {
  it("H5: a handler that ignores its signal and never settles: the query settles after abortGraceMs and the trace reports it abandoned", async () => {
    const events: TraceEvent[] = [];
    let started = false;
    const stuck = tool("stuck", "Never ends", z.object({}), () => {
      started = true;
      return new Promise<never>(() => {});
    });
    server.enqueue({ content: [{ type: "tool_use", id: "s1", name: "stuck", input: {} }] });
    const controller = new AbortController();
    const pending = createAgent(
      agentOptions({ tools: [stuck], abortGraceMs: 200, onTrace: (event) => events.push(event) }),
    ).run("go", { signal: controller.signal });
    while (!started) await sleep(5);
    const abortedAt = performance.now();
    controller.abort();
    const error = await pending.then(
      () => undefined,
      (caught: unknown) => caught,
    );
    const elapsed = performance.now() - abortedAt;
    expect((error as Error).name).toBe("AbortError");
    expect(elapsed).toBeGreaterThanOrEqual(150);
    expect(elapsed).toBeLessThan(2000);
    expect(events).toContainEqual(
      expect.objectContaining({ type: "tool_call_finished", id: "s1", status: "abandoned" }),
    );
  });

  it("H5: handlers that honour the signal still settle first (T22), well before the grace", async () => {
    const log: string[] = [];
    const polite = tool("polite", "Stops on abort", z.object({}), (_input, { signal }) => {
      log.push("start");
      return new Promise((_resolve, reject) => {
        signal.addEventListener("abort", () => {
          log.push("stopped");
          reject(signal.reason);
        });
      });
    });
    server.enqueue({ content: [{ type: "tool_use", name: "polite", input: {} }] });
    const controller = new AbortController();
    const pending = createAgent(agentOptions({ tools: [polite], abortGraceMs: 10_000 })).run("go", {
      signal: controller.signal,
    });
    while (log.length === 0) await sleep(5);
    const abortedAt = performance.now();
    controller.abort();
    await pending.catch(() => {});
    expect(log).toEqual(["start", "stopped"]);
    expect(performance.now() - abortedAt).toBeLessThan(1000);
  });

  it("H5: abortGraceMs is checked strictly", () => {
    expect(() => createAgent(agentOptions({ abortGraceMs: -1 }))).toThrow(
      'AgentOptions: option "abortGraceMs" must be a number of milliseconds ≥ 0 (Infinity to wait for ever), received -1. Omit it for the default (5000).',
    );
  });
});

describe("bounded tool input (H6)", () => {
  for (const stream of [true, false]) {
    it(`H6: an input nested ${MAX_TOOL_INPUT_DEPTH * 50} deep is answered invalid_input before anything runs, and the next request is sent (${stream ? "SSE" : "JSON"})`, async () => {
      let ran = false;
      const sink = tool("sink", "Takes anything", z.object({ data: z.unknown() }), async () => {
        ran = true;
        return { content: "ran" };
      });
      const depth = MAX_TOOL_INPUT_DEPTH * 50;
      const events: TraceEvent[] = [];
      server.enqueue(
        {
          content: [
            {
              type: "tool_use",
              id: "deep",
              name: "sink",
              inputJson: `{"data":${"[".repeat(depth)}${"]".repeat(depth)}}`,
            },
          ],
        },
        { content: [{ type: "text", text: "understood" }] },
      );
      const messages = await collect(
        createAgent(
          agentOptions({ tools: [sink], stream, onTrace: (event) => events.push(event) }),
        ).query("go"),
      );
      expect(ran).toBe(false);
      const [user] = userMessages(messages);
      expect(user?.message.content[0]).toMatchObject({ tool_use_id: "deep", is_error: true });
      expect(resultText(user)).toContain(`nested more than ${MAX_TOOL_INPUT_DEPTH} levels deep`);
      expect(events).toContainEqual(
        expect.objectContaining({ type: "tool_call_finished", status: "invalid_input" }),
      );
      expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "understood" });
      expect(server.requests).toHaveLength(2);
    });
  }

  it("H6: an input longer than MAX_TOOL_INPUT_LENGTH is answered invalid_input before anything runs", async () => {
    let ran = false;
    const write = tool("write", "Write", z.object({ content: z.string() }), async () => {
      ran = true;
      return { content: "ran" };
    });
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            id: "big",
            name: "write",
            input: { content: "x".repeat(MAX_TOOL_INPUT_LENGTH + 10) },
          },
        ],
        chunkSize: 1024 * 1024,
      },
      { content: [{ type: "text", text: "ok" }] },
    );
    const messages = await collect(createAgent(agentOptions({ tools: [write] })).query("go"));
    expect(ran).toBe(false);
    const [user] = userMessages(messages);
    expect(resultText(user)).toContain(`longer than the ${MAX_TOOL_INPUT_LENGTH} characters`);
    expect(messages.at(-1)).toMatchObject({ subtype: "success", result: "ok" });
    // The history keeps {} in place of the refused input, so the next request stays small.
    expect(JSON.stringify(server.requests[1]?.body).length).toBeLessThan(10_000);
  });
});

describe("duplicate tool_use ids (H13)", () => {
  it("H13: a reply that reuses a tool_use id runs nothing and ends the run naming the id", async () => {
    let runs = 0;
    const act = tool("act", "Has a side effect", z.object({ n: z.number() }), async () => {
      runs++;
      return { content: "done" };
    });
    server.enqueue({
      content: [
        { type: "tool_use", id: "dup", name: "act", input: { n: 1 } },
        { type: "tool_use", id: "dup", name: "act", input: { n: 2 } },
      ],
    });
    const result = await createAgent(agentOptions({ tools: [act] })).run("go");
    expect(runs).toBe(0);
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toBe(
      `The model's reply used the tool_use id "dup" for more than one tool call, so none of its 2 calls ran: their results could not be told apart. This is a fault of the model or the server; retry the query.`,
    );
    expect(server.requests).toHaveLength(1);
  });
});
