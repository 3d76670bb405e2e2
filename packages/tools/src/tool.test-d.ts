import { expectTypeOf } from "vitest";
import { z } from "zod/v4";
import {
  type AnyToolDefinition,
  createToolDefinition,
  type StandardSchemaV1,
  type ToolContext,
  type ToolDefinition,
  tool,
} from "./index.js";

// T1: the handler's input is inferred from the Zod schema; context carries signal, ids, name (T7).
const search = tool(
  "search",
  "Search documents",
  z.object({
    query: z.string(),
    limit: z.number().default(5),
    tags: z.array(z.string()).optional(),
  }),
  async (input, context) => {
    expectTypeOf(input).toEqualTypeOf<{
      query: string;
      limit: number;
      tags?: string[] | undefined;
    }>();
    expectTypeOf(context).toEqualTypeOf<ToolContext>();
    expectTypeOf(context.signal).toEqualTypeOf<AbortSignal>();
    expectTypeOf(context.toolUseId).toEqualTypeOf<string>();
    expectTypeOf(context.toolName).toEqualTypeOf<string>();
    return { content: input.query };
  },
  {
    isConcurrencySafe: (input) => {
      expectTypeOf(input.query).toEqualTypeOf<string>();
      return true;
    },
  },
);
expectTypeOf(search).toEqualTypeOf<
  ToolDefinition<{ query: string; limit: number; tags?: string[] | undefined }>
>();

// Definitions of different input types share one array.
const finish = tool("finish", "d", z.object({ answer: z.string() }), async ({ answer }) => ({
  content: answer,
  endTurn: true,
  structuredResult: { answer },
}));
const list: AnyToolDefinition[] = [search, finish];
void list;

// A handler must return { content }.
// @ts-expect-error a number is not a handler result
tool("bad", "d", z.object({}), async () => 42);

// Unknown option keys are type errors too (and runtime errors, T31).
// @ts-expect-error bogusOption is not a ToolOptions key
tool("bad2", "d", z.object({}), async () => ({ content: "" }), { bogusOption: true });

// createToolDefinition infers the input from any Standard Schema (with an explicit inputSchema),
// and from a z.object as before.
declare const textSchema: StandardSchemaV1<unknown, { text: string }>;
const echo = createToolDefinition({
  name: "echo",
  description: "d",
  kind: "mcp",
  schema: textSchema,
  inputSchema: { type: "object", properties: { text: { type: "string" } } },
  handler: (input) => {
    expectTypeOf(input).toEqualTypeOf<{ text: string }>();
    return { content: input.text };
  },
  isConcurrencySafe: (input) => input.text === "",
});
expectTypeOf(echo).toEqualTypeOf<ToolDefinition<{ text: string }>>();
const fromZod = createToolDefinition({
  name: "z",
  description: "d",
  kind: "builtin",
  schema: z.object({ n: z.number().default(1) }),
  handler: (input) => {
    expectTypeOf(input).toEqualTypeOf<{ n: number }>();
    return { content: "" };
  },
});
expectTypeOf(fromZod).toEqualTypeOf<ToolDefinition<{ n: number }>>();
