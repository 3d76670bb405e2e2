import type { RecordedRequest, ScriptedTurn } from "agent-lattice/testing";

interface RequestBody {
  readonly system?: string;
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: unknown }>;
}

const FACTS = [
  "- The tide range reaches 14 m, among the strongest in Europe.",
  "- The sea comes in at about 1 m/s: never cross the bay without a guide.",
  "- Spring tides, a day or two after a new or full moon, are the best to watch.",
].join("\n");

const BRIEF =
  "Mont-Saint-Michel's tides rise up to 14 m and race in at about a metre a second, so never cross the bay on foot without a guide; come a day or two after a new or full moon to watch the spring tides turn the mount back into an island.";

/**
 * What the offline "model" answers. Members run concurrently, so answers are chosen by who is
 * asking (the system prompt starts with "You are <name>.") and by the conversation so far, not
 * by the order of requests.
 */
export function offlineTurn(request: RecordedRequest): ScriptedTurn {
  const body = request.body as RequestBody;
  const member = /^You are (\w+)\./.exec(body.system ?? "")?.[1];
  const turn = (body.messages.length - 1) / 2;
  const prompt = body.messages[0]?.content;
  const step = { usage: { inputTokens: 120, outputTokens: 30 } } as const;
  switch (member) {
    case "lead":
      if (typeof prompt === "string" && prompt.startsWith('Reply from "writer"')) {
        return { ...step, content: [{ type: "text", text: `Final brief: ${BRIEF}` }] };
      }
      if (turn === 0) {
        return {
          ...step,
          content: [
            { type: "text", text: "First the facts." },
            {
              type: "tool_use",
              name: "delegate",
              input: {
                agent: "researcher",
                task: "Find the key facts about the tides at Mont-Saint-Michel.",
              },
            },
          ],
        };
      }
      if (turn === 1) {
        return {
          ...step,
          content: [
            {
              type: "tool_use",
              name: "hand_off_to_writer",
              input: {
                task: `Write a one-paragraph brief for visitors from these facts:\n${FACTS}`,
              },
            },
          ],
        };
      }
      return { ...step, content: [{ type: "text", text: "The writer is drafting the brief." }] };
    case "researcher":
      if (turn === 0) {
        return {
          ...step,
          content: [
            { type: "tool_use", name: "lookup", input: { topic: "tides" } },
            { type: "tool_use", name: "lookup", input: { topic: "visitors" } },
          ],
        };
      }
      return { ...step, content: [{ type: "text", text: FACTS }] };
    case "writer":
      // A little slower, so the lead has finished its run when the brief comes back.
      return { ...step, delayMs: 300, content: [{ type: "text", text: BRIEF }] };
    default:
      return {
        status: 400,
        body: { error: { type: "invalid_request_error", message: "unknown agent" } },
      };
  }
}
