import {
  type AnyToolDefinition,
  createToolDefinition,
  InvalidOptionError,
  tool,
  UnknownOptionError,
} from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { ToolBatchPolicyError, ToolBatchRefusedError } from "./errors.js";
import { runToolBatch } from "./run-tool-batch.js";
import type { ToolBatchEvent } from "./tool-batch-event.js";
import {
  checkToolBatchDecision,
  type ToolBatchCall,
  type ToolBatchPolicy,
  validateToolBatchPolicy,
} from "./tool-batch-policy.js";

const delay = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
const toolMap = (...definitions: AnyToolDefinition[]) =>
  new Map(definitions.map((definition) => [definition.name, definition]));
const text = (outcome: { result: { content: readonly { type: string; text?: string }[] } }) =>
  outcome.result.content.map((block) => block.text ?? "").join("\n");

/** Tools that count how many handlers ran. */
function counted() {
  const ran: string[] = [];
  const write = tool("write", "Write", z.object({ path: z.string() }), async ({ path }, ctx) => {
    ran.push(ctx.toolUseId);
    return { content: `wrote ${path}` };
  });
  const read = tool(
    "read",
    "Read",
    z.object({ path: z.string() }),
    async ({ path }, ctx) => {
      ran.push(ctx.toolUseId);
      return { content: `read ${path}` };
    },
    { isConcurrencySafe: () => true },
  );
  const delegate = createToolDefinition({
    name: "delegate",
    description: "Hands off",
    schema: z.object({ to: z.string() }),
    handler: async (_input, ctx) => {
      ran.push(ctx.toolUseId);
      return { content: "handed off" };
    },
    kind: "agent_tool",
  });
  return { ran, tools: toolMap(write, read, delegate) };
}

const batchCalls = [
  { id: "w1", name: "write", input: { path: "a.txt" } },
  { id: "w2", name: "write", input: { path: "a.txt" } },
  { id: "r1", name: "read", input: { path: "b.txt" } },
  { id: "d1", name: "delegate", input: { to: "reviewer" } },
  { id: "u1", name: "nope", input: { x: 1 } },
  { id: "bad", name: "read", input: { path: 7 } },
];

describe("validateToolBatchPolicy", () => {
  it("T23: accepts an object with a validate function, or a class instance with the method", () => {
    const policy = { validate: () => ({ allowed: true as const }) };
    expect(validateToolBatchPolicy(policy)).toBe(policy);
    expect(validateToolBatchPolicy(undefined)).toBeUndefined();
    class Policy {
      validate() {
        return { allowed: true as const };
      }
    }
    const instance = new Policy();
    expect(validateToolBatchPolicy(instance)).toBe(instance);
  });

  it("T31, T32: refuses unknown keys with the standard sentence", () => {
    expect(() => validateToolBatchPolicy({ validate: () => ({}), check: 1 })).toThrow(
      new UnknownOptionError("AgentOptions: toolBatchPolicy:", "check"),
    );
    expect(() => validateToolBatchPolicy({ validate: () => ({}), check: 1 })).toThrow(
      'AgentOptions: toolBatchPolicy: unknown option "check". Check for a typo, or upgrade the SDK if this option was added in a newer version.',
    );
  });

  it("T23, T31: a class instance with fields passes; only plain objects get the strict-key check", () => {
    class OneWritePolicy {
      readonly db: { name: string };
      readonly limit = 1;
      constructor(db: { name: string }) {
        this.db = db;
      }
      validate() {
        return { allowed: true as const };
      }
    }
    const instance = new OneWritePolicy({ name: "main" });
    expect(validateToolBatchPolicy(instance)).toBe(instance);
    // A plain object, literal or null-prototype, still has its keys checked.
    const bare = Object.assign(Object.create(null) as object, { validate: () => ({}), db: 1 });
    expect(() => validateToolBatchPolicy(bare)).toThrow(
      new UnknownOptionError("AgentOptions: toolBatchPolicy:", "db"),
    );
    expect(() => validateToolBatchPolicy({ validate: () => ({}), db: 1 })).toThrow(
      new UnknownOptionError("AgentOptions: toolBatchPolicy:", "db"),
    );
    // A class instance still needs its validate method.
    class NoValidate {
      readonly db = 1;
    }
    expect(() => validateToolBatchPolicy(new NoValidate())).toThrow(InvalidOptionError);
  });

  it("T23: refuses a policy that is not an object or has no validate function", () => {
    expect(() => validateToolBatchPolicy(() => true)).toThrow(InvalidOptionError);
    expect(() => validateToolBatchPolicy(() => true)).toThrow(
      /^AgentOptions: option "toolBatchPolicy" must be an object \{ validate\(\{ toolCalls \}\) \}, received a function\./,
    );
    expect(() => validateToolBatchPolicy({ validate: "yes" }, "defineAgent:")).toThrow(
      /^defineAgent: option "toolBatchPolicy.validate" must be a function .*received "yes"\.$/,
    );
    expect(() => validateToolBatchPolicy({})).toThrow(/received undefined\.$/);
  });
});

