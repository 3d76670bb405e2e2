import { anthropic } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { tool } from "@lattice/tools";
import { afterEach, beforeEach, describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod/v4";
import {
  type AgentOptions,
  agentGuardrail,
  createAgent,
  hasToolCall,
  memorySessionStore,
  type RunLogEntry,
  type SDKMessage,
  stepCountIs,
  type TraceEvent,
} from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

function options(extra: Partial<AgentOptions> = {}): AgentOptions {
  return {
    apiKey: "sk-test-loop-control",
    baseURL: server.anthropicBaseURL,
    model: "scripted",
    ...extra,
  };
}

const Invoice = z.object({
  vendor: z.string(),
  total: z.number(),
  currency: z.enum(["EUR", "USD"]),
});

const echo = tool("echo", "Echo the text", z.object({ text: z.string() }), async ({ text }) => ({
  content: `echo: ${text}`,
}));

function body(index: number): Record<string, unknown> {
  return server.requests[index]!.body as Record<string, unknown>;
}

function lastUserText(index: number): string {
  const messages = body(index).messages as { role: string; content: unknown }[];
  const last = messages[messages.length - 1]!;
  return JSON.stringify(last.content);
}

async function entriesOf(store: ReturnType<typeof memorySessionStore>, sessionId: string) {
  return (await store.load(sessionId)).entries as unknown as RunLogEntry[];
}

describe("typed output (L1–L4)", () => {
  it("L1: outputSchema gives result.output, typed and validated, with no extra model call", async () => {
    server.enqueue({
      content: [{ type: "text", text: '{"vendor":"ACME","total":12.5,"currency":"EUR"}' }],
    });
    const agent = createAgent({
      ...options(),
      outputSchema: Invoice,
      outputMode: "native_json_schema",
    });
    const result = await agent.run("Invoice: ACME, 12.50 EUR");
    expect(result.subtype).toBe("success");
    expect(result.output).toEqual({ vendor: "ACME", total: 12.5, currency: "EUR" });
    expectTypeOf(result.output).toEqualTypeOf<z.infer<typeof Invoice> | undefined>();
    // A success narrows it: the answer is there, typed.
    if (result.subtype === "success") {
      expectTypeOf(result.output).toEqualTypeOf<z.infer<typeof Invoice>>();
    }
    expect(server.requests).toHaveLength(1);
  });

  it("L1: query(prompt, { outputSchema }) types and validates one run's answer", async () => {
    server.enqueue({ content: [{ type: "text", text: '{"city":"Lyon"}' }] });
    const agent = createAgent(options({ outputMode: "native_json_schema" }));
    const result = await agent.run("Where?", { outputSchema: z.object({ city: z.string() }) });
    expectTypeOf(result.output).toEqualTypeOf<{ city: string } | undefined>();
    expect(result.output).toEqual({ city: "Lyon" });
    const plain = createAgent(options());
    server.enqueue({ content: [{ type: "text", text: "hello" }] });
    const untyped = await plain.run("hi");
    expect(untyped.output).toBeUndefined();
    expect("output" in untyped).toBe(false);
  });

  it("L1: a schema without JSON Schema or with a non-object root is refused when the agent is made", () => {
    expect(() => createAgent(options({ outputSchema: z.array(z.string()) as never }))).toThrow(
      'AgentOptions: option "outputSchema" must have an object at its root',
    );
    expect(() => createAgent(options({ outputSchema: { parse() {} } as never }))).toThrow(
      'AgentOptions: option "outputSchema" must be a Zod v4 schema or a Standard Schema',
    );
  });

  it("L2: forced_tool offers a final_answer tool, and the call to it is the answer (one model call)", async () => {
    server.enqueue({
      content: [
        {
          type: "tool_use",
          name: "final_answer",
          input: { vendor: "ACME", total: 3, currency: "USD" },
        },
      ],
    });
    const events: TraceEvent[] = [];
    const agent = createAgent(
      options({
        outputSchema: Invoice,
        outputMode: "forced_tool",
        tools: [echo],
        onTrace: (event) => events.push(event),
      }),
    );
    const result = await agent.run("Invoice: ACME, 3 USD");
    expect(result.subtype).toBe("success");
    expect(result.output).toEqual({ vendor: "ACME", total: 3, currency: "USD" });
    expect(result.result).toBe('{"vendor":"ACME","total":3,"currency":"USD"}');
    expect(result.structuredResult).toBeUndefined();
    expect(server.requests).toHaveLength(1);
    const tools = body(0).tools as { name: string; input_schema: unknown }[];
    expect(tools.map((spec) => spec.name)).toEqual(["echo", "final_answer"]);
    expect(body(0).tool_choice).toBeUndefined();
    const started = events.find((event) => event.type === "model_request_started");
    expect(started).toMatchObject({ outputMode: "forced_tool" });
  });

  it("L2: a text answer in forced_tool mode gets feedback and the final_answer tool forced on the next call", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "The total is 3 USD." }] },
      {
        content: [
          {
            type: "tool_use",
            name: "final_answer",
            input: { vendor: "ACME", total: 3, currency: "USD" },
          },
        ],
      },
    );
    const agent = createAgent(options({ outputSchema: Invoice, outputMode: "forced_tool" }));
    const result = await agent.run("Invoice: ACME, 3 USD");
    expect(result.output).toEqual({ vendor: "ACME", total: 3, currency: "USD" });
    expect(server.requests).toHaveLength(2);
    expect(body(1).tool_choice).toEqual({ type: "tool", name: "final_answer" });
    expect(lastUserText(1)).toContain("calling the final_answer tool");
  });

  it("L3: an invalid answer goes back with the validation error, and the next valid one ends the run", async () => {
    server.enqueue(
      { content: [{ type: "text", text: '{"vendor":"ACME","total":"12,50","currency":"EUR"}' }] },
      { content: [{ type: "text", text: '{"vendor":"ACME","total":12.5,"currency":"EUR"}' }] },
    );
    const store = memorySessionStore();
    const agent = createAgent(
      options({ outputSchema: Invoice, outputMode: "native_json_schema", sessionStore: store }),
    );
    const result = await agent.run("Invoice", { sessionId: "s1" });
    expect(result.subtype).toBe("success");
    expect(result.output).toEqual({ vendor: "ACME", total: 12.5, currency: "EUR" });
    expect(result.numTurns).toBe(2);
    expect(lastUserText(1)).toContain("does not match the schema: total:");
    const entries = await entriesOf(store, "s1");
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "reply",
      "output_feedback",
      "reply",
      "run_finished",
    ]);
    expect(entries[2]).toMatchObject({ v: 2, reason: "invalid" });
    expect(entries[4]).toMatchObject({ output: { total: 12.5 } });
  });

  it("L3: after outputRetries invalid answers the run ends error_output_invalid with the last error", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "not json" }] },
      { content: [{ type: "text", text: '{"vendor":1}' }] },
    );
    const agent = createAgent(
      options({ outputSchema: Invoice, outputMode: "native_json_schema", outputRetries: 1 }),
    );
    const result = await agent.run("Invoice");
    expect(result.subtype).toBe("error_output_invalid");
    expect(result.isError).toBe(true);
    expect(result.output).toBeUndefined();
    expect(result.errors[0]).toMatch(
      /did not match the outputSchema after 1 retry \(outputRetries\)\. Last problem: The answer does not match the schema: vendor:/,
    );
    expect(server.requests).toHaveLength(2);
  });

  it("L3: an invalid final_answer input is a tool input error the model retries, counted against outputRetries", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "final_answer", input: { vendor: "ACME" } }] },
      { content: [{ type: "tool_use", name: "final_answer", input: { vendor: "ACME" } }] },
    );
    const agent = createAgent(
      options({ outputSchema: Invoice, outputMode: "forced_tool", outputRetries: 1 }),
    );
    const result = await agent.run("Invoice");
    expect(result.subtype).toBe("error_output_invalid");
    expect(result.errors[0]).toContain("after 1 retry");
    expect(server.requests).toHaveLength(2);
  });

  it("L3: tools and output work together: the model calls tools first, then answers", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "look up" } }] },
      { content: [{ type: "text", text: '{"vendor":"ACME","total":1,"currency":"EUR"}' }] },
    );
    const agent = createAgent(
      options({ outputSchema: Invoice, outputMode: "native_json_schema", tools: [echo] }),
    );
    const result = await agent.run("Invoice");
    expect(result.output).toEqual({ vendor: "ACME", total: 1, currency: "EUR" });
    expect(result.numTurns).toBe(2);
  });

  it("L4: streaming yields output_delta messages with the JSON so far and a partial object", async () => {
    server.enqueue({
      content: [{ type: "text", text: '{"vendor":"ACME","total":12.5,"currency":"EUR"}' }],
      chunkSize: 8,
    });
    const agent = createAgent(options({ outputSchema: Invoice, outputMode: "native_json_schema" }));
    const deltas: Extract<SDKMessage, { type: "output_delta" }>[] = [];
    for await (const message of agent.query("Invoice")) {
      if (message.type === "output_delta") deltas.push(message);
    }
    expect(deltas.length).toBeGreaterThan(3);
    expect(deltas.at(-1)!.text).toBe('{"vendor":"ACME","total":12.5,"currency":"EUR"}');
    expect(deltas.at(-1)!.partial).toEqual({ vendor: "ACME", total: 12.5, currency: "EUR" });
    const early = deltas.find((delta) => delta.text.startsWith('{"vendor":"AC'));
    expect(early?.partial).toMatchObject({ vendor: expect.stringMatching(/^AC/) });
  });
});

