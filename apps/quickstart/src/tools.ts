import { tool } from "agent-lattice";
import { z } from "zod/v4";

/**
 * The product page's calculator: an operator applied to two numbers. The model sends numbers
 * and an operator from a fixed list, never an expression to evaluate, so no text the model
 * sends is run as code (H29).
 */
export const calculator = tool(
  "calculator",
  "Apply an arithmetic operator to two numbers",
  z.object({ a: z.number(), op: z.enum(["+", "-", "*", "/"]), b: z.number() }),
  async ({ a, op, b }) => {
    const value = op === "+" ? a + b : op === "-" ? a - b : op === "*" ? a * b : a / b;
    return { content: String(value) };
  },
);

const documents: Record<string, string> = {
  pricing: "Pricing: the team plan costs 12 EUR per seat and month.",
  limits: "Limits: the API accepts 50 requests per minute per key.",
  regions: "Regions: data is stored in Frankfurt and Dublin.",
};

/** A concurrency-safe search over a small in-memory index; each query takes 300 ms. */
export const search = tool(
  "search",
  "Search documents",
  z.object({ query: z.string().describe("A topic: pricing, limits or regions") }),
  async ({ query }, { signal }) => {
    await new Promise((resolve) => setTimeout(resolve, 300));
    signal.throwIfAborted();
    const hit = Object.entries(documents).find(([topic]) => query.toLowerCase().includes(topic));
    return { content: hit ? hit[1] : `No document matches "${query}".` };
  },
  { isConcurrencySafe: () => true },
);

let revision = 1;

/** Bumps the document revision: not concurrency-safe, and the batch policy keeps it apart. */
export const incrementRevision = tool(
  "incrementRevision",
  "Increment the revision of the shared document and return the new revision",
  z.object({}),
  async () => {
    revision += 1;
    return { content: `revision is now ${revision}` };
  },
);

/** Tells the team about a revision; it must see the revision after the update. */
export const notifyTeam = tool(
  "notifyTeam",
  "Tell the team which revision to review",
  z.object({ revision: z.number().int() }),
  async ({ revision: seen }) => ({
    content: seen === revision ? `team notified of revision ${seen}` : `revision ${seen} is stale`,
    isError: seen !== revision,
  }),
);

/** Submits the final answer and ends the run (endTurn + structuredResult). */
export const finish = tool(
  "finish",
  "Submit the final answer and end the run",
  z.object({ answer: z.string(), seats: z.number(), total: z.number() }),
  async ({ answer, seats, total }) => ({
    content: answer,
    endTurn: true,
    structuredResult: { seats, total, currency: "EUR" },
  }),
);

/** The product page's batch policy, adapted: an update and a notification never share a reply. */
export const revisionPolicy = {
  validate({ toolCalls }: { toolCalls: readonly { id: string; name: string }[] }) {
    const update = toolCalls.find((call) => call.name === "incrementRevision");
    const notify = toolCalls.find((call) => call.name === "notifyTeam");
    if (update && notify) {
      return {
        allowed: false as const,
        code: "invalid_tool_batch",
        message: "Update the revision first, then notify the team about the new revision.",
        conflictingToolCallIds: [update.id, notify.id],
        suggestedNextStep: "Call incrementRevision alone, then notifyTeam with the new revision.",
      };
    }
    return { allowed: true as const };
  },
};
