// The scripted model server of otel.bench.mjs, in a child process so that the benchmark's
// process CPU is the client's alone. Every run: 20 turns, each calling tools t0..t<calls-1>
// once (the model name is `loop-<calls>`), then a final text.
import { createScriptedModelServer } from "@lattice/providers/testing";

const TURNS = 20;
const server = await createScriptedModelServer({
  recordRequests: false,
  validate: false,
  respond(request) {
    const { model, messages } = request.body;
    const turn = messages.filter((message) => message.role === "assistant").length;
    if (turn >= TURNS) {
      return {
        content: [{ type: "text", text: "final answer" }],
        usage: { inputTokens: 10, outputTokens: 3 },
      };
    }
    const calls = Number(model.slice("loop-".length));
    const content = [];
    for (let index = 0; index < calls; index++) {
      content.push({
        type: "tool_use",
        id: `toolu_${turn}_${index}`,
        name: `t${index}`,
        input: { n: turn },
      });
    }
    return { content, usage: { inputTokens: 10, outputTokens: 3 } };
  },
});
process.send?.({ url: server.url });
process.on("disconnect", () => {
  server.close().then(() => process.exit(0));
});
