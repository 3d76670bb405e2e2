import type { RecordedRequest, ScriptedTurn } from "agent-lattice/testing";

/**
 * What the offline "model" answers, by turn: it plays the part a real model would, so the demo
 * shows every feature without a key.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const body = request.body as { messages: unknown[] };
  const turn = Math.floor(body.messages.length / 2) + 1;
  const step = { chunkSize: 6, chunkDelayMs: 4 } as const;
  switch (turn) {
    case 1:
      return {
        ...step,
        content: [
          { type: "text", text: "I'll look up the three topics at once and compute the price." },
          { type: "tool_use", name: "search", input: { query: "pricing" } },
          { type: "tool_use", name: "search", input: { query: "limits" } },
          { type: "tool_use", name: "search", input: { query: "regions" } },
          { type: "tool_use", name: "calculator", input: { a: 12, op: "*", b: 8 } },
        ],
      };
    case 2:
      return {
        ...step,
        content: [
          { type: "text", text: "Now I'll update the revision and notify the team." },
          { type: "tool_use", name: "incrementRevision", input: {} },
          { type: "tool_use", name: "notifyTeam", input: { revision: 2 } },
        ],
      };
    case 3:
      return {
        ...step,
        content: [
          { type: "text", text: "The policy wants the update alone first." },
          { type: "tool_use", name: "incrementRevision", input: {} },
        ],
      };
    case 4:
      return {
        ...step,
        content: [{ type: "tool_use", name: "notifyTeam", input: { revision: 2 } }],
      };
    default:
      return {
        ...step,
        content: [
          { type: "text", text: "Done." },
          {
            type: "tool_use",
            name: "finish",
            input: {
              answer: "8 seats cost 96 EUR per month; data stays in Frankfurt and Dublin.",
              seats: 8,
              total: 96,
            },
          },
        ],
      };
  }
}
