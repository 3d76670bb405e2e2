// O6 benchmark (not a test): CPU per model turn of an agent whose trace goes to OpenTelemetry
// spans (`@lattice/otel`) and an InMemorySpanExporter, beside two floors measured in the same
// process. The observability contract's O6 (restated) asks for:
//   (a) otelObserver → BatchSpanProcessor → InMemorySpanExporter ≤ 1.10 × the "bare SDK" floor
//       (the same spans with the O3 required attributes made directly on the SDK, no observer,
//       behind the same processor and exporter): `batch ÷ bareBatch`;
//   (b) otelObserver() with no tracer provider registered ≤ 1.02 × untraced:
//       `noProvider ÷ untraced`.
// Run from the repository root after building the packages:
//
//   node bench/otel.bench.mjs [--quick] [--otel-dist <other build's packages/otel/dist>]
//
// The scripted model server of agent.bench.mjs (bench/model-server.mjs, in a child process, so
// that process CPU here is the client's alone) answers `loop-<calls>`: 20 turns each calling
// tools t0..t<calls-1> once, then a final text (21 model turns per run). Each of 1 and 10 tools,
// streaming and not, runs these variants:
//   untraced       no onTrace: the baseline
//   emptyListener  onTrace: () => {} (what core's trace events cost, whoever listens)
//   noProvider     otelObserver() with no tracer provider registered (O1: costs nothing
//                  measurable)
//   simple         otelObserver → SimpleSpanProcessor → InMemorySpanExporter (the O6 figure)
//   batch          otelObserver → BatchSpanProcessor (defaults) → InMemorySpanExporter
//   bareSimple     the same spans with the O3 required attributes and the queued event, made
//                  straight on the SDK (no observer), through the SimpleSpanProcessor
//   bareBatch      the same, through a BatchSpanProcessor: the floor of O6 (a)
//   noExport       otelObserver → a processor that drops every span: the observer and the SDK's
//                  span work, without any export
//   simpleSync     otelObserver → SimpleSpanProcessor → an in-memory exporter that answers at
//                  once (the SDK's InMemorySpanExporter answers each export with a
//                  setTimeout(0): behind a SimpleSpanProcessor, one timer per span)
// and, with --otel-dist, `noProviderOther` / `batchOther` through that other build of the
// observer (before/after comparisons of a change, alternating in one process).
// Each run is measured with the export of its spans (a forceFlush of its processor, so that
// spans still queued are this run's work; then the exporter forgets them). After a warm-up,
// a round runs every variant `runs` times, the variants taking turns run by run in an order
// rotated each time, so that drift (JIT, GC, a neighbour's load) hits every variant alike. A
// figure is the median of the rounds' CPU per turn; a ratio is the median of the rounds'
// ratios to `untraced` (and, for O6 (a), of the rounds' `batch ÷ bareBatch`).
import { createRequire } from "node:module";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createAgent, tool } from "agent-lattice";
import { z } from "zod/v4";
import { startModelServer } from "./agent.bench.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, "..");
const quick = process.argv.includes("--quick");
const otherAt = process.argv.indexOf("--otel-dist");
const otherDist = otherAt === -1 ? undefined : resolve(process.argv[otherAt + 1]);
const TURNS_PER_RUN = 21;
/** O6 (a): observer behind a BatchSpanProcessor ÷ the bare-SDK floor. */
const GOAL_FLOOR = 1.1;
/** O6 (b): observer with no tracer provider ÷ untraced. */
const GOAL_NO_PROVIDER = 1.02;

// @lattice/otel and the OpenTelemetry SDK are the otel package's (dev) dependencies, not the
// bench's: load them from there, so that one @opentelemetry/api serves both.
const otelRequire = createRequire(join(root, "packages/otel/package.json"));
const { BasicTracerProvider, BatchSpanProcessor, InMemorySpanExporter, SimpleSpanProcessor } =
  otelRequire("@opentelemetry/sdk-trace-base");
const api = otelRequire("@opentelemetry/api");
const { otelObserver } = await import(
  pathToFileURL(join(root, "packages/otel/dist/index.js")).href
);
const other =
  otherDist === undefined
    ? undefined
    : (await import(pathToFileURL(join(otherDist, "index.js")).href)).otelObserver;

const median = (values) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
};
const cpuMicros = () => {
  const usage = process.cpuUsage();
  return usage.user + usage.system;
};

