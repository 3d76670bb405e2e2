import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  createAgent,
  jsonlTraceWriter,
  type SDKResultMessage,
  type TraceEvent,
} from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { offlineTurn } from "./offline-script.js";
import {
  calculator,
  finish,
  incrementRevision,
  notifyTeam,
  revisionPolicy,
  search,
} from "./tools.js";

const PROMPT =
  "We want 8 seats of the team plan. Look up pricing, limits and regions, compute the monthly total, " +
  "bump the document revision and notify the team about it, then call finish with the answer.";

/** Where the quickstart prints; `console.log` by default, a collector in tests. */
export type Print = (line: string) => void;

/**
 * Runs the quickstart: offline against the scripted model server unless DEEPSEEK_API_KEY or
 * ANTHROPIC_API_KEY is set. Returns the run's result message.
 */
export async function runQuickstart(
  print: Print = (line) => console.log(line),
  write: (text: string) => void = (text) => process.stdout.write(text),
  env: Record<string, string | undefined> = process.env,
) {
  const deepseekKey = env.DEEPSEEK_API_KEY;
  const anthropicKey = env.ANTHROPIC_API_KEY;
  const server =
    deepseekKey || anthropicKey
      ? undefined
      : await createScriptedModelServer({ respond: offlineTurn });

  const endpoint = server
    ? { apiKey: "offline", baseURL: server.anthropicBaseURL, model: "scripted-model" }
    : deepseekKey
      ? {
          apiKey: deepseekKey,
          baseURL: "https://api.deepseek.com/anthropic",
          model: "deepseek-v4-flash",
        }
      : { apiKey: anthropicKey, model: "claude-sonnet-4-6" };
  print(
    server
      ? `Lattice quickstart: offline, against the scripted model server at ${server.url} (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY to use a real model)`
      : `Lattice quickstart: live, ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
  );

  let runStart = 0;
  const names: string[] = [];
  const since = (time: number) => `${Math.round(time - runStart)}`.padStart(5);
  const onTrace = (event: TraceEvent): void => {
    switch (event.type) {
      case "run_started":
        runStart = event.time;
        break;
      case "tool_call_queued":
        names[event.index] = event.name;
        break;
      case "batch_planned":
        print(
          `\n${since(event.time)} ms  plan: ${event.plan.runs
            .map((run) => `[${run.indices.map((index) => names[index]).join(" ‖ ")}]`)
            .join(" → ")}`,
        );
        break;
      case "batch_policy":
        if (event.decision && !event.decision.allowed) {
          print(
            `\n${since(event.time)} ms  policy refused the batch: ${event.decision.code}: ${event.decision.message}`,
          );
        }
        break;
      case "tool_call_started":
        print(`${since(event.time)} ms  ▶ ${event.name} (${event.id}) started`);
        break;
      case "tool_call_finished":
        if (event.status === "refused") break;
        print(
          `${since(event.time)} ms  ■ ${event.name} (${event.id}) ${event.isError ? "failed" : "finished"} after ${Math.round(event.durationMs)} ms`,
        );
        break;
    }
  };

  // The whole trace also goes to a JSON Lines file, which `lattice-trace timeline` draws.
  const traceFile = env.LATTICE_TRACE ?? join(tmpdir(), `lattice-quickstart-${process.pid}.jsonl`);
  const traceWriter = jsonlTraceWriter(traceFile);
  const agent = createAgent({
    ...endpoint,
    tools: [search, calculator, incrementRevision, notifyTeam, finish],
    toolConcurrency: { mode: "safe", maxConcurrency: 8 },
    toolBatchPolicy: revisionPolicy,
    includePartialMessages: true,
    onTrace: (event) => {
      onTrace(event);
      traceWriter.onTrace(event);
    },
    maxTurns: 10,
  });

  let result: SDKResultMessage | undefined;
  try {
    for await (const message of agent.query(PROMPT)) {
      if (message.type === "stream_event" && message.event.type === "text_delta") {
        write(message.event.text);
      } else if (message.type === "user") {
        for (const block of message.message.content) {
          const text =
            typeof block.content === "string"
              ? block.content
              : block.content
                  .map((part) => (part.type === "text" ? part.text : "[image]"))
                  .join("");
          print(
            `        ${block.is_error ? "✗" : "✓"} ${block.tool_use_id}: ${text.replaceAll("\n", "\n          ")}`,
          );
        }
      } else if (message.type === "result") {
        result = message;
        print(
          `\nresult (${message.subtype}, ${message.numTurns} ${message.numTurns === 1 ? "turn" : "turns"}, ${Math.round(message.durationMs)} ms):`,
        );
        print(`  ${message.result}`);
        print(`  structuredResult: ${JSON.stringify(message.structuredResult)}`);
        print(`  usage: ${message.usage.inputTokens} in / ${message.usage.outputTokens} out`);
        if (message.isError) {
          print(`  errors: ${message.errors.join("; ")}`);
        }
      }
    }
  } finally {
    await server?.close();
    await traceWriter.close();
  }
  print(`\ntrace: ${traceFile}\n  draw its tool timeline: npx lattice-trace timeline ${traceFile}`);
  return result;
}
