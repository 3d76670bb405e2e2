import type { RecordedRequest, ScriptedTurn } from "agent-lattice/testing";

/**
 * What the offline "model" answers, by turn: it calls the tools of
 * `@modelcontextprotocol/server-everything` (listed to the model as `everything__<tool>`) next
 * to the agent's own `countWords`, the way a real model would.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const body = request.body as { messages: unknown[] };
  const turn = Math.floor(body.messages.length / 2) + 1;
  switch (turn) {
    case 1:
      return {
        content: [
          {
            type: "text",
            text: "I'll echo the greeting, add the numbers and count the words at once.",
          },
          { type: "tool_use", name: "everything__echo", input: { message: "hello from Lattice" } },
          { type: "tool_use", name: "everything__get-sum", input: { a: 19, b: 23 } },
          {
            type: "tool_use",
            name: "countWords",
            input: { text: "tools from two worlds, one agent" },
          },
        ],
      };
    case 2:
      return {
        content: [
          { type: "text", text: "Now the weather, as structured content." },
          {
            type: "tool_use",
            name: "everything__get-structured-content",
            input: { location: "Chicago" },
          },
        ],
      };
    default:
      return {
        content: [
          {
            type: "text",
            text: "The server echoed the greeting, 19 + 23 is 42, the sentence has 6 words, and Chicago has light rain at 36 °C.",
          },
        ],
      };
  }
}
