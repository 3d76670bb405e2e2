// The model of steering.bench.mjs, in its own process so that the bench's process CPU is the
// client's alone: the scripted model server of agent-lattice/testing. Every request gets the
// same JSON text answer; the model "slow" answers after 300 ms.
import { createScriptedModelServer } from "agent-lattice/testing";

const server = await createScriptedModelServer({
  recordRequests: false,
  respond: (request) => ({
    content: [{ type: "text", text: '{"vendor":"ACME","total":12.5,"currency":"EUR"}' }],
    ...(request.body.model === "slow" ? { delayMs: 300 } : {}),
  }),
});
process.send({ url: server.anthropicBaseURL });
process.on("disconnect", () => server.close());
