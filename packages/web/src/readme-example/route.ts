// app/api/chat/route.ts: a Next.js App Router route handler (web Request and Response only).

import { chatEndpoint, traceRelay } from "@lattice/web";
import { createAgent, tool } from "agent-lattice";
import { z } from "zod/v4";

const weather = tool(
  "weather",
  "Today's weather in a city",
  z.object({ city: z.string() }),
  async ({ city }) => ({ content: `${city}: sunny, 21°C` }),
  { isConcurrencySafe: () => true },
);

const relay = traceRelay();
const agent = createAgent({
  apiKey: process.env.ANTHROPIC_API_KEY,
  baseURL: process.env.ANTHROPIC_BASE_URL, // unset: https://api.anthropic.com
  model: "claude-sonnet-4-6",
  tools: [weather],
  includePartialMessages: true, // stream text as it comes
  onTrace: relay.onTrace, // batch plans and call timings reach the page
});
const chat = chatEndpoint(agent, { trace: relay });

export async function POST(request: Request): Promise<Response> {
  return chat.handle(request);
}
