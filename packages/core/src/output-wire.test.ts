// L16: typed output on the real adapters, against the scripted server's strict request
// validators (the official SDKs' request shapes): native output where the provider has it,
// the forced final_answer tool where it does not, chosen per provider, fallback included.
import { anthropic, openaiCompatible } from "@lattice/providers";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod/v4";
import { createAgent, type TraceEvent } from "./index.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
});

const Contact = z.object({
  name: z.string(),
  email: z.string().optional(),
  tags: z.array(z.object({ label: z.string() })),
});

function modesOf(events: readonly TraceEvent[]): unknown[] {
  return events
    .filter((event) => event.type === "model_request_started")
    .map((event) => (event as { outputMode?: string }).outputMode);
}

describe("typed output on the wire (L16, L2)", () => {
  it("L16, L2: anthropic() asks natively with output_config; the strict validator accepts it and the answer validates", async () => {
    server.enqueue({
      content: [{ type: "text", text: '{"name":"Ada","tags":[{"label":"vip"}]}' }],
    });
    const events: TraceEvent[] = [];
    const agent = createAgent({
      provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL }),
      model: "claude-sonnet-4-6",
      outputSchema: Contact,
      onTrace: (event) => events.push(event),
    });
    const result = await agent.run("Ada, VIP");
    expect(result.subtype).toBe("success");
    expect(result.output).toEqual({ name: "Ada", tags: [{ label: "vip" }] });
    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body.output_config).toEqual({
      format: {
        type: "json_schema",
        schema: expect.objectContaining({ type: "object", additionalProperties: false }),
      },
    });
    expect(body.tools).toBeUndefined();
    expect(modesOf(events)).toEqual(["native_json_schema"]);
  });

  it("L16, L2: openaiCompatible() sends a strict response_format; a null for an optional field validates as absent", async () => {
    server.enqueue({
      content: [{ type: "text", text: '{"name":"Ada","email":null,"tags":[]}' }],
    });
    const agent = createAgent({
      provider: openaiCompatible({ apiKey: "k", baseURL: server.openaiBaseURL }),
      model: "gpt-5",
      outputSchema: Contact,
    });
    const result = await agent.run("Ada");
    expect(result.subtype).toBe("success");
    expect(result.output).toEqual({ name: "Ada", tags: [] });
    const body = server.requests[0]!.body as { response_format: Record<string, unknown> };
    expect(body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: {
        name: "final_answer",
        strict: true,
        schema: {
          type: "object",
          required: ["name", "email", "tags"],
          additionalProperties: false,
        },
      },
    });
  });

  it("L16, L2: an endpoint without native output (nativeOutput: false, as DeepSeek's) gets the final_answer tool instead", async () => {
    server.enqueue({
      content: [{ type: "tool_use", name: "final_answer", input: { name: "Ada", tags: [] } }],
    });
    const events: TraceEvent[] = [];
    const agent = createAgent({
      provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, nativeOutput: false }),
      model: "deepseek-v4-flash",
      outputSchema: Contact,
      onTrace: (event) => events.push(event),
    });
    const result = await agent.run("Ada");
    expect(result.output).toEqual({ name: "Ada", tags: [] });
    const body = server.requests[0]!.body as Record<string, unknown>;
    expect(body.output_config).toBeUndefined();
    expect((body.tools as { name: string }[]).map((spec) => spec.name)).toEqual(["final_answer"]);
    expect(modesOf(events)).toEqual(["forced_tool"]);
  });

  it("L16, L10, L2: a 529 moves the request to a fallback without native output, which is asked with the tool", async () => {
    const backup = await createScriptedModelServer();
    try {
      server.enqueue({ status: 529 });
      backup.enqueue({
        content: [{ type: "tool_use", name: "final_answer", input: { name: "Ada", tags: [] } }],
      });
      const events: TraceEvent[] = [];
      const agent = createAgent({
        provider: anthropic({ apiKey: "k", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
        model: "claude-sonnet-4-6",
        fallback: [
          {
            provider: openaiCompatible({
              apiKey: "k",
              baseURL: backup.openaiBaseURL,
              nativeOutput: false,
            }),
            model: "local-model",
          },
        ],
        outputSchema: Contact,
        onTrace: (event) => events.push(event),
      });
      const result = await agent.run("Ada");
      expect(result.subtype).toBe("success");
      expect(result.output).toEqual({ name: "Ada", tags: [] });
      expect((server.requests[0]!.body as Record<string, unknown>).output_config).toBeDefined();
      const sent = backup.requests[0]!.body as Record<string, unknown>;
      expect(sent.response_format).toBeUndefined();
      expect(
        (sent.tools as { function: { name: string } }[]).map((spec) => spec.function.name),
      ).toEqual(["final_answer"]);
      expect(modesOf(events)).toEqual(["native_json_schema", "forced_tool"]);
    } finally {
      await backup.close();
    }
  });
});
