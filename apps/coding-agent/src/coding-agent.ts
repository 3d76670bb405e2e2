import { cp, mkdtemp, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import {
  createAgent,
  jsonlTraceWriter,
  type SDKResultMessage,
  type TraceEvent,
} from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { offlineTurn } from "./offline-script.js";

const SAMPLE_PROJECT = fileURLToPath(new URL("../sample-project/", import.meta.url));

const TASK =
  "README.md describes two bugs in this project. Fix both with the smallest edits, then add a CHANGELOG.md with one line per fix. Read what you need first.";

const SYSTEM_PROMPT =
  "You are a careful coding agent working in a small TypeScript project. Use the tools to look before you change anything. Keep edits minimal.";

/** Where the demo prints; `console.log` by default, a collector in tests. */
export type Print = (line: string) => void;

/** One tool call's timing, from the trace. */
export interface CallTiming {
  readonly id: string;
  readonly name: string;
  /** Milliseconds since the run started. */
  readonly start: number;
  readonly end: number;
  /** Handlers of the batch running when this one started, this one included. */
  readonly inFlight: number;
  readonly isError: boolean;
}

/** What the demo returns. */
export interface CodingAgentResult {
  readonly result: SDKResultMessage | undefined;
  /** Every tool call with its timing, in the order they finished. */
  readonly calls: readonly CallTiming[];
  /** The project's files after the run, by path relative to the project. */
  readonly files: Readonly<Record<string, string>>;
}

/**
 * Runs the coding agent on a temporary copy of `sample-project/`: offline against the scripted
 * model server unless DEEPSEEK_API_KEY or ANTHROPIC_API_KEY is set. Prints each batch's plan
 * and each call as it starts and ends, then the files that changed. The copy is removed at
 * the end unless KEEP_WORKDIR is set.
 */
export async function runCodingAgent(
  print: Print = (line) => console.log(line),
  env: Record<string, string | undefined> = process.env,
): Promise<CodingAgentResult> {
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

  const workdir = await mkdtemp(join(tmpdir(), "lattice-coding-agent-"));
  await cp(SAMPLE_PROJECT, workdir, { recursive: true });
  const before = await readProject(workdir);
  print(
    server
      ? `Lattice coding agent: offline, against the scripted model server at ${server.url} (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY to use a real model)`
      : `Lattice coding agent: live, ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
  );
  print(`Working on a copy of sample-project in ${workdir}`);
  print(`Task: ${TASK}`);

  const calls: CallTiming[] = [];
  const { onTrace: printTimeline } = createTimeline(print, calls);
  // The whole trace also goes to a JSON Lines file, which `lattice-trace timeline` draws.
  const traceFile =
    env.LATTICE_TRACE ?? join(tmpdir(), `lattice-coding-agent-${process.pid}.jsonl`);
  const traceWriter = jsonlTraceWriter(traceFile);
  const onTrace = (event: TraceEvent): void => {
    printTimeline(event);
    traceWriter.onTrace(event);
  };
  const agent = createAgent({
    ...endpoint,
    systemPrompt: SYSTEM_PROMPT,
    builtinTools: ["Read", "LS", "Glob", "Grep", "Write", "Edit"],
    cwd: workdir,
    onTrace,
    maxTurns: 15,
  });

  let result: SDKResultMessage | undefined;
  let files: Record<string, string> = {};
  try {
    for await (const message of agent.query(TASK)) {
      if (message.type === "assistant") {
        for (const block of message.message.content) {
          if (block.type === "text" && block.text.trim() !== "") print(`\nmodel: ${block.text}`);
        }
      } else if (message.type === "user") {
        for (const block of message.message.content) {
          if (block.is_error) print(`        ✗ ${block.tool_use_id}: ${textOf(block.content)}`);
        }
      } else if (message.type === "result") {
        result = message;
      }
    }
    files = await readProject(workdir);
  } finally {
    await server?.close();
    await traceWriter.close();
    if (env.KEEP_WORKDIR === undefined) await rm(workdir, { recursive: true, force: true });
  }
  print(`\ntrace: ${traceFile}\n  draw its tool timeline: npx lattice-trace timeline ${traceFile}`);

  print("\nChanged files:");
  for (const [path, content] of Object.entries(files)) {
    if (before[path] === content) continue;
    print(`  ${before[path] === undefined ? "+" : "~"} ${path}`);
    for (const line of content.trimEnd().split("\n")) print(`      ${line}`);
  }
  const reads = calls.filter((call) => ["Read", "LS", "Glob", "Grep"].includes(call.name));
  const writes = calls.filter((call) => ["Write", "Edit"].includes(call.name));
  print(
    `\nReads, listings and searches: ${reads.length} calls, up to ${Math.max(0, ...reads.map((call) => call.inFlight))} at once. Writes and edits: ${writes.length} calls, up to ${Math.max(0, ...writes.map((call) => call.inFlight))} at once.`,
  );
  if (result !== undefined) {
    print(
      `Result (${result.subtype}, ${result.numTurns} ${result.numTurns === 1 ? "turn" : "turns"}, ${Math.round(result.durationMs)} ms): ${result.result}`,
    );
  }
  return { result, calls, files };
}

/** Prints each batch's plan and each call's start and end, and records the timings. */
function createTimeline(print: Print, calls: CallTiming[]) {
  let runStart = 0;
  const names: string[] = [];
  const started = new Map<string, { time: number; inFlight: number }>();
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
          `${since(event.time)} ms  plan: ${event.plan.runs
            .map((run) => `[${run.indices.map((index) => names[index]).join(" ‖ ")}]`)
            .join(" → ")}`,
        );
        break;
      case "tool_call_started":
        started.set(event.id, { time: event.time, inFlight: event.inFlight });
        print(`${since(event.time)} ms  ▶ ${event.name} (${event.inFlight} running)`);
        break;
      case "tool_call_finished": {
        const start = started.get(event.id);
        print(
          `${since(event.time)} ms  ■ ${event.name} ${event.isError ? "failed" : "done"} after ${event.durationMs.toFixed(1)} ms`,
        );
        if (start !== undefined) {
          calls.push({
            id: event.id,
            name: event.name,
            start: start.time - runStart,
            end: event.time - runStart,
            inFlight: start.inFlight,
            isError: event.isError,
          });
        }
        break;
      }
    }
  };
  return { onTrace };
}

async function readProject(root: string): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const entry of await readdir(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const path = join(entry.parentPath, entry.name);
    files[relative(root, path)] = await readFile(path, "utf8");
  }
  return files;
}

function textOf(content: string | ReadonlyArray<{ type: string; text?: string }>): string {
  return typeof content === "string"
    ? content
    : content.map((part) => (part.type === "text" ? (part.text ?? "") : "[image]")).join("");
}