describe("per-step control (L5, L6)", () => {
  it("L5: prepareStep overrides model, tools, tool choice, system and messages for one call, recorded on the reply", async () => {
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "a" } }] },
      { content: [{ type: "text", text: "done" }] },
    );
    const store = memorySessionStore();
    const seen: number[] = [];
    const agent = createAgent(
      options({
        tools: [echo, tool("other", "Other", z.object({}), async () => ({ content: "x" }))],
        sessionStore: store,
        prepareStep: ({ stepNumber, turn, messages }) => {
          seen.push(stepNumber);
          if (turn === 1) {
            return {
              model: "scripted-small",
              activeTools: ["echo"],
              toolChoice: { type: "any" },
              system: "Be brief.",
            };
          }
          return { messages: messages.slice(-2) };
        },
      }),
    );
    const result = await agent.run("go", { sessionId: "s1" });
    expect(result.subtype).toBe("success");
    expect(seen).toEqual([0, 2]);
    expect(body(0)).toMatchObject({
      model: "scripted-small",
      system: "Be brief.",
      tool_choice: { type: "any" },
    });
    expect((body(0).tools as { name: string }[]).map((spec) => spec.name)).toEqual(["echo"]);
    expect(body(1).model).toBe("scripted");
    expect((body(1).messages as unknown[]).length).toBe(2);
    const replies = (await entriesOf(store, "s1")).filter((entry) => entry.type === "reply");
    expect(replies[0]).toMatchObject({
      model: "scripted-small",
      overrides: {
        model: "scripted-small",
        activeTools: ["echo"],
        toolChoice: { type: "any" },
        system: "Be brief.",
      },
    });
    expect(replies[1]).toMatchObject({ overrides: { messages: 2 } });
    expect(result.messages.length).toBe(4);
  });

  it("L5, L13: an override with an unknown key or an unknown tool ends the run with the exact problem", async () => {
    const agent = createAgent(
      options({ tools: [echo], prepareStep: () => ({ activeTools: ["ech"] }) }),
    );
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_during_execution");
    expect(result.errors[0]).toBe(
      `prepareStep failed before the model call of turn 1: prepareStep(): option "activeTools" names "ech", which is none of the agent's tools (echo).`,
    );
    const typo = createAgent(options({ prepareStep: () => ({ modle: "x" }) as never }));
    expect((await typo.run("go")).errors[0]).toContain(
      'option "modle" is not an override. The keys are model, provider, activeTools, toolChoice, system, messages.',
    );
    expect(server.requests).toHaveLength(0);
  });

  it("L6: stopWhen ends the run success with the latest reply's text once a condition holds", async () => {
    const call = { type: "tool_use" as const, name: "echo", input: { text: "x" } };
    server.enqueue(
      { content: [{ type: "text", text: "step one" }, call] },
      { content: [{ type: "text", text: "step two" }, call] },
      { content: [{ type: "text", text: "step three" }, call] },
    );
    const agent = createAgent(options({ tools: [echo], stopWhen: stepCountIs(2) }));
    const result = await agent.run("go");
    expect(result).toMatchObject({ subtype: "success", result: "step two", numTurns: 2 });
    expect(server.requests).toHaveLength(2);
  });

  it("L6: hasToolCall and user conditions; maxTurns stays the ceiling", async () => {
    const submit = tool("submit", "Submit", z.object({}), async () => ({ content: "ok" }));
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "x" } }] },
      {
        content: [
          { type: "text", text: "submitting" },
          { type: "tool_use", name: "submit" },
        ],
      },
    );
    const agent = createAgent(
      options({ tools: [echo, submit], stopWhen: [hasToolCall("submit")] }),
    );
    expect(await agent.run("go")).toMatchObject({ subtype: "success", result: "submitting" });
    server.enqueue(
      { content: [{ type: "tool_use", name: "echo", input: { text: "x" } }] },
      { content: [{ type: "tool_use", name: "echo", input: { text: "y" } }] },
    );
    const never = createAgent(options({ tools: [echo], stopWhen: () => false, maxTurns: 2 }));
    expect((await never.run("go")).subtype).toBe("error_max_turns");
  });
});

