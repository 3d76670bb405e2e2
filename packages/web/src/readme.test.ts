// The READMEs' route handler is src/readme-example/route.ts verbatim, and it answers useChat.
import { readFileSync } from "node:fs";
import { createScriptedModelServer } from "@lattice/providers/testing";
import { describe, expect, it } from "vitest";
import { assembleWithAiSdk } from "./ui-stream.test-helpers.js";

const example = readFileSync(new URL("./readme-example/route.ts", import.meta.url), "utf8");

function examplesIn(markdown: string, heading: string): string[] {
  const start = markdown.indexOf(heading);
  const section = markdown.slice(start, markdown.indexOf("\n## ", start + 1));
  return [...section.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1] as string);
}

describe("README", () => {
  it("W1: shows readme-example/route.ts verbatim, here and in the root README's 'In a web page'", () => {
    const own = readFileSync(new URL("../README.md", import.meta.url), "utf8");
    const root = readFileSync(new URL("../../../README.md", import.meta.url), "utf8");
    expect(examplesIn(own, "## A chat route")[0]).toBe(example);
    expect(examplesIn(root, "## In a web page")[0]).toBe(example);
  });

  it("W1: the route handler answers a useChat request with a parallel batch and a streamed answer", async () => {
    const server = await createScriptedModelServer({
      turns: [
        {
          content: [
            { type: "tool_use", id: "call_1", name: "weather", input: { city: "Paris" } },
            { type: "tool_use", id: "call_2", name: "weather", input: { city: "Tokyo" } },
          ],
          stopReason: "tool_use",
        },
        { content: [{ type: "text", text: "Sunny in both." }], chunkSize: 4 },
      ],
    });
    process.env.ANTHROPIC_API_KEY = "sk-offline";
    process.env.ANTHROPIC_BASE_URL = server.anthropicBaseURL;
    try {
      const { POST } = await import("./readme-example/route.js");
      const response = await POST(
        new Request("http://localhost/api/chat", {
          method: "POST",
          body: JSON.stringify({
            id: "chat-1",
            messages: [
              {
                id: "u1",
                role: "user",
                parts: [{ type: "text", text: "Weather in Paris and Tokyo?" }],
              },
            ],
            trigger: "submit-message",
          }),
        }),
      );
      const chunks = (await response.text())
        .split("\n\n")
        .filter((event) => event.startsWith("data: {"))
        .map((event) => JSON.parse(event.slice(6)));
      const { message, errors } = await assembleWithAiSdk(chunks);
      expect(errors).toEqual([]);
      expect(message?.parts.filter((part) => part.type === "tool-weather")).toHaveLength(2);
      expect(message?.parts.find((part) => part.type === "data-lattice-batch")).toMatchObject({
        data: { runs: [{ concurrent: true, toolCallIds: ["call_1", "call_2"] }] },
      });
      expect(message?.parts.filter((part) => part.type === "text").at(-1)).toMatchObject({
        text: "Sunny in both.",
      });
    } finally {
      delete process.env.ANTHROPIC_API_KEY;
      delete process.env.ANTHROPIC_BASE_URL;
      await server.close();
    }
  });
});
