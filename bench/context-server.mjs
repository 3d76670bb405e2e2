// The model of context.bench.mjs, in its own process so that the bench's process CPU is the
// client's alone: the scripted model server of agent-lattice/testing. A model named
// "bench-<id>-<turns>" calls the tool `read` once a turn, `turns` times (its input numbers the
// turn, from 1), then answers; a compaction's summary call gets a short summary. Counting is per
// model name, so the conversation can be compacted without the model losing count.
import { createScriptedModelServer } from "agent-lattice/testing";

const counts = new Map();
const server = await createScriptedModelServer({
  recordRequests: false,
  respond: (request) => {
    const body = request.body;
    if (JSON.stringify(body.system ?? "").includes("You write summaries")) {
      return { content: [{ type: "text", text: "Summary: the files read so far were all fine." }] };
    }
    const model = String(body.model);
    const turns = Number(model.split("-").at(-1));
    const n = (counts.get(model) ?? 0) + 1;
    counts.set(model, n);
    if (!Number.isFinite(turns) || n > turns) {
      return { content: [{ type: "text", text: "All files read." }] };
    }
    return { content: [{ type: "tool_use", name: "read", input: { n } }] };
  },
});
process.send({ url: server.anthropicBaseURL });
process.on("disconnect", () => server.close());