describe("checkToolBatchDecision", () => {
  it("T24: accepts { allowed: true } and full or minimal refusals", () => {
    expect(checkToolBatchDecision({ allowed: true })).toEqual({ allowed: true });
    expect(
      checkToolBatchDecision({
        allowed: false,
        code: "c",
        message: "m",
        conflictingToolCallIds: ["a"],
        suggestedNextStep: "s",
      }),
    ).toEqual({
      allowed: false,
      code: "c",
      message: "m",
      conflictingToolCallIds: ["a"],
      suggestedNextStep: "s",
    });
    expect(checkToolBatchDecision({ allowed: false, code: "c", message: "m" })).toEqual({
      allowed: false,
      code: "c",
      message: "m",
      conflictingToolCallIds: [],
    });
  });

  it.each([
    [undefined, "returned undefined"],
    [true, "returned true"],
    [{}, 'returned an object whose "allowed" is undefined, not true or false'],
    [{ allowed: "no" }, '"allowed" is "no"'],
    [{ allowed: false, message: "m" }, 'refused with "code" = undefined'],
    [{ allowed: false, code: "", message: "m" }, 'refused with "code" = ""'],
    [{ allowed: false, code: "c" }, 'refused with "message" = undefined'],
    [{ allowed: false, code: "c", message: "m", conflictingToolCallIds: "a" }, "array of tool"],
    [{ allowed: false, code: "c", message: "m", conflictingToolCallIds: [1] }, "array of tool"],
    [{ allowed: false, code: "c", message: "m", suggestedNextStep: 3 }, "suggestedNextStep"],
  ])("T26: %j is not a decision", (value, problem) => {
    const checked = checkToolBatchDecision(value);
    expect(typeof checked).toBe("string");
    expect(checked).toContain(problem);
  });
});