/** An in-memory exporter that answers each export at once (InMemorySpanExporter waits a timer). */
class ImmediateMemoryExporter {
  spans = [];
  export(spans, done) {
    for (const span of spans) this.spans.push(span);
    done({ code: 0 });
  }
  getFinishedSpans() {
    return this.spans;
  }
  reset() {
    this.spans = [];
  }
  async forceFlush() {}
  async shutdown() {}
}

/** A processor that drops every span (and counts them, for the check of `once`). */
function droppingProcessor() {
  let count = 0;
  return {
    onStart() {},
    onEnd() {
      count++;
    },
    async forceFlush() {},
    async shutdown() {},
    take() {
      const taken = count;
      count = 0;
      return taken;
    },
  };
}

/** A tracer provider with one processor in front of its own in-memory exporter. */
function pipeline(kind) {
  if (kind === "drop") {
    const processor = droppingProcessor();
    const provider = new BasicTracerProvider({ spanProcessors: [processor] });
    return {
      tracer: provider.getTracer("bench"),
      drain: async () => processor.take(),
      shutdown: () => provider.shutdown(),
    };
  }
  const exporter =
    kind === "simpleSync" ? new ImmediateMemoryExporter() : new InMemorySpanExporter();
  const processor =
    kind === "batch" ? new BatchSpanProcessor(exporter) : new SimpleSpanProcessor(exporter);
  const provider = new BasicTracerProvider({ spanProcessors: [processor] });
  return {
    tracer: provider.getTracer("bench"),
    /** Exports what is queued (inside the measured time), then forgets the spans. */
    async drain() {
      await processor.forceFlush();
      const count = exporter.getFinishedSpans().length;
      exporter.reset();
      return count;
    },
    shutdown: () => provider.shutdown(),
  };
}

/**
 * The floor of O6 (a): what an instrumentation written straight on the SDK, with no observer,
 * would make of the run: a span per run, model call and tool call, parented and timed like the
 * observer's (a tool's span covers its handler's run, O2a; a call that never ran is a span of
 * no length), with the O3 required attributes (those `gen_ai.*` that apply, and
 * `lattice.tool.queued_ms`, `lattice.tool.concurrency_safe`, `lattice.batch.plan`,
 * `lattice.run.subtype`), the HTTP request id (`lattice.provider.request_id`) and the
 * `lattice.tool.queued` event. Its cost is the SDK's and the processor's, the floor under the
 * observer. (The observer sets more `lattice.*` facts than these: turn, batch index, status,
 * durations, counts; their cost is the observer's own.)
 */
