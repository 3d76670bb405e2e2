/**
 * Property test of durable approvals (R13–R16) against the in-process way to decide (R17).
 *
 * Each case is a random batch (1–6 calls over 2–3 tools; each tool needs approval never,
 * always, or as a function of its input, sync or async; random concurrency safety and
 * `toolConcurrency`; random inputs, some invalid) and a random decision for every call that
 * needs one: approve, approve with an edited valid input, or deny (with a reason, an empty
 * reason, or none). Two paths run on the same scripted replies (the batch, then a final text):
 *
 * - A, durable: an agent on a SQLite file runs until it is interrupted; its store is closed;
 *   a new agent on a new `sqliteSessionStore` of the same file resumes with the decisions.
 * - B, in-process: an agent on a memory store, with the same tools minus `needsApproval`, whose
 *   `beforeToolCall` gives the same decisions (deny → `{ deny }`, edit → `{ input }`).
 *
 * Deny texts: the approval path answers a denied call with "Tool call "<name>" (<id>) was
 * denied by the person asked to approve it[: <reason>]." while `{ deny }` is used as given.
 * Path B's hook therefore denies with exactly the text path A produces, so the two
 * conversations must be equal block for block. (Invalid edited inputs are left out: their
 * text has a prefix `{ input }` cannot give.)
 *
 * Checked: which calls are pending (a model of the rules), that nothing ran before the
 * resume, the resumed run keeps its runId, each tool_result against a model of the tools,
 * A's and B's final messages and last model request are equal, each tool ran with the same
 * inputs in both paths, and resuming again runs nothing (R16).
 *
 * Runs: LATTICE_PROPS_RUNS (default 25); LATTICE_PROPS_SEED replays a failure's seed.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type AgentHooks,
  createAgent,
  memorySessionStore,
  type SDKResultMessage,
} from "@lattice/core";
import type { ModelMessage, ToolResultBlock } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedTurn } from "@lattice/providers/testing";
import { type AnyToolDefinition, tool } from "@lattice/tools";
import fc from "fast-check";
import { afterAll, expect, it } from "vitest";
import { z } from "zod/v4";
import { sqliteSessionStore } from "./index.js";

const RUNS = Number(process.env.LATTICE_PROPS_RUNS ?? 25);
const SEED = process.env.LATTICE_PROPS_SEED;

const folder = mkdtempSync(join(tmpdir(), "lattice-approvals-props-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

type ToolName = "lookup" | "write" | "flip";
const TOOL_NAMES: readonly ToolName[] = ["lookup", "write", "flip"];

/** The schemas; every input has an integer `n` the rules read. Keys in the order zod outputs them. */
const schemas = {
  lookup: z.object({ n: z.number().int(), tag: z.string() }),
  write: z.object({ n: z.number().int(), items: z.array(z.string()).max(3) }),
  flip: z.object({ n: z.number().int(), on: z.boolean() }),
} as const;

type Input = { readonly n: number } & Record<string, unknown>;

const nArb = fc.integer({ min: -2, max: 9 });
const validInput: { readonly [K in ToolName]: fc.Arbitrary<Input> } = {
  lookup: fc.record({ n: nArb, tag: fc.string({ maxLength: 8 }) }),
  write: fc.record({ n: nArb, items: fc.array(fc.string({ maxLength: 5 }), { maxLength: 3 }) }),
  flip: fc.record({ n: nArb, on: fc.boolean() }),
};

/** When a tool needs approval: never, always, for even `n` (sync or async). */
type Rule = "none" | "always" | "even" | "evenAsync";
/** When a call may overlap others: never (no isConcurrencySafe), always, for `n < 4`. */
type Safety = "never" | "always" | "small";

interface ToolSpec {
  readonly rule: Rule;
  readonly safety: Safety;
}

type DecisionSpec =
  | { readonly kind: "approve" }
  | { readonly kind: "edit"; readonly input: Input }
  | { readonly kind: "deny"; readonly reason: string | undefined };

interface CallSpec {
  readonly tool: number;
  /** `false`: the model sends `n` as a string, which fails the schema. */
  readonly valid: boolean;
  readonly input: Input;
  /** Used only when the call needs approval. */
  readonly decision: DecisionSpec;
}