describe("runToolBatch with a batch policy", () => {
  it("T23: validate sees every call of the reply (id, name, raw input, kind) before anything runs", async () => {
    const { ran, tools } = counted();
    let seen: readonly ToolBatchCall[] = [];
    let ranWhenAsked = -1;
    const batch = await runToolBatch({
      calls: batchCalls,
      tools,
      policy: {
        validate: ({ toolCalls }) => {
          seen = toolCalls;
          ranWhenAsked = ran.length;
          return { allowed: true };
        },
      },
    });
    expect(ranWhenAsked).toBe(0);
    expect(seen).toEqual([
      { id: "w1", name: "write", input: { path: "a.txt" }, kind: "tool" },
      { id: "w2", name: "write", input: { path: "a.txt" }, kind: "tool" },
      { id: "r1", name: "read", input: { path: "b.txt" }, kind: "tool" },
      { id: "d1", name: "delegate", input: { to: "reviewer" }, kind: "agent_tool" },
      { id: "u1", name: "nope", input: { x: 1 }, kind: "tool" },
      { id: "bad", name: "read", input: { path: 7 }, kind: "tool" },
    ]);
    expect(Object.isFrozen(seen)).toBe(true);
    expect(Object.isFrozen(seen[0])).toBe(true);
    expect(ran).toEqual(["w1", "w2", "r1", "d1"]);
    expect(batch.decision).toEqual({ allowed: true });
  });

  it("T23: validate may be async", async () => {
    const { ran, tools } = counted();
    const batch = await runToolBatch({
      calls: batchCalls.slice(0, 3),
      tools,
      policy: {
        validate: async () => {
          await delay(20);
          return { allowed: true };
        },
      },
    });
    expect(ran).toEqual(["w1", "w2", "r1"]);
    expect(batch.results.map((outcome) => outcome.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
  });

  it("T24, T25: a refusal runs nothing and gives every call the code, message, next step and conflicts", async () => {
    const { ran, tools } = counted();
    const events: ToolBatchEvent[] = [];
    const policy: ToolBatchPolicy = {
      validate: async ({ toolCalls }) => {
        const writes = toolCalls.filter((call) => call.name === "write");
        return {
          allowed: false,
          code: "conflicting_writes",
          message: "Two calls write a.txt in the same batch.",
          conflictingToolCallIds: writes.map((call) => call.id),
          suggestedNextStep: "Send one write per reply, then read the file again.",
        };
      },
    };
    const batch = await runToolBatch({
      calls: batchCalls,
      tools,
      policy,
      onEvent: (event) => events.push(event),
    });
    expect(ran).toEqual([]);
    expect(batch.results).toHaveLength(batchCalls.length);
    expect(batch.results.every((outcome) => outcome.status === "refused")).toBe(true);
    expect(batch.results.every((outcome) => outcome.result.isError)).toBe(true);
    expect(text(batch.results[0]!)).toBe(
      [
        'The tool batch policy refused this batch (code "conflicting_writes"): Two calls write a.txt in the same batch.',
        "This call conflicts with: w2.",
        "Suggested next step: Send one write per reply, then read the file again.",
        "No tool call of this batch ran.",
      ].join("\n"),
    );
    expect(text(batch.results[1]!)).toContain("This call conflicts with: w1.");
    expect(text(batch.results[2]!)).toBe(
      [
        'The tool batch policy refused this batch (code "conflicting_writes"): Two calls write a.txt in the same batch.',
        "Suggested next step: Send one write per reply, then read the file again.",
        "No tool call of this batch ran.",
      ].join("\n"),
    );
    expect(batch.results[0]!.result.error).toBeInstanceOf(ToolBatchRefusedError);
    expect(batch.decision).toMatchObject({ allowed: false, code: "conflicting_writes" });
    expect(batch.plan.runs).toEqual([]);
    expect(events.map((event) => event.type)).toEqual([
      ...batchCalls.map(() => "tool_call_queued"),
      "batch_policy",
      ...batchCalls.map(() => "tool_call_finished"),
    ]);
    expect(events.some((event) => event.type === "tool_call_started")).toBe(false);
  });

  it("T25: a sole conflicting call is told it is the one the policy objects to", async () => {
    const { tools } = counted();
    const batch = await runToolBatch({
      calls: batchCalls.slice(0, 2),
      tools,
      policy: {
        validate: () => ({
          allowed: false,
          code: "no_writes",
          message: "Writes are frozen.",
          conflictingToolCallIds: ["w2"],
        }),
      },
    });
    expect(text(batch.results[1]!)).toBe(
      [
        'The tool batch policy refused this batch (code "no_writes"): Writes are frozen.',
        "This call is the one the policy objects to.",
        "No tool call of this batch ran.",
      ].join("\n"),
    );
  });

  it.each([
    [
      "throws",
      () => {
        throw new Error("policy store offline");
      },
      "validate threw: policy store offline",
    ],
    [
      "rejects",
      async () => {
        throw new Error("timeout");
      },
      "validate threw: timeout",
    ],
    ["returns nothing", () => undefined, "validate returned undefined"],
    [
      "returns a refusal without code",
      () => ({ allowed: false, message: "no" }),
      'validate refused with "code" = undefined',
    ],
  ])(
    "T26: a policy that %s gives every call a tool_batch_policy_error and runs nothing",
    async (_label, validate, problem) => {
      const { ran, tools } = counted();
      const batch = await runToolBatch({
        calls: batchCalls,
        tools,
        policy: { validate } as unknown as ToolBatchPolicy,
      });
      expect(ran).toEqual([]);
      expect(batch.results.every((outcome) => outcome.status === "policy_error")).toBe(true);
      for (const outcome of batch.results) {
        expect(outcome.result.isError).toBe(true);
        expect(text(outcome)).toMatch(/^tool_batch_policy_error: the tool batch policy failed \(/);
        expect(text(outcome)).toContain(problem);
        expect((outcome.result.error as ToolBatchPolicyError).code).toBe("tool_batch_policy_error");
      }
      expect(batch.policyError).toBeInstanceOf(ToolBatchPolicyError);
      expect(batch.decision).toBeUndefined();
    },
  );

  it("T27: scheduling starts only after the whole batch is allowed; beforeCall comes after the policy", async () => {
    const { ran, tools } = counted();
    const order: string[] = [];
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const pending = runToolBatch({
      calls: batchCalls.slice(0, 3),
      tools,
      policy: {
        validate: async () => {
          order.push("policy");
          await gate;
          order.push("policy allowed");
          return { allowed: true };
        },
      },
      beforeCall: (call) => {
        order.push(`before:${call.id}`);
        return undefined;
      },
      onEvent: (event) => {
        if (event.type === "batch_planned") order.push("planned");
        if (event.type === "tool_call_started") order.push(`start:${event.id}`);
      },
    });
    await delay(30);
    expect(ran).toEqual([]);
    expect(order).toEqual(["policy"]);
    release();
    await pending;
    expect(order).toEqual([
      "policy",
      "policy allowed",
      "before:w1",
      "before:w2",
      "before:r1",
      "planned",
      "start:w1",
      "start:w2",
      "start:r1",
    ]);
  });
});
