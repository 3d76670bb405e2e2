// The model of web.bench.mjs, in its own process so that the bench's process CPU is the
// client's alone: the scripted model server of agent-lattice/testing. A request without tool
// results gets two weather calls; one with results gets a 600-character answer, streamed in
// 30 deltas.
import { createScriptedModelServer } from "agent-lattice/testing";

const answer = "It is sunny in Paris and in Tokyo, 21 degrees in both. ".repeat(11).slice(0, 600);
const server = await createScriptedModelServer({
  recordRequests: false,
  respond: (request) => {
    const last = request.body.messages.at(-1);
    const answered = Array.isArray(last.content) && last.content[0]?.type === "tool_result";
    return answered
      ? { content: [{ type: "text", text: answer }], chunkSize: 20 }
      : {
          content: [
            { type: "tool_use", name: "weather", input: { city: "Paris" } },
            { type: "tool_use", name: "weather", input: { city: "Tokyo" } },
          ],
          stopReason: "tool_use",
        };
  },
});
process.send({ url: server.anthropicBaseURL });
process.on("disconnect", () => server.close());