describe("guardrails (L7–L9)", () => {
  it("L7: a tripped input guardrail aborts the first model call, runs no tool and ends guardrail_tripped", async () => {
    let ran = false;
    const spy = tool("spy", "Spy", z.object({}), async () => {
      ran = true;
      return { content: "ran" };
    });
    server.enqueue({ content: [{ type: "tool_use", name: "spy" }], delayMs: 5_000 });
    const store = memorySessionStore();
    const agent = createAgent(
      options({
        tools: [spy],
        sessionStore: store,
        guardrails: {
          input: [
            async function noPii({ prompt }) {
              await new Promise((resolve) => setTimeout(resolve, 20));
              return {
                tripwire: String(prompt).includes("IBAN"),
                reason: "an IBAN",
                info: { field: "iban" },
              };
            },
          ],
        },
      }),
    );
    const started = performance.now();
    const result = await agent.run("My IBAN is DE00 1234", { sessionId: "s1" });
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(result).toMatchObject({
      subtype: "guardrail_tripped",
      isError: true,
      guardrail: { name: "noPii", kind: "input", reason: "an IBAN", info: { field: "iban" } },
    });
    expect(ran).toBe(false);
    const entries = await entriesOf(store, "s1");
    expect(entries.map((entry) => entry.type)).toEqual([
      "run_started",
      "guardrail",
      "run_finished",
    ]);
    expect(entries[1]).toMatchObject({
      v: 2,
      kind: "input",
      name: "noPii",
      tripwire: true,
      turn: 1,
    });
    expect(entries[2]).toMatchObject({ v: 2, subtype: "guardrail_tripped" });
  });

  it("L7: a passing input guardrail runs beside the first call and adds no latency beyond its own", async () => {
    server.enqueue({ content: [{ type: "text", text: "hello" }], delayMs: 300 });
    const agent = createAgent(
      options({
        guardrails: {
          input: [
            async () => {
              await new Promise((resolve) => setTimeout(resolve, 200));
              return { tripwire: false };
            },
          ],
        },
      }),
    );
    const started = performance.now();
    const result = await agent.run("hi");
    const wall = performance.now() - started;
    expect(result.subtype).toBe("success");
    // Sequential would take 500 ms or more; overlapping takes the longer of the two.
    expect(wall).toBeLessThan(480);
  });

  it("L8: an output guardrail's retry sends its feedback to the model; a tripwire ends the run", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "Call me at 555-1234" }] },
      { content: [{ type: "text", text: "Write to us instead." }] },
    );
    const agent = createAgent(
      options({
        guardrails: {
          output: [
            function noPhone({ text }) {
              return /\d{3}-\d{4}/.test(text)
                ? { retry: "Do not give phone numbers." }
                : { tripwire: false };
            },
          ],
        },
      }),
    );
    const result = await agent.run("How do I reach you?");
    expect(result).toMatchObject({ subtype: "success", result: "Write to us instead." });
    expect(lastUserText(1)).toContain("Do not give phone numbers.");
    server.enqueue({ content: [{ type: "text", text: "secret" }] });
    const strict = createAgent(
      options({
        guardrails: {
          output: [{ name: "no_secret", check: () => ({ tripwire: true, reason: "leak" }) }],
        },
      }),
    );
    expect(await strict.run("x")).toMatchObject({
      subtype: "guardrail_tripped",
      guardrail: { name: "no_secret", kind: "output", reason: "leak" },
      result: "",
    });
  });

  it("L9: each outcome is traced; a guardrail that throws counts as tripped, with its error (never a crash)", async () => {
    server.enqueue({ content: [{ type: "text", text: "hello" }], delayMs: 100 });
    const events: TraceEvent[] = [];
    const agent = createAgent(
      options({
        onTrace: (event) => events.push(event),
        guardrails: {
          input: [
            function fine() {
              return { tripwire: false };
            },
            async function broken() {
              await new Promise((resolve) => setTimeout(resolve, 20));
              throw new Error("classifier down");
            },
          ],
        },
      }),
    );
    const result = await agent.run("hi");
    expect(result.subtype).toBe("guardrail_tripped");
    expect(result.guardrail).toEqual({
      name: "broken",
      kind: "input",
      reason: 'The guardrail "broken" failed: classifier down',
    });
    const traced = events.filter((event) => event.type === "guardrail");
    expect(traced.map((event) => [event.name, event.tripwire])).toEqual([
      ["fine", false],
      ["broken", true],
    ]);
  });

  it("L7: agentGuardrail runs an agent with a typed verdict", async () => {
    const judgeServer = await createScriptedModelServer();
    try {
      judgeServer.enqueue({
        content: [{ type: "text", text: '{"tripwire":true,"reason":"off topic"}' }],
      });
      const judge = createAgent(
        options({ baseURL: judgeServer.anthropicBaseURL, outputMode: "native_json_schema" }),
      );
      const agent = createAgent(
        options({
          guardrails: {
            input: [
              agentGuardrail({ name: "on_topic", agent: judge, instructions: "Billing only." }),
            ],
          },
        }),
      );
      server.enqueue({ content: [{ type: "text", text: "never" }], delayMs: 2_000 });
      const result = await agent.run("Tell me a joke");
      expect(result).toMatchObject({
        subtype: "guardrail_tripped",
        guardrail: { name: "on_topic", reason: "off topic" },
      });
      const judged = JSON.stringify(judgeServer.requests[0]?.body);
      expect(judged).toContain("Billing only.");
      expect(judged).toContain("Tell me a joke");
    } finally {
      await judgeServer.close();
    }
  });
});

