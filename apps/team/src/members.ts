import { agentTool, defineAgent, delegateTool, tool } from "agent-lattice";
import { z } from "zod/v4";

/** Canned notes, so the researcher has something to look up offline and live alike. */
const NOTES: Record<string, string> = {
  tides:
    "Mont-Saint-Michel has some of the strongest tides in Europe: up to 14 m between low and high water. The sea can come in at about 1 m/s. Since 2015 a bridge replaced the causeway, so the island is an island again at the highest tides.",
  visitors:
    "About 2.5 million people visit each year. The best tides to watch are the spring tides, a day or two after a new or full moon.",
};

/** Looks up the notes on a topic. Safe to run at the same time as other lookups. */
export const lookup = tool(
  "lookup",
  "Looks up short notes on a topic about Mont-Saint-Michel. Topics: tides, visitors.",
  z.object({ topic: z.string().describe('The topic, for example "tides".') }),
  async ({ topic }) => {
    const notes = NOTES[topic.toLowerCase()];
    return notes === undefined
      ? {
          content: `No notes on "${topic}". Known topics: ${Object.keys(NOTES).join(", ")}.`,
          isError: true,
        }
      : { content: notes };
  },
  { isConcurrencySafe: () => true },
);

/** Finds facts with the lookup tool. */
export const researcher = defineAgent({
  name: "researcher",
  description:
    "Finds facts: looks up notes and answers with the facts that matter, as a short list.",
  systemPrompt:
    "You are researcher. Use the lookup tool to gather notes, then answer with the three facts that matter most, as a short list.",
  tools: [lookup],
  maxTurns: 4,
});

/** Turns facts into a short brief. */
export const writer = defineAgent({
  name: "writer",
  description: "Writes: turns facts into a short, clear brief for visitors.",
  systemPrompt:
    "You are writer. Turn the facts you are given into one short paragraph for visitors. Answer with the paragraph only.",
  maxTurns: 2,
});

/**
 * Leads the work: delegates research (the delegate tool, "call" mode: it waits for the answer)
 * and hands the writing off to the writer ("handoff" mode: it goes on at once; the writer's
 * brief comes back later as a reply).
 */
export const lead = defineAgent({
  name: "lead",
  systemPrompt: [
    "You are lead. You coordinate a researcher and a writer.",
    "1. Ask the researcher for the facts with the delegate tool and wait for its answer.",
    "2. Hand the writing off to the writer with hand_off_to_writer, passing the facts, then end your turn with one sentence saying the brief is on its way.",
    "3. When the writer's reply arrives, check it and answer with the final brief, prefixed with 'Final brief:'.",
  ].join("\n"),
  tools: [
    delegateTool({ name: "delegate", agents: [researcher, writer] }),
    agentTool(writer, { name: "hand_off_to_writer", modes: ["handoff"] }),
  ],
  maxTurns: 6,
});
