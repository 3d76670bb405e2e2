// CPU per model turn of a Lattice agent driven through the AI SDK bridge
// (`fromAiSdk(createOpenAICompatible(...)(model))`) beside the same agent on Lattice's native
// `openaiCompatible` adapter, against the bench's scripted model server (bench/model-server.mjs,
// in a child process, so process CPU here is the client's alone). Two more figures are there for
// scale: a floor, a hand-written tool loop calling the same AI SDK model's doStream/doGenerate
// directly (no Lattice, no bridge: what the AI SDK provider itself costs), the same loop over
// `fromAiSdk(model).stream()` (the bridge's own cost is its excess over the floor), and the AI SDK's own
// tool loop (`generateText` / `streamText` with `stopWhen: stepCountIs(...)`). Same method as
// bench/agent.bench.mjs: warm-up, then rounds in rotating order, medians.
//
//   node packages/ai-sdk/bench/bridge.bench.mjs [--quick]          (built packages)
//   node --conditions=@lattice/source --import tsx packages/ai-sdk/bench/bridge.bench.mjs
//                                                                  (sources, no build)
import { fork } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { fromAiSdk } from "@lattice/ai-sdk";
import { createAgent } from "@lattice/core";
import { openaiCompatible } from "@lattice/providers";
import { tool } from "@lattice/tools";
import { tool as aiTool, generateText, jsonSchema, stepCountIs, streamText } from "ai";
import { z } from "zod/v4";

const here = dirname(fileURLToPath(import.meta.url));
const quick = process.argv.includes("--quick");
/** The scripted server's `loop-<n>` scenario: 20 tool turns, then a final text. */
const TURNS_PER_RUN = 21;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

async function startModelServer() {
  const child = fork(join(here, "../../../bench/model-server.mjs"), [], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
  });
  const url = await new Promise((resolve, reject) => {
    child.once("message", (message) => resolve(message.url));
    child.once("exit", (code) => reject(new Error(`model server exited with ${code}`)));
  });
  return { url, close: () => child.disconnect() };
}

function latticeTools(count) {
  return Array.from({ length: count }, (_, index) =>
    tool(`t${index}`, "d", z.object({ n: z.number() }), ({ n }) => ({ content: String(n) }), {
      isConcurrencySafe: () => true,
    }),
  );
}

function aiSdkTools(count) {
  const schema = jsonSchema({
    type: "object",
    properties: { n: { type: "number" } },
    required: ["n"],
  });
  return Object.fromEntries(
    Array.from({ length: count }, (_, index) => [
      `t${index}`,
      aiTool({ description: "d", inputSchema: schema, execute: async ({ n }) => String(n) }),
    ]),
  );
}

function aiSdkModel(url, model) {
  return createOpenAICompatible({
    name: "bench",
    baseURL: `${url}/v1`,
    apiKey: "bench",
    includeUsage: true,
  })(model);
}

/**
 * The floor: one run of a hand-written loop over the AI SDK model itself (V3 prompt built by
 * hand, tool calls answered with their input's `n`, no validation, no events).
 */
async function floorRun(model, toolCount, stream) {
  const tools = Array.from({ length: toolCount }, (_, index) => ({
    type: "function",
    name: `t${index}`,
    description: "d",
    inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  }));
  const prompt = [{ role: "user", content: [{ type: "text", text: "go" }] }];
  for (let turn = 1; ; turn++) {
    const options = { prompt, tools, maxOutputTokens: 4096 };
    const calls = [];
    const content = [];
    if (stream) {
      const { stream: parts } = await model.doStream(options);
      const reader = parts.getReader();
      let text = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        if (value.type === "text-delta") text += value.delta;
        else if (value.type === "tool-call") calls.push(value);
      }
      if (text !== "") content.push({ type: "text", text });
    } else {
      const result = await model.doGenerate(options);
      for (const part of result.content) {
        if (part.type === "text") content.push({ type: "text", text: part.text });
        else if (part.type === "tool-call") calls.push(part);
      }
    }
    if (calls.length === 0) return turn;
    const results = [];
    for (const call of calls) {
      const input = JSON.parse(call.input);
      content.push({
        type: "tool-call",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        input,
      });
      results.push({
        type: "tool-result",
        toolCallId: call.toolCallId,
        toolName: call.toolName,
        output: { type: "text", value: String(input.n) },
      });
    }
    prompt.push({ role: "assistant", content }, { role: "tool", content: results });
  }
}

/**
 * The bridge alone: the same hand-written loop, calling `fromAiSdk(model).stream()` with
 * Lattice's request and reading Lattice's events (no agent loop).
 */
async function bridgeRun(provider, toolCount, stream) {
  const tools = Array.from({ length: toolCount }, (_, index) => ({
    name: `t${index}`,
    description: "d",
    inputSchema: { type: "object", properties: { n: { type: "number" } }, required: ["n"] },
  }));
  const messages = [{ role: "user", content: "go" }];
  for (let turn = 1; ; turn++) {
    let response;
    for await (const event of provider.stream({
      model: "unused",
      messages,
      tools,
      maxTokens: 4096,
      stream,
      signal: new AbortController().signal,
    })) {
      if (event.type === "response") response = event.response;
    }
    messages.push(response.message);
    const uses = response.message.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) return turn;
    messages.push({
      role: "user",
      content: uses.map((use) => ({
        type: "tool_result",
        tool_use_id: use.id,
        content: String(use.input.n),
      })),
    });
  }
}

