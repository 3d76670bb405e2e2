import { createRequire } from "node:module";
import { mcpServer } from "@lattice/mcp";
import { createAgent, type SDKResultMessage, type TraceEvent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { countWords } from "./local-tools.js";
import { offlineTurn } from "./offline-script.js";

/** Where the script prints; `console.log` by default, a collector in tests. */
export type Print = (line: string) => void;

const PROMPT =
  "Echo 'hello from Lattice', add 19 and 23, count the words of 'tools from two worlds, one agent', " +
  "then tell me the weather in Chicago.";

/** The server-everything launcher, run with this Node: `node <bin> stdio`. */
const everythingBin = createRequire(import.meta.url).resolve(
  "@modelcontextprotocol/server-everything/dist/index.js",
);

/**
 * Script 1: an agent whose tools are three tools of a real third-party MCP server
 * (`@modelcontextprotocol/server-everything`, over stdio) next to one tool of its own. Offline
 * on the scripted model server unless DEEPSEEK_API_KEY or ANTHROPIC_API_KEY is set. Prints
 * each call and its result, then the run's result.
 */
export async function runAgentWithEverything(
  print: Print = (line) => console.log(line),
  env: Record<string, string | undefined> = process.env,
): Promise<SDKResultMessage | undefined> {
  const deepseekKey = env.DEEPSEEK_API_KEY;
  const anthropicKey = env.ANTHROPIC_API_KEY;
  const model =
    deepseekKey || anthropicKey
      ? undefined
      : await createScriptedModelServer({ respond: offlineTurn });
  const endpoint = model
    ? { apiKey: "offline", baseURL: model.anthropicBaseURL, model: "scripted-model" }
    : deepseekKey
      ? {
          apiKey: deepseekKey,
          baseURL: "https://api.deepseek.com/anthropic",
          model: "deepseek-v4-flash",
        }
      : { apiKey: anthropicKey, model: "claude-sonnet-4-6" };
  print(
    model
      ? `MCP agent: offline, against the scripted model server at ${model.url}`
      : `MCP agent: live, ${endpoint.model}`,
  );

  // A tool source: the server starts on the first run that needs it, and agent.close() ends it.
  const everything = mcpServer({
    name: "everything",
    command: process.execPath,
    args: [everythingBin, "stdio"],
    include: ["echo", "get-sum", "get-structured-content"],
  });
  const names = new Map<string, string>();
  const queued: string[] = [];
  const onTrace = (event: TraceEvent): void => {
    if (event.type === "tool_call_queued") queued[event.index] = event.name;
    if (event.type === "batch_planned") {
      // Read-only MCP tools (readOnlyHint) and countWords may overlap: one run, "‖" together.
      const runs = event.plan.runs.map((run) => run.indices.map((index) => queued[index]));
      print(`  plan: ${runs.map((run) => `[${run.join(" ‖ ")}]`).join(" → ")}`);
    }
  };
  const agent = createAgent({
    ...endpoint,
    name: "assistant",
    tools: [everything, countWords],
    toolConcurrency: { mode: "safe", maxConcurrency: 4 },
    onTrace,
    maxTurns: 6,
  });

  let result: SDKResultMessage | undefined;
  try {
    for await (const message of agent.query(PROMPT)) {
      if (message.type === "system" && message.subtype === "init") {
        print(`tools: ${message.tools.join(", ")}`);
      } else if (message.type === "assistant") {
        for (const block of message.message.content) {
          if (block.type === "text") print(`\nmodel: ${block.text}`);
          if (block.type === "tool_use") {
            names.set(block.id, block.name);
            print(`  → ${block.name} ${JSON.stringify(block.input)}`);
          }
        }
      } else if (message.type === "user") {
        for (const block of message.message.content) {
          const text =
            typeof block.content === "string"
              ? block.content
              : block.content
                  .map((part) => (part.type === "text" ? part.text : "[image]"))
                  .join(" ");
          const name = names.get(block.tool_use_id) ?? block.tool_use_id;
          print(`  ${block.is_error ? "✗" : "←"} ${name}: ${text.replaceAll("\n", " ")}`);
        }
      } else if (message.type === "result") {
        result = message;
        print(`\nresult (${message.subtype}, ${message.numTurns} turns): ${message.result}`);
        if (message.isError) print(`errors: ${message.errors.join("; ")}`);
      }
    }
  } finally {
    await agent.close();
    await model?.close();
  }
  return result;
}
