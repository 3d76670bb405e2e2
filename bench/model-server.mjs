// The scripted model server in a child process, so the benchmark's process CPU is the
// client's alone. Scenarios are chosen by the request's model name:
//   loop-<calls>      : 20 turns, each calling tool "t0".."t<calls-1>" once, then a final text
//   long-<turns>      : <turns> turns, each calling tool "t0" once, then a final text (one long run)
//   makespan-<name>   : one batch from scenarios.mjs, then a final text
//   slow              : never answers, until the client aborts (heap measurement; counted)
//   text              : one short streamed text reply, for first-delta latency
import { createScriptedModelServer } from "agent-lattice/testing";
import { MAKESPAN_SCENARIOS } from "./scenarios.mjs";

const TURNS = 20;
/** How many "slow" requests arrived: the heap bench asks over IPC until all of its runs wait. */
let slowRequests = 0;

function assistantTurns(messages) {
  let count = 0;
  for (const message of messages) if (message.role === "assistant") count++;
  return count;
}

const server = await createScriptedModelServer({
  recordRequests: false,
  validate: false,
  respond(request) {
    const body = request.body;
    const model = body.model;
    if (model === "slow") {
      slowRequests++;
      return { fault: "hang" };
    }
    if (model === "text") {
      return {
        content: [{ type: "text", text: "Hello from the scripted model." }],
        usage: { inputTokens: 5, outputTokens: 5 },
      };
    }
    const turn = assistantTurns(body.messages);
    if (model.startsWith("makespan-")) {
      if (turn > 0)
        return {
          content: [{ type: "text", text: "done" }],
          usage: { inputTokens: 1, outputTokens: 1 },
        };
      const spec = MAKESPAN_SCENARIOS[model.slice("makespan-".length)];
      return {
        content: spec.map((entry, index) => ({
          type: "tool_use",
          id: `toolu_${index}`,
          name: entry.safe ? "wait_safe" : "wait_unsafe",
          input: { ms: entry.ms },
        })),
        usage: { inputTokens: 1, outputTokens: 1 },
      };
    }
    const long = model.startsWith("long-");
    const calls = long ? 1 : Number(model.slice("loop-".length));
    if (turn >= (long ? Number(model.slice("long-".length)) : TURNS))
      return {
        content: [{ type: "text", text: "final answer" }],
        usage: { inputTokens: 10, outputTokens: 3 },
      };
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
process.on("message", (message) => {
  if (message === "slowRequests") process.send?.({ slowRequests });
});
process.on("disconnect", () => {
  server.close().then(() => process.exit(0));
});