async function cpuPerTurn(url, toolCount, stream) {
  const model = `loop-${toolCount}`;
  const common = { model, tools: latticeTools(toolCount), stream, maxTurns: 50 };
  const native = createAgent({
    ...common,
    provider: openaiCompatible({ baseURL: `${url}/v1`, apiKey: "bench" }),
  });
  const bridged = createAgent({ ...common, provider: fromAiSdk(aiSdkModel(url, model)) });
  const aiModel = aiSdkModel(url, model);
  const aiTools = aiSdkTools(toolCount);
  const check = (result) => {
    if (result.numTurns !== TURNS_PER_RUN || result.subtype !== "success") {
      throw new Error(`expected ${TURNS_PER_RUN} successful turns, got ${JSON.stringify(result)}`);
    }
  };
  const floorModel = aiSdkModel(url, model);
  const floorOnce = async () => {
    const turns = await floorRun(floorModel, toolCount, stream);
    if (turns !== TURNS_PER_RUN) throw new Error(`floor: ${turns} turns`);
  };
  const bridgeProvider = fromAiSdk(aiSdkModel(url, model));
  const bridgeLoopOnce = async () => {
    const turns = await bridgeRun(bridgeProvider, toolCount, stream);
    if (turns !== TURNS_PER_RUN) throw new Error(`bridge loop: ${turns} turns`);
  };
  const nativeOnce = async () => check(await native.run("go"));
  const bridgeOnce = async () => check(await bridged.run("go"));
  const aiSdkOnce = async () => {
    const options = {
      model: aiModel,
      tools: aiTools,
      prompt: "go",
      maxOutputTokens: 4096,
      stopWhen: stepCountIs(TURNS_PER_RUN + 1),
    };
    let steps;
    if (stream) {
      const result = streamText(options);
      await result.consumeStream();
      steps = (await result.steps).length;
    } else {
      steps = (await generateText(options)).steps.length;
    }
    if (steps !== TURNS_PER_RUN) throw new Error(`AI SDK loop: ${steps} steps`);
  };
  const runs = quick ? 8 : 20;
  const rounds = quick ? 4 : 8;
  for (let index = 0; index < (quick ? 15 : 40); index++) {
    await nativeOnce();
    await bridgeOnce();
    await aiSdkOnce();
    await floorOnce();
    await bridgeLoopOnce();
  }
  const sample = async (once) => {
    const start = cpuMicros();
    for (let index = 0; index < runs; index++) await once();
    return (cpuMicros() - start) / (runs * TURNS_PER_RUN);
  };
  const nativeSamples = [];
  const bridgeSamples = [];
  const aiSdkSamples = [];
  const floorSamples = [];
  const bridgeLoopSamples = [];
  const ratios = [];
  for (let round = 0; round < rounds; round++) {
    // Rotate which goes first so drift (JIT, GC, a neighbour's load) hits all alike.
    const order = [
      ["native", nativeOnce],
      ["bridge", bridgeOnce],
      ["aiSdk", aiSdkOnce],
      ["floor", floorOnce],
      ["bridgeLoop", bridgeLoopOnce],
    ];
    for (let shift = 0; shift < round % order.length; shift++) order.push(order.shift());
    const figures = {};
    for (const [name, once] of order) figures[name] = await sample(once);
    nativeSamples.push(figures.native);
    bridgeSamples.push(figures.bridge);
    aiSdkSamples.push(figures.aiSdk);
    floorSamples.push(figures.floor);
    bridgeLoopSamples.push(figures.bridgeLoop);
    ratios.push(figures.bridge / figures.native);
  }
  return {
    floorMicros: median(floorSamples),
    bridgeLoopMicros: median(bridgeLoopSamples),
    nativeMicros: median(nativeSamples),
    bridgeMicros: median(bridgeSamples),
    aiSdkLoopMicros: median(aiSdkSamples),
    bridgeOverNative: median(ratios),
  };
}

/**
 * CPU per turn through the AI SDK bridge and the native adapter (and the AI SDK's own loop),
 * streaming and not, with 1 and 10 tools per turn.
 */
export async function runAiSdkBridgeBenchmarks() {
  const server = await startModelServer();
  try {
    return {
      streaming1Tool: await cpuPerTurn(server.url, 1, true),
      nonStreaming1Tool: await cpuPerTurn(server.url, 1, false),
      streaming10Tools: await cpuPerTurn(server.url, 10, true),
    };
  } finally {
    server.close();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const results = await runAiSdkBridgeBenchmarks();
  const us = (value) => `${value.toFixed(1)} µs`;
  console.log(
    "\n## AI SDK bridge: CPU per turn (scripted OpenAI-compatible server, 21 turns per run)\n",
  );
  console.log(
    "| measure | floor: hand loop over the AI SDK model | hand loop over fromAiSdk(model) | agent on fromAiSdk(model) | agent on native openaiCompatible | bridge agent ÷ native agent | AI SDK's own loop |\n|---|---|---|---|---|---|---|",
  );
  for (const [key, label] of [
    ["streaming1Tool", "streaming, 1 tool"],
    ["nonStreaming1Tool", "non-streaming, 1 tool"],
    ["streaming10Tools", "streaming, 10 tools"],
  ]) {
    const figure = results[key];
    console.log(
      `| ${label} | ${us(figure.floorMicros)} | ${us(figure.bridgeLoopMicros)} | ${us(figure.bridgeMicros)} | ${us(figure.nativeMicros)} | ${figure.bridgeOverNative.toFixed(2)} | ${us(figure.aiSdkLoopMicros)} |`,
    );
  }
  console.log(`\n${JSON.stringify(results, null, 2)}`);
}