describe("fallback and budgets (L10, L11)", () => {
  it("L10: a 529 after the provider's retries moves the request to the next fallback entry, and the run stays there", async () => {
    const backup = await createScriptedModelServer();
    try {
      server.enqueue({ status: 529 });
      backup.enqueue(
        {
          content: [{ type: "tool_use", name: "echo", input: { text: "x" } }],
          usage: { inputTokens: 10, outputTokens: 5 },
        },
        { content: [{ type: "text", text: "done" }], usage: { inputTokens: 20, outputTokens: 5 } },
      );
      const store = memorySessionStore();
      const events: TraceEvent[] = [];
      const agent = createAgent(
        options({
          provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
          apiKey: undefined,
          baseURL: undefined,
          model: "claude-sonnet-4-6",
          tools: [echo],
          sessionStore: store,
          onTrace: (event) => events.push(event),
          fallback: [
            {
              provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }),
              model: "claude-haiku-4-5",
            },
          ],
        }),
      );
      const result = await agent.run("go", { sessionId: "s1" });
      expect(result.subtype).toBe("success");
      expect(server.requests).toHaveLength(1);
      expect(backup.requests.map((request) => (request.body as { model: string }).model)).toEqual([
        "claude-haiku-4-5",
        "claude-haiku-4-5",
      ]);
      const fallback = events.find((event) => event.type === "model_fallback");
      expect(fallback).toMatchObject({
        fromModel: "claude-sonnet-4-6",
        toModel: "claude-haiku-4-5",
        fallback: 1,
        status: 529,
      });
      const replies = (await entriesOf(store, "s1")).filter((entry) => entry.type === "reply");
      expect(replies.map((reply) => [reply.model, reply.fallback])).toEqual([
        ["claude-haiku-4-5", 1],
        ["claude-haiku-4-5", 1],
      ]);
      // Replies that record steering are version 2: an older reader refuses them, rather than
      // resuming on the wrong model.
      expect(replies.map((reply) => reply.v)).toEqual([2, 2]);
      // One model served the calls; the price of Haiku 4.5 is known: $1 in, $5 out per MTok.
      expect(result.usage.costUsd).toBeCloseTo((30 * 1 + 10 * 5) / 1e6, 12);
      expect(result.usage.byModel).toBeUndefined();
    } finally {
      await backup.close();
    }
  });

  it("L10: usage.byModel keeps usage per model when more than one served the run", async () => {
    server.enqueue(
      {
        content: [{ type: "tool_use", name: "echo", input: { text: "x" } }],
        usage: { inputTokens: 100, outputTokens: 10 },
      },
      { content: [{ type: "text", text: "done" }], usage: { inputTokens: 200, outputTokens: 20 } },
    );
    const agent = createAgent(
      options({
        model: "claude-sonnet-4-6",
        tools: [echo],
        prepareStep: ({ turn }) => (turn === 1 ? { model: "claude-haiku-4-5" } : undefined),
      }),
    );
    const result = await agent.run("go");
    expect(result.usage.byModel).toEqual({
      "claude-haiku-4-5": {
        inputTokens: 100,
        outputTokens: 10,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUsd: (100 * 1 + 10 * 5) / 1e6,
      },
      "claude-sonnet-4-6": {
        inputTokens: 200,
        outputTokens: 20,
        cacheReadInputTokens: 0,
        cacheCreationInputTokens: 0,
        costUsd: (200 * 3 + 20 * 15) / 1e6,
      },
    });
    expect(result.usage.costUsd).toBeCloseTo((100 + 50 + 600 + 300) / 1e6, 12);
  });

  it("L11: maxTotalTokens ends the run error_budget before the call that could pass it", async () => {
    const call = { type: "tool_use" as const, name: "echo", input: { text: "x" } };
    server.enqueue(
      { content: [call], usage: { inputTokens: 400, outputTokens: 100 } },
      { content: [call], usage: { inputTokens: 600, outputTokens: 100 } },
      { content: [{ type: "text", text: "never" }] },
    );
    // After call 1: 500 used; call 2 could use 500 + 1000 → 2000 ≤ 2600. After call 2: 1200
    // used; call 3 could use 700 + 1000 → 2900 > 2600: not made.
    const agent = createAgent(options({ tools: [echo], maxTokens: 1000, maxTotalTokens: 2600 }));
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_budget");
    expect(result.errors[0]).toBe(
      "The run would pass its token budget (maxTotalTokens 2600): it used 1200 tokens, and the next model call could use up to 1700 more (about 700 of input and maxTokens 1000 of output), so it was not made. Raise maxTotalTokens, or lower maxTokens.",
    );
    expect(server.requests).toHaveLength(2);
    expect(result.usage.inputTokens + result.usage.outputTokens).toBe(1200);
  });

  it("L11: maxCostUsd with a pricing table ends the run before it overspends, and usage.costUsd is reported", async () => {
    const call = { type: "tool_use" as const, name: "echo", input: { text: "x" } };
    server.enqueue(
      { content: [call], usage: { inputTokens: 1000, outputTokens: 1000 } },
      { content: [call], usage: { inputTokens: 3000, outputTokens: 1000 } },
    );
    // $1 per million in and out: call 1 costs $0.002; call 2 could cost up to
    // (2000 + 1000) / 1e6 = $0.003 → 0.005 ≤ 0.006; after it $0.006 is spent.
    const agent = createAgent(
      options({
        model: "house-model",
        tools: [echo],
        maxTokens: 1000,
        maxCostUsd: 0.006,
        pricing: { "house-model": { inputPerMTok: 1, outputPerMTok: 1 } },
      }),
    );
    const result = await agent.run("go");
    expect(result.subtype).toBe("error_budget");
    expect(result.errors[0]).toContain("cost budget (maxCostUsd 0.006)");
    expect(result.usage.costUsd).toBeCloseTo(0.006, 12);
    expect(server.requests).toHaveLength(2);
  });
});