function bareSpans({ tracer, agentName }) {
  const epoch = (time) => performance.timeOrigin + time;
  const runs = new Map();
  return {
    onTrace(event) {
      if (event.type === "run_started") {
        const attributes = {
          "gen_ai.operation.name": "invoke_agent",
          "gen_ai.conversation.id": event.sessionId,
          "gen_ai.request.model": event.model,
          "gen_ai.agent.name": agentName,
          "gen_ai.provider.name": event.provider,
        };
        const span = tracer.startSpan(`invoke_agent ${agentName}`, {
          startTime: epoch(event.time),
          attributes,
        });
        const context = api.trace.setSpan(api.context.active(), span);
        runs.set(event.runId, {
          span,
          context,
          model: event.model,
          provider: event.provider,
          chat: undefined,
          tools: new Map(),
          batch: [],
        });
        return;
      }
      const run = runs.get(event.runId);
      if (run === undefined) return;
      switch (event.type) {
        case "model_request_started":
          run.chat = tracer.startSpan(
            `chat ${run.model}`,
            {
              kind: api.SpanKind.CLIENT,
              startTime: epoch(event.time),
              attributes: {
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": run.model,
                "gen_ai.provider.name": run.provider,
              },
            },
            run.context,
          );
          run.chat.setAttribute("gen_ai.request.max_tokens", event.maxTokens);
          break;
        case "model_request_finished": {
          const usage = event.usage;
          const attributes = {
            "gen_ai.conversation.id": event.sessionId,
            "gen_ai.response.finish_reasons": [event.stopReason],
            "gen_ai.usage.input_tokens":
              usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
            "gen_ai.usage.output_tokens": usage.outputTokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cacheReadInputTokens,
            "gen_ai.usage.cache_creation.input_tokens": usage.cacheCreationInputTokens,
          };
          if (event.responseId !== undefined) attributes["gen_ai.response.id"] = event.responseId;
          if (event.responseModel !== undefined)
            attributes["gen_ai.response.model"] = event.responseModel;
          if (event.requestId !== undefined)
            attributes["lattice.provider.request_id"] = event.requestId;
          run.chat.setAttributes(attributes);
          run.chat.end(epoch(event.time));
          break;
        }
        case "tool_call_queued": {
          if (event.index === 0) run.batch = [];
          const call = { queued: event.time, startedAt: 0, span: undefined, plan: undefined };
          run.tools.set(event.id, call);
          run.batch[event.index] = call;
          break;
        }
        case "batch_planned": {
          const plan = JSON.stringify(event.plan);
          for (const batchRun of event.plan.runs) {
            const planned = { plan, concurrent: batchRun.concurrent };
            for (const index of batchRun.indices) run.batch[index].plan = planned;
          }
          break;
        }
        case "tool_call_started": {
          const call = run.tools.get(event.id);
          call.span = toolSpan(run, event, call, event.time);
          break;
        }
        case "tool_call_finished": {
          const call = run.tools.get(event.id);
          const span = call.span ?? toolSpan(run, event, call, event.time);
          const attributes = {
            "gen_ai.tool.call.id": event.id,
            "gen_ai.tool.type": event.kind === "mcp" ? "extension" : "function",
            "lattice.tool.queued_ms": call.startedAt - call.queued,
          };
          if (call.plan !== undefined) {
            attributes["lattice.tool.concurrency_safe"] = call.plan.concurrent;
            attributes["lattice.batch.plan"] = call.plan.plan;
          }
          span.setAttributes(attributes);
          span.end(epoch(event.time));
          run.tools.delete(event.id);
          break;
        }
        case "run_finished": {
          const usage = event.usage;
          run.span.setAttributes({
            "lattice.run.subtype": event.subtype,
            "gen_ai.usage.input_tokens":
              usage.inputTokens + usage.cacheReadInputTokens + usage.cacheCreationInputTokens,
            "gen_ai.usage.output_tokens": usage.outputTokens,
            "gen_ai.usage.cache_read.input_tokens": usage.cacheReadInputTokens,
            "gen_ai.usage.cache_creation.input_tokens": usage.cacheCreationInputTokens,
          });
          run.span.end(epoch(event.time));
          runs.delete(event.runId);
          break;
        }
      }
    },
  };
  function toolSpan(run, event, call, time) {
    call.startedAt = time;
    const span = tracer.startSpan(
      `execute_tool ${event.name}`,
      {
        startTime: epoch(time),
        attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": event.name },
      },
      run.context,
    );
    span.addEvent("lattice.tool.queued", epoch(call.queued));
    return span;
  }
}

function makeAgent(url, toolCount, stream, onTrace) {
  return createAgent({
    apiKey: "bench",
    baseURL: url,
    model: `loop-${toolCount}`,
    stream,
    maxTurns: 50,
    tools: Array.from({ length: toolCount }, (_, index) =>
      tool(`t${index}`, "d", z.object({ n: z.number() }), ({ n }) => ({ content: String(n) }), {
        isConcurrencySafe: () => true,
      }),
    ),
    ...(onTrace !== undefined ? { onTrace } : {}),
  });
}