interface Case {
  readonly tools: readonly ToolSpec[];
  readonly calls: readonly CallSpec[];
  readonly concurrency: { readonly mode: "safe" | "all" | "sequential"; maxConcurrency: number };
}

const decisionArb = (name: ToolName): fc.Arbitrary<DecisionSpec> =>
  fc.oneof(
    fc.constant<DecisionSpec>({ kind: "approve" }),
    validInput[name].map((input): DecisionSpec => ({ kind: "edit", input })),
    fc
      .option(fc.oneof(fc.string({ maxLength: 24 }), fc.constant("")), { nil: undefined })
      .map((reason): DecisionSpec => ({ kind: "deny", reason })),
  );

const callArb = (toolCount: number): fc.Arbitrary<CallSpec> =>
  fc.integer({ min: 0, max: toolCount - 1 }).chain((index) => {
    const name = TOOL_NAMES[index]!;
    return fc.record({
      tool: fc.constant(index),
      valid: fc.integer({ min: 0, max: 9 }).map((roll) => roll > 0),
      input: validInput[name],
      decision: decisionArb(name),
    });
  });

const caseArb: fc.Arbitrary<Case> = fc.integer({ min: 2, max: 3 }).chain((toolCount) =>
  fc.record({
    tools: fc.array(
      fc.record({
        rule: fc.constantFrom<Rule>("none", "always", "even", "evenAsync"),
        safety: fc.constantFrom<Safety>("never", "always", "small"),
      }),
      { minLength: toolCount, maxLength: toolCount },
    ),
    calls: fc.array(callArb(toolCount), { minLength: 1, maxLength: 6 }),
    concurrency: fc.record({
      mode: fc.constantFrom("safe" as const, "all" as const, "sequential" as const),
      maxConcurrency: fc.integer({ min: 1, max: 3 }),
    }),
  }),
);

function needsApproval(rule: Rule, input: { readonly n: number }): boolean {
  return rule === "always" || (rule !== "none" && input.n % 2 === 0);
}

/** What a tool's handler answers: a function of its name and validated input only. */
function toolText(name: string, input: unknown): string {
  const n = (input as Input).n;
  return n < 0
    ? `${name} refuses ${JSON.stringify(input)}`
    : `${name} did ${JSON.stringify(input)}`;
}

/** The text the approval path gives a denied call (R15), which path B's hook repeats. */
function denialText(name: string, id: string, reason: string | undefined): string {
  return reason !== undefined && reason !== ""
    ? `Tool call "${name}" (${id}) was denied by the person asked to approve it: ${reason}`
    : `Tool call "${name}" (${id}) was denied by the person asked to approve it.`;
}

/** The case's tools; `executions` receives each handler's validated input as it starts. */
function makeTools(
  specs: readonly ToolSpec[],
  executions: Map<string, unknown[]>,
  withApproval: boolean,
): AnyToolDefinition[] {
  return specs.map((spec, index) => {
    const name = TOOL_NAMES[index]!;
    executions.set(name, []);
    const rule = spec.rule;
    const approval =
      !withApproval || rule === "none"
        ? {}
        : rule === "always"
          ? { needsApproval: true as const }
          : rule === "even"
            ? { needsApproval: (input: { n: number }) => needsApproval(rule, input) }
            : { needsApproval: async (input: { n: number }) => needsApproval(rule, input) };
    const safety =
      spec.safety === "never"
        ? {}
        : spec.safety === "always"
          ? { isConcurrencySafe: () => true }
          : { isConcurrencySafe: (input: { n: number }) => input.n < 4 };
    return tool(
      name,
      `The ${name} tool`,
      schemas[name] as unknown as z.ZodObject<{ n: z.ZodNumber }>,
      async (input) => {
        executions.get(name)!.push(structuredClone(input));
        // A few turns of the event loop, so that concurrent calls overlap.
        for (let turn = 0; turn < input.n % 3; turn++) {
          await new Promise((resolve) => setImmediate(resolve));
        }
        return input.n < 0
          ? { content: toolText(name, input), isError: true }
          : { content: toolText(name, input) };
      },
      { ...approval, ...safety },
    ) as AnyToolDefinition;
  });
}

