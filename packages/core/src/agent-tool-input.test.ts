import { parseToolInput, type ToolDefinition, tool } from "@lattice/tools";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { agentTool, defineAgent, delegateTool } from "./index.js";

// agentTool and delegateTool validate without Zod (so importing the SDK does not load it).
// These tests hold them to what the Zod schemas they replaced produced: the same JSON Schema,
// byte for byte, and the same issues, messages and outputs for the same inputs.

const researcher = defineAgent({ name: "researcher", description: "Finds facts." });
const writer = defineAgent({ name: "writer" });
const ok = async () => ({ content: "ok" });

const TASK_FOR = (name: string) =>
  `The task for ${name}: a complete request, with everything it needs to know.`;
const MODE = `"call" (default) waits for researcher's answer; "handoff" gives researcher the task to do on its own and returns at once (its result comes back later as a reply).`;
const TASK = "The task for the agent: a complete request, with everything it needs to know.";

function agentZod(modes: readonly ("call" | "handoff")[]) {
  const task = z.string().min(1).describe(TASK_FOR("researcher"));
  const shape =
    modes.length > 1
      ? z.object({
          task,
          mode: z
            .enum(modes as ["call", "handoff"])
            .optional()
            .describe(MODE),
        })
      : z.object({ task });
  return tool("researcher", "d", shape, ok);
}

function delegateZod(names: [string, ...string[]]) {
  return tool(
    "delegate",
    "d",
    z.object({
      agent: z.enum(names).describe("Which agent runs the task."),
      task: z.string().min(1).describe(TASK),
    }),
    ok,
  );
}

const pairs: Array<[string, ToolDefinition<unknown>, ToolDefinition<unknown>]> = [
  ["both modes", agentTool(researcher), agentZod(["call", "handoff"])],
  [
    "modes reversed",
    agentTool(researcher, { modes: ["handoff", "call"] }),
    agentZod(["call", "handoff"]),
  ],
  ["call only", agentTool(researcher, { modes: ["call"] }), agentZod(["call"])],
  ["handoff only", agentTool(researcher, { modes: ["handoff"] }), agentZod(["handoff"])],
  [
    "two agents",
    delegateTool({ name: "delegate", agents: [researcher, writer] }),
    delegateZod(["researcher", "writer"]),
  ],
  ["one agent", delegateTool({ name: "delegate", agents: [writer] }), delegateZod(["writer"])],
] as never;

const inputs: unknown[] = [
  {},
  { task: "x" },
  { task: "" },
  { task: 5 },
  { task: ["a"] },
  { task: "x", mode: "call" },
  { task: "x", mode: "handoff" },
  { task: "x", mode: "bogus" },
  { task: "x", mode: null },
  { task: "x", extra: 1 },
  { mode: 3 },
  { agent: "writer", task: "t" },
  { agent: "nobody", task: "t" },
  { agent: 1 },
  { agent: "researcher", task: "t", more: true },
  { task: "x", mode: "call", agent: "writer" },
  null,
  "text",
  [1],
  5,
  true,
];

describe("agent tool inputs without Zod", () => {
  it.each(pairs)(
    "%s: the model receives the JSON Schema Zod made, byte for byte",
    (_, ours, zods) => {
      expect(JSON.stringify(ours.inputSchema)).toBe(JSON.stringify(zods.inputSchema));
    },
  );

  it.each(pairs)(
    "%s: every input gets Zod's issues, messages and output",
    async (_, ours, zods) => {
      for (const input of inputs) {
        const mine = await parseToolInput(ours, input);
        const theirs = await parseToolInput({ ...zods, name: ours.name }, input);
        if (theirs.success) {
          expect(mine).toEqual(theirs);
          expect(mine.success && Object.keys(mine.input as object)).toEqual(
            Object.keys(theirs.input as object),
          );
        } else {
          expect(mine.success).toBe(false);
          if (mine.success) continue;
          expect(mine.error.message).toBe(theirs.error.message);
          expect(mine.error.issues).toEqual(theirs.error.issues);
        }
      }
    },
  );

  it('reads like Zod: "- task: Invalid input: expected string, received number"', async () => {
    const parsed = await parseToolInput(agentTool(researcher), { task: 5 });
    expect(parsed.success).toBe(false);
    if (!parsed.success) {
      expect(parsed.error.message).toContain(
        "- task: Invalid input: expected string, received number",
      );
    }
  });
});
