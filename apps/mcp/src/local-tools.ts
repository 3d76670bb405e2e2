import { tool } from "agent-lattice";
import { z } from "zod/v4";

/** The agent's own tool, next to the MCP server's: counts words; safe to run with others. */
export const countWords = tool(
  "countWords",
  "Count the words of a text",
  z.object({ text: z.string().describe("The text to count") }),
  ({ text }) => ({ content: String(text.split(/\s+/).filter((word) => word !== "").length) }),
  { isConcurrencySafe: () => true },
);