function modelInput(call: CallSpec): Input {
  return call.valid ? call.input : { ...call.input, n: `${call.input.n}` as unknown as number };
}

function blockText(block: ToolResultBlock): string {
  const content = block.content;
  if (typeof content === "string") return content;
  return (content as readonly { type: string; text?: string }[])
    .map((part) => (part.type === "text" ? part.text : ""))
    .join("");
}

function sortedByJson(values: readonly unknown[]): string[] {
  return values.map((value) => JSON.stringify(value)).sort();
}

async function checkCase(testCase: Case, iteration: number): Promise<void> {
  const { tools, calls, concurrency } = testCase;
  const ids = calls.map((_, index) => `toolu_${iteration}_${index}`);
  const names = calls.map((call) => TOOL_NAMES[call.tool]!);
  const batchReply: ScriptedTurn = {
    content: calls.map((call, index) => ({
      type: "tool_use" as const,
      id: ids[index]!,
      name: names[index]!,
      input: modelInput(call),
    })),
  };
  const finalReply: ScriptedTurn = { content: [{ type: "text", text: "All calls answered." }] };

  // The model of R13/R14: a call is pending when its input is valid and its rule says so.
  const pending = calls
    .map((call, index) => ({ call, index }))
    .filter(({ call }) => call.valid && needsApproval(tools[call.tool]!.rule, call.input));
  const decisionFor = new Map(pending.map(({ call, index }) => [ids[index]!, call.decision]));

  const server = await createScriptedModelServer();
  try {
    const common = {
      model: "scripted",
      apiKey: "sk-approvals-props",
      baseURL: server.anthropicBaseURL,
      toolConcurrency: concurrency,
    };

    // Path A: durable approvals on SQLite, resumed by a new agent on a new store.
    const path = join(folder, `case-${iteration}.db`);
    const sessionId = `approvals-${iteration}`;
    const executionsA = new Map<string, unknown[]>();
    const toolsA = makeTools(tools, executionsA, true);
    const storeA = sqliteSessionStore({ path });
    server.enqueue(batchReply);
    if (pending.length === 0) server.enqueue(finalReply);
    let first: SDKResultMessage;
    try {
      first = await createAgent({ ...common, tools: toolsA, sessionStore: storeA }).run(
        "Do the work",
        { sessionId },
      );
    } finally {
      await storeA.close();
    }
    const requestsBeforeResume = server.requests.length;
    let finishedA: SDKResultMessage;
    if (pending.length === 0) {
      expect(first.subtype).toBe("success");
      expect(first.pendingApprovals).toBeUndefined();
      finishedA = first;
    } else {
      // R14: interrupted, the pending calls in tool_use order, nothing of the batch ran.
      expect(first).toMatchObject({ subtype: "interrupted", isError: false, errors: [] });
      const approvals = first.pendingApprovals ?? [];
      expect(approvals.map((approval) => approval.toolUseId)).toEqual(
        pending.map(({ index }) => ids[index]),
      );
      for (const [position, approval] of approvals.entries()) {
        const { call, index } = pending[position]!;
        expect(approval).toMatchObject({ toolName: names[index], kind: "tool", input: call.input });
        expect(approval.approvalId).toMatch(/^appr_[A-Za-z0-9_-]{20,}$/);
      }
      expect(new Set(approvals.map((approval) => approval.approvalId)).size).toBe(approvals.length);
      for (const inputs of executionsA.values()) expect(inputs).toEqual([]);
      expect(first.messages).toHaveLength(2);

      const decisions = Object.fromEntries(
        approvals.map((approval) => {
          const spec = decisionFor.get(approval.toolUseId)!;
          const decision =
            spec.kind === "approve"
              ? { approved: true as const }
              : spec.kind === "edit"
                ? { approved: true as const, input: spec.input }
                : spec.reason === undefined
                  ? { approved: false as const }
                  : { approved: false as const, reason: spec.reason };
          return [approval.approvalId, decision];
        }),
      );
      // R15: another agent on another store of the same file resumes with the decisions.
      const executionsResume = new Map<string, unknown[]>();
      const toolsResume = makeTools(tools, executionsResume, true);
      const storeB = sqliteSessionStore({ path });
      try {
        const resumer = createAgent({ ...common, tools: toolsResume, sessionStore: storeB });
        server.enqueue(finalReply);
        finishedA = await resumer.resume(sessionId, { decisions }).finalResult();
        expect(finishedA.runId).toBe(first.runId);
        // The interrupted agent's handlers never ran, not even once the run went on.
        for (const inputs of executionsA.values()) expect(inputs).toEqual([]);
        for (const [name, inputs] of executionsResume) executionsA.set(name, inputs);
        // R16: the same decisions again run nothing.
        const snapshot = structuredClone([...executionsResume]);
        await expect(resumer.resume(sessionId, { decisions }).finalResult()).rejects.toMatchObject({
          code: "not_interrupted",
        });
        expect([...executionsResume]).toEqual(snapshot);
      } finally {
        await storeB.close();
      }
    }
    expect(finishedA).toMatchObject({ subtype: "success", result: "All calls answered." });
    expect(server.requests.length).toBe(requestsBeforeResume + (pending.length === 0 ? 0 : 1));
    const lastRequestA = server.requests[server.requests.length - 1]!.body;

    // Path B: the same tools without needsApproval; beforeToolCall decides in process.
    const executionsB = new Map<string, unknown[]>();
    const toolsB = makeTools(tools, executionsB, false);
    const hooks: AgentHooks = {
      beforeToolCall(call) {
        const spec = decisionFor.get(call.id);
        if (spec === undefined || spec.kind === "approve") return undefined;
        if (spec.kind === "edit") return { input: spec.input };
        return { deny: denialText(call.name, call.id, spec.reason) };
      },
    };
    server.enqueue(batchReply, finalReply);
    const finishedB = await createAgent({
      ...common,
      tools: toolsB,
      hooks,
      sessionStore: memorySessionStore(),
    }).run("Do the work", { sessionId });
    expect(finishedB).toMatchObject({ subtype: "success", result: "All calls answered." });
    const lastRequestB = server.requests[server.requests.length - 1]!.body;

    // The two paths are indistinguishable to the model and to the tools.
    expect(finishedA.messages).toEqual(finishedB.messages);
    expect((lastRequestA as { messages: unknown }).messages).toEqual(
      (lastRequestB as { messages: unknown }).messages,
    );
    for (const name of executionsA.keys()) {
      expect(sortedByJson(executionsA.get(name)!)).toEqual(sortedByJson(executionsB.get(name)!));
    }

    // And both match the model: one tool_result per call, in tool_use order.
    const results = finishedA.messages[2] as ModelMessage;
    expect(results.role).toBe("user");
    const blocks = results.content as ToolResultBlock[];
    expect(blocks.map((block) => block.tool_use_id)).toEqual(ids);
    const expectedRuns = new Map<string, string[]>(names.map((name) => [name, []]));
    for (const [index, call] of calls.entries()) {
      const block = blocks[index]!;
      const decision = decisionFor.get(ids[index]!);
      if (!call.valid) {
        expect(block.is_error).toBe(true);
      } else if (decision?.kind === "deny") {
        expect(block.is_error).toBe(true);
        expect(blockText(block)).toBe(denialText(names[index]!, ids[index]!, decision.reason));
      } else {
        const input = decision?.kind === "edit" ? decision.input : call.input;
        expect(block.is_error === true).toBe(input.n < 0);
        expect(blockText(block)).toBe(toolText(names[index]!, input));
        expectedRuns.get(names[index]!)!.push(JSON.stringify(input));
      }
    }
    for (const [name, inputs] of expectedRuns) {
      expect(sortedByJson(executionsA.get(name)!)).toEqual(inputs.sort());
    }
  } finally {
    await server.close();
  }
}

it("R13, R15: a batch interrupted for approvals on SQLite and resumed by a new agent on a new store ends as the same batch decided in beforeToolCall", async () => {
  let iteration = 0;
  await fc.assert(
    fc.asyncProperty(caseArb, (testCase) => checkCase(testCase, iteration++)),
    { numRuns: RUNS, ...(SEED !== undefined ? { seed: Number(SEED) } : {}) },
  );
}, 60_000);
