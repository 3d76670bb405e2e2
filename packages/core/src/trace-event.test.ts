import { openaiCompatible } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type AgentOptions, createAgent, type TraceEvent } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const API_KEY = "sk-test-secret-key-trace-event";

type Finished = Extract<TraceEvent, { type: "model_request_finished" }>;

async function finishedEvent(
  protocol: "anthropic" | "openai",
  stream: boolean,
  replyModel: string,
): Promise<Finished> {
  server.enqueue({ content: [{ type: "text", text: "Hello." }], model: replyModel });
  const events: TraceEvent[] = [];
  const options: AgentOptions = {
    model: protocol === "anthropic" ? "claude-sonnet-4-5" : "gpt-4.1",
    maxTurns: 2,
    stream,
    onTrace: (event) => void events.push(event),
    ...(protocol === "anthropic"
      ? { apiKey: API_KEY, baseURL: server.anthropicBaseURL }
      : { provider: openaiCompatible({ apiKey: API_KEY, baseURL: server.openaiBaseURL }) }),
  };
  const result = await createAgent(options).run("hi");
  expect(result.subtype).toBe("success");
  const finished = events.filter((event) => event.type === "model_request_finished");
  expect(finished).toHaveLength(1);
  return finished[0] as Finished;
}

describe("model_request_finished: the reply's id and model (O3a)", () => {
  for (const protocol of ["anthropic", "openai"] as const) {
    for (const stream of [true, false]) {
      it(`O3a: carries the reply's id and model, apart from the HTTP request id (${protocol}, ${stream ? "streamed" : "not streamed"})`, async () => {
        const replyModel =
          protocol === "anthropic" ? "claude-sonnet-4-5-20250929" : "gpt-4.1-2025-04-14";
        const event = await finishedEvent(protocol, stream, replyModel);
        // The scripted server numbers its requests: the first is 1 (msg_… / chatcmpl-…), and
        // its HTTP request id header is another string (req_scripted_1).
        expect(event.responseId).toBe(
          protocol === "anthropic" ? "msg_scripted_1" : "chatcmpl-scripted-1",
        );
        expect(event.responseModel).toBe(replyModel);
        expect(event.requestId).toBe("req_scripted_1");
      });
    }
  }
});