describe("across resume, step and workers (L12)", () => {
  it("L12: a run paused for approval resumes on its fallback, with its budget spent and guardrails not run again", async () => {
    const backup = await createScriptedModelServer();
    try {
      const risky = tool("risky", "Risky", z.object({}), async () => ({ content: "done" }), {
        needsApproval: true,
      });
      server.enqueue({ status: 529 });
      backup.enqueue(
        {
          content: [{ type: "tool_use", name: "risky" }],
          usage: { inputTokens: 300, outputTokens: 100 },
        },
        {
          content: [{ type: "text", text: "finished" }],
          usage: { inputTokens: 500, outputTokens: 100 },
        },
      );
      let guardrailRuns = 0;
      const store = memorySessionStore();
      const agent = createAgent(
        options({
          provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
          apiKey: undefined,
          baseURL: undefined,
          tools: [risky],
          sessionStore: store,
          maxTokens: 100,
          maxTotalTokens: 1_200,
          fallback: [anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL })],
          guardrails: {
            input: [
              function counted() {
                guardrailRuns++;
                return { tripwire: false };
              },
            ],
          },
        }),
      );
      const paused = await agent.run("go", { sessionId: "s1" });
      expect(paused.subtype).toBe("interrupted");
      const approvalId = paused.pendingApprovals![0]!.approvalId;
      const resumed = await agent
        .resume("s1", { decisions: { [approvalId]: { approved: true } } })
        .finalResult();
      expect(resumed.subtype).toBe("success");
      expect(server.requests).toHaveLength(1);
      expect(backup.requests).toHaveLength(2);
      expect(guardrailRuns).toBe(1);
      expect(resumed.usage.inputTokens + resumed.usage.outputTokens).toBe(1_000);
    } finally {
      await backup.close();
    }
  });

  it("L12: step() takes a typed-output run one step at a time, feedback and all", async () => {
    server.enqueue(
      { content: [{ type: "text", text: "oops" }] },
      { content: [{ type: "text", text: '{"vendor":"ACME","total":2,"currency":"EUR"}' }] },
    );
    const store = memorySessionStore();
    const agent = createAgent(
      options({ outputSchema: Invoice, outputMode: "native_json_schema", sessionStore: store }),
    );
    let step = await agent.step("s1", { prompt: "Invoice" });
    const taken = [step.status];
    while (step.status === "continue") {
      step = await agent.step("s1", { expectedStep: step.nextStep });
      taken.push(step.status);
    }
    expect(step.status).toBe("ended");
    if (step.status !== "ended") return;
    expect(step.result.output).toEqual({ vendor: "ACME", total: 2, currency: "EUR" });
    expect(taken.length).toBeGreaterThan(1);
    // Asked again, the ended run's result comes from the log, with its output.
    const again = await agent.step("s1", { expectedStep: 0 });
    expect(again).toMatchObject({ status: "ended", result: { output: { total: 2 } } });
  });
});