async function measure(url, toolCount, stream) {
  const pipelines = [];
  const variant = (observe, kind) => {
    const traced = pipeline(kind);
    pipelines.push(traced);
    return {
      agent: makeAgent(
        url,
        toolCount,
        stream,
        observe({ agentName: "bench", tracer: traced.tracer }).onTrace,
      ),
      drain: traced.drain,
    };
  };
  const variants = {
    untraced: { agent: makeAgent(url, toolCount, stream) },
    emptyListener: { agent: makeAgent(url, toolCount, stream, () => {}) },
    noProvider: { agent: makeAgent(url, toolCount, stream, otelObserver().onTrace) },
    simple: variant(otelObserver, "simple"),
    batch: variant(otelObserver, "batch"),
    bareSimple: variant(bareSpans, "simple"),
    bareBatch: variant(bareSpans, "batch"),
    noExport: variant(otelObserver, "drop"),
    simpleSync: variant(otelObserver, "simpleSync"),
    ...(other !== undefined
      ? {
          noProviderOther: { agent: makeAgent(url, toolCount, stream, other().onTrace) },
          batchOther: variant(other, "batch"),
        }
      : {}),
  };
  const names = Object.keys(variants);
  const runs = quick ? 8 : 20;
  const rounds = quick ? 7 : 15;
  // Spans per run: one invoke_agent, 21 chat, 20 × toolCount execute_tool.
  const spansPerRun = 1 + TURNS_PER_RUN + (TURNS_PER_RUN - 1) * toolCount;
  /** One run and the export of its spans; its CPU time in µs. */
  const once = async (name) => {
    const start = cpuMicros();
    const result = await variants[name].agent.run("go");
    const spans = await variants[name].drain?.();
    const elapsed = cpuMicros() - start;
    if (result.numTurns !== TURNS_PER_RUN)
      throw new Error(`expected ${TURNS_PER_RUN} turns, got ${result.numTurns}`);
    if (spans !== undefined && spans !== spansPerRun)
      throw new Error(`${name}: expected ${spansPerRun} spans, exported ${spans}`);
    return elapsed;
  };
  for (let index = 0; index < (quick ? 15 : 40); index++)
    for (const name of names) await once(name);
  const samples = Object.fromEntries(names.map((name) => [name, []]));
  const ratios = Object.fromEntries(names.map((name) => [name, []]));
  /** O6 (a): the observer behind a BatchSpanProcessor ÷ the bare-SDK floor, per round. */
  const floorNames = names.filter((name) => name === "batch" || name === "batchOther");
  const floorRatios = Object.fromEntries(floorNames.map((name) => [name, []]));
  for (let round = 0; round < rounds; round++) {
    const total = Object.fromEntries(names.map((name) => [name, 0]));
    // Run by run, the variants take turns (in an order rotated every time), so that drift
    // (JIT, GC, a neighbour's load) hits every variant alike.
    for (let index = 0; index < runs; index++) {
      const shift = round * runs + index;
      for (let position = 0; position < names.length; position++) {
        const name = names[(position + shift) % names.length];
        total[name] += await once(name);
      }
    }
    for (const name of names) {
      samples[name].push(total[name] / (runs * TURNS_PER_RUN));
      ratios[name].push(total[name] / total.untraced);
    }
    for (const name of floorNames) floorRatios[name].push(total[name] / total.bareBatch);
  }
  await Promise.all(pipelines.map((traced) => traced.shutdown()));
  const row = { tools: toolCount, stream };
  for (const name of names) row[`${name} µs`] = Math.round(median(samples[name]));
  for (const name of names)
    if (name !== "untraced") row[`${name} ÷ untraced`] = Number(median(ratios[name]).toFixed(3));
  for (const name of floorNames)
    row[`${name} ÷ bareBatch`] = Number(median(floorRatios[name]).toFixed(3));
  return row;
}

const server = await startModelServer();
try {
  const rows = [];
  for (const [toolCount, stream] of [
    [1, false],
    [10, false],
    [1, true],
    [10, true],
  ]) {
    rows.push(await measure(server.url, toolCount, stream));
  }
  console.table(rows);
  const met = (ratio, goal) => (ratio <= goal ? "met" : "NOT met");
  for (const row of rows) {
    const label = `${row.tools} tool${row.tools === 1 ? "" : "s"}, ${row.stream ? "streaming" : "non-streaming"}`;
    const floor = row["batch ÷ bareBatch"];
    const noProvider = row["noProvider ÷ untraced"];
    console.log(
      `O6 (a) ${label}: otel (BatchSpanProcessor, in-memory) ÷ bare SDK spans (same spans, O3 attributes, same processor) = ${floor.toFixed(2)}, goal ≤ ${GOAL_FLOOR.toFixed(2)}: ${met(floor, GOAL_FLOOR)}${row["batchOther ÷ bareBatch"] !== undefined ? ` (other build ${row["batchOther ÷ bareBatch"].toFixed(2)})` : ""}`,
    );
    console.log(
      `O6 (b) ${label}: otel, no tracer provider ÷ untraced = ${noProvider.toFixed(2)}, goal ≤ ${GOAL_NO_PROVIDER.toFixed(2)}: ${met(noProvider, GOAL_NO_PROVIDER)}${row["noProviderOther ÷ untraced"] !== undefined ? ` (other build ${row["noProviderOther ÷ untraced"].toFixed(2)})` : ""}`,
    );
    console.log(
      `   ${label}, ÷ untraced: empty onTrace ${row["emptyListener ÷ untraced"].toFixed(2)}, otel Simple ${row["simple ÷ untraced"].toFixed(2)}, otel Batch ${row["batch ÷ untraced"].toFixed(2)}, bare SDK Simple ${row["bareSimple ÷ untraced"].toFixed(2)}, bare SDK Batch ${row["bareBatch ÷ untraced"].toFixed(2)}, otel no export ${row["noExport ÷ untraced"].toFixed(2)}, otel Simple with an exporter that answers at once ${row["simpleSync ÷ untraced"].toFixed(2)}`,
    );
  }
  console.log(JSON.stringify({ bench: "otel", quick, otherDist, rows }));
} finally {
  server.close();
}
