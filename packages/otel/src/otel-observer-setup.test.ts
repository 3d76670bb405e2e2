import { readFileSync } from "node:fs";
import { createAgent } from "@lattice/core";
import { createScriptedModelServer, type ScriptedModelServer } from "@lattice/providers/testing";
import { InvalidOptionError, UnknownOptionError } from "@lattice/tools";
import { trace } from "@opentelemetry/api";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { inferProviderName, OTEL_PACKAGE_VERSION, otelObserver } from "./index.js";
import { memoryTracing } from "./span-tree.test-helpers.js";

let server: ScriptedModelServer;
beforeEach(async () => {
  server = await createScriptedModelServer();
});
afterEach(async () => {
  await server.close();
  trace.disable();
});

describe("otelObserver: setup (O1)", () => {
  it("O1: with no tracer provider registered, runs are not traced and nothing fails", async () => {
    const observer = otelObserver({ agentName: "lead" });
    server.enqueue({ content: [{ type: "text", text: "Hello." }] });
    const agent = createAgent({
      apiKey: "k",
      baseURL: server.anthropicBaseURL,
      model: "claude-test",
      onTrace: observer.onTrace,
    });
    const result = await agent.run("hi");
    expect(result.subtype).toBe("success");
    expect(result.traceErrors).toBeUndefined();
  });

  it("O1: the global provider is looked up at each run's start, so one registered later is used", async () => {
    const observer = otelObserver({ agentName: "lead" });
    const { provider, exporter } = memoryTracing();
    server.enqueue(
      { content: [{ type: "text", text: "one" }] },
      { content: [{ type: "text", text: "two" }] },
    );
    const agent = createAgent({
      apiKey: "k",
      baseURL: server.anthropicBaseURL,
      model: "claude-test",
      onTrace: observer.onTrace,
    });
    await agent.run("before");
    expect(trace.setGlobalTracerProvider(provider)).toBe(true);
    await agent.run("after");
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual([
      "chat claude-test",
      "invoke_agent lead",
    ]);
    expect(spans[0]!.instrumentationScope).toMatchObject({
      name: "@lattice/otel",
      version: OTEL_PACKAGE_VERSION,
    });
    // The provider was inferred from the model's name.
    expect(spans.every((span) => span.attributes["gen_ai.provider.name"] === "anthropic")).toBe(
      true,
    );
    await provider.shutdown();
  });

  it("O2: endOpenSpans ends the spans of a run that is still going", async () => {
    const { provider, exporter } = memoryTracing();
    const observer = otelObserver({ tracer: provider.getTracer("t") });
    const base = { time: performance.now(), sessionId: "s", runId: "r" };
    observer.onTrace({
      ...base,
      type: "run_started",
      agentName: "agent",
      provider: "anthropic",
      model: "m",
      tools: [],
      parentToolUseId: null,
    });
    observer.onTrace({
      ...base,
      type: "model_request_started",
      turn: 1,
      messageCount: 1,
      maxTokens: 1024,
    });
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    observer.endOpenSpans();
    const spans = exporter.getFinishedSpans();
    expect(spans.map((span) => span.name).sort()).toEqual(["chat m", "invoke_agent"]);
    expect(spans.find((span) => span.name === "invoke_agent")?.attributes).toMatchObject({
      "lattice.run.subtype": "unfinished",
    });
    // Later events of that run are ignored.
    observer.onTrace({ ...base, type: "run_aborted", numTurns: 1, durationMs: 1 });
    expect(exporter.getFinishedSpans()).toHaveLength(2);
    await provider.shutdown();
  });

  it("checks its options like every Lattice options object", () => {
    expect(() => otelObserver({ recordContents: true } as never)).toThrow(UnknownOptionError);
    expect(() => otelObserver({ recordContent: "yes" } as never)).toThrow(InvalidOptionError);
    expect(() => otelObserver({ tracer: {} } as never)).toThrow(
      'otelObserver: option "tracer" must be an OpenTelemetry Tracer',
    );
    expect(() => otelObserver({ agentName: "" })).toThrow(InvalidOptionError);
    expect(() => otelObserver({ maxTokens: 1.5 })).toThrow(InvalidOptionError);
  });

  it("infers gen_ai.provider.name from well-known model names only", () => {
    expect(inferProviderName("claude-sonnet-4-6")).toBe("anthropic");
    expect(inferProviderName("gpt-5")).toBe("openai");
    expect(inferProviderName("o4-mini")).toBe("openai");
    expect(inferProviderName("deepseek-v4-flash")).toBe("deepseek");
    expect(inferProviderName("scripted")).toBeUndefined();
  });

  it("OTEL_PACKAGE_VERSION is the package's version", () => {
    const manifest = JSON.parse(
      readFileSync(new URL("../package.json", import.meta.url), "utf8"),
    ) as { version: string };
    expect(OTEL_PACKAGE_VERSION).toBe(manifest.version);
  });
});