describe("strict options (L13)", () => {
  it("L13: every steering option is checked, with the exact message style", () => {
    const cases: [Partial<AgentOptions>, string][] = [
      [{ outputRetries: -1 }, 'AgentOptions: option "outputRetries" must be an integer ≥ 0'],
      [
        { outputMode: "json" as never },
        'AgentOptions: option "outputMode" must be "auto", "native_json_schema" or "forced_tool"',
      ],
      [{ prepareStep: 1 as never }, 'AgentOptions: option "prepareStep" must be a function'],
      [
        { stopWhen: ["x"] as never },
        'AgentOptions: option "stopWhen" must be a condition or a non-empty array of conditions',
      ],
      [
        { guardrails: { inputs: [] } as never },
        'AgentOptions: option "guardrails" has an unknown key "inputs"',
      ],
      [
        { guardrails: { input: [1] } as never },
        'AgentOptions: option "guardrails.input[0]" must be a function',
      ],
      [{ fallback: [] }, 'AgentOptions: option "fallback" must be a non-empty array'],
      [
        { fallback: [{ modle: "x" }] as never },
        'AgentOptions: option "fallback[0]" has an unknown key "modle"',
      ],
      [{ maxTotalTokens: 0 }, 'AgentOptions: option "maxTotalTokens" must be a positive integer'],
      [
        { maxCostUsd: 1 },
        'AgentOptions: option "maxCostUsd" needs the price of every model the agent may use, and "scripted" has none',
      ],
      [
        { pricing: { scripted: { inputPerMTok: -1, outputPerMTok: 1 } } },
        'AgentOptions: option "pricing" is not a price table',
      ],
      [{ outputSchma: Invoice } as never, 'AgentOptions: unknown option "outputSchma"'],
    ];
    for (const [extra, message] of cases) {
      expect(() => createAgent(options(extra)), message).toThrow(message);
    }
    expect(() => stepCountIs(0)).toThrow("stepCountIs(0): the count must be a positive integer.");
    const named = tool("final_answer", "Mine", z.object({}), async () => ({ content: "" }));
    expect(() => createAgent(options({ outputSchema: Invoice, tools: [named] }))).toThrow(
      'needs the tool name "final_answer" for the typed answer',
    );
  });
});

