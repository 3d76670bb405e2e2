import type { ContentBlock, ModelMessage } from "@lattice/providers";
import { createScriptedModelServer } from "@lattice/providers/testing";
import { acme } from "./acme.js";

const server = await createScriptedModelServer({
  turns: [
    { content: [{ type: "tool_use", name: "get_weather", input: { city: "Paris" } }] },
    { content: [{ type: "text", text: "Sunny in Paris." }], usage: { inputTokens: 42 } },
  ],
});
const provider = acme({ apiKey: "test", baseURL: server.anthropicBaseURL });
const tools = [
  {
    name: "get_weather",
    description: "The weather in a city",
    inputSchema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
  },
];
const messages: ModelMessage[] = [{ role: "user", content: "Weather in Paris?" }];
const signal = AbortSignal.timeout(30_000); // aborting it aborts the HTTP request at once

for (let turn = 1; turn <= 2; turn++) {
  const request = { model: "acme-1", maxTokens: 256, messages, tools, signal };
  for await (const event of provider.stream(request)) {
    if (event.type === "text_delta") console.log("text:", event.text);
    if (event.type !== "response") continue;
    const { message, stopReason, usage } = event.response;
    console.log("stop:", stopReason, "usage:", usage.inputTokens, usage.outputTokens);
    messages.push(message);
    const results: ContentBlock[] = [];
    for (const block of message.content) {
      if (block.type !== "tool_use") continue;
      console.log("call:", block.name, JSON.stringify(block.input));
      results.push({ type: "tool_result", tool_use_id: block.id, content: "sunny" });
    }
    if (results.length > 0) messages.push({ role: "user", content: results });
  }
}
await server.close();
