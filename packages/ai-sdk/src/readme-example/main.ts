import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { fromAiSdk } from "@lattice/ai-sdk";
import { createAgent, tool } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { z } from "zod";

// A scripted OpenAI-compatible model on 127.0.0.1, so this runs offline. With a real model,
// only the AI SDK provider changes (see "Any AI SDK provider" below).
const server = await createScriptedModelServer({
  turns: [
    { content: [{ type: "tool_use", name: "get_weather", input: { city: "Paris" } }] },
    { content: [{ type: "text", text: "It is sunny in Paris." }] },
  ],
});
const scripted = createOpenAICompatible({
  name: "scripted",
  baseURL: server.openaiBaseURL,
  apiKey: "not-needed",
  includeUsage: true,
});

const getWeather = tool(
  "get_weather",
  "The weather in a city",
  z.object({ city: z.string() }),
  async ({ city }) => ({ content: `Sunny, 24 °C in ${city}` }),
);

const agent = createAgent({
  provider: fromAiSdk(scripted("scripted-model")),
  model: "scripted-model",
  tools: [getWeather],
});
const result = await agent.run("What is the weather in Paris?");
console.log(result.result); // It is sunny in Paris.
console.log(result.numTurns, result.usage); // 2 { inputTokens: …, outputTokens: …, … }
await server.close();