describe("edges found in review (L8, L10, L11, L12, H5)", () => {
  it("L8: an output guardrail's retry on a final_answer call sends the model back for another answer", async () => {
    server.enqueue(
      {
        content: [
          {
            type: "tool_use",
            name: "final_answer",
            input: { vendor: "BAD", total: 1, currency: "EUR" },
          },
        ],
      },
      {
        content: [
          {
            type: "tool_use",
            name: "final_answer",
            input: { vendor: "ACME", total: 1, currency: "EUR" },
          },
        ],
      },
    );
    const seen: string[] = [];
    const agent = createAgent(
      options({
        outputSchema: Invoice,
        outputMode: "forced_tool",
        guardrails: {
          output: [
            function realVendor({ output }) {
              const vendor = (output as { vendor: string }).vendor;
              seen.push(vendor);
              return vendor === "BAD" ? { retry: "Name the real vendor." } : { tripwire: false };
            },
          ],
        },
      }),
    );
    const result = await agent.run("Invoice?");
    expect(result).toMatchObject({ subtype: "success", output: { vendor: "ACME" } });
    expect(seen).toEqual(["BAD", "ACME"]);
    expect(server.requests).toHaveLength(2);
    expect(lastUserText(1)).toContain("Name the real vendor.");
  });

  it("L11: a fallback the budget cannot pay for is not called; the run ends error_budget", async () => {
    const backup = await createScriptedModelServer();
    try {
      server.enqueue({ status: 529 });
      backup.enqueue({ content: [{ type: "text", text: "expensive" }] });
      const agent = createAgent({
        provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
        model: "free-model",
        maxTokens: 1000,
        maxCostUsd: 0.01,
        pricing: {
          "free-model": { inputPerMTok: 0, outputPerMTok: 0 },
          "dear-model": { inputPerMTok: 1000, outputPerMTok: 1000 },
        },
        fallback: [
          {
            provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }),
            model: "dear-model",
          },
        ],
      });
      const result = await agent.run("go");
      expect(result.subtype).toBe("error_budget");
      expect(result.errors[0]).toMatch(
        /^The model call to free-model failed \(.*529.*\), and its fallback was not tried: The run would pass its cost budget \(maxCostUsd 0\.01\)/,
      );
      expect(backup.requests).toHaveLength(0);
    } finally {
      await backup.close();
    }
  });

  it("L10: a refusal that names capacity moves to the fallback; another refusal is an answer", async () => {
    const backup = await createScriptedModelServer();
    try {
      server.enqueue(
        {
          content: [{ type: "text", text: "The model is at capacity right now." }],
          stopReason: "refusal",
        },
        { content: [{ type: "text", text: "I won't help with that." }], stopReason: "refusal" },
      );
      backup.enqueue({ content: [{ type: "text", text: "from the backup" }] });
      const agent = createAgent({
        provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL }),
        model: "claude-sonnet-4-6",
        fallback: [{ provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }) }],
      });
      expect((await agent.run("one")).result).toBe("from the backup");
      const refused = await agent.run("two");
      expect(refused).toMatchObject({ subtype: "success", result: "I won't help with that." });
      expect(backup.requests).toHaveLength(1);
    } finally {
      await backup.close();
    }
  });

  it("L12: a prepareStep model override does not lose the run's fallback position", async () => {
    const backup = await createScriptedModelServer();
    try {
      const call = { type: "tool_use" as const, name: "echo", input: { text: "x" } };
      server.enqueue({ status: 529 }, { content: [call] });
      backup.enqueue({ content: [call] }, { content: [{ type: "text", text: "done" }] });
      const agent = createAgent({
        provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
        model: "claude-sonnet-4-6",
        tools: [echo],
        fallback: [{ provider: anthropic({ apiKey: "k", baseURL: backup.anthropicBaseURL }) }],
        prepareStep: ({ turn }) => (turn === 2 ? { model: "claude-haiku-4-5" } : undefined),
      });
      const result = await agent.run("go");
      expect(result.subtype).toBe("success");
      // Turn 1 fell back; turn 2 went where prepareStep said; turn 3 is back on the fallback.
      expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual([
        "claude-sonnet-4-6",
        "claude-haiku-4-5",
      ]);
      expect(backup.requests).toHaveLength(2);
    } finally {
      await backup.close();
    }
  });

  it("H5, L7: an abort while an input guardrail ignores its signal settles the run at once", async () => {
    server.enqueue({ content: [{ type: "text", text: "hi" }], delayMs: 50 });
    const agent = createAgent(
      options({
        guardrails: { input: [{ name: "stuck", check: () => new Promise(() => {}) }] },
      }),
    );
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 150);
    const started = performance.now();
    await expect(agent.run("hello", { signal: controller.signal })).rejects.toMatchObject({
      name: "AbortError",
    });
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
