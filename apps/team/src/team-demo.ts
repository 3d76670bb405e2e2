import { createTeam, type SDKResultMessage, type TeamEvent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { lead, researcher, writer } from "./members.js";
import { offlineTurn } from "./offline-script.js";

const TASK = "Prepare a one-paragraph brief for visitors about the tides at Mont-Saint-Michel.";

/** Where the demo prints; `console.log` by default, a collector in tests. */
export type Print = (line: string) => void;

/** What the demo returns. */
export interface TeamDemoResult {
  /** The last result of the lead: its answer once the writer's brief came back. */
  readonly final: SDKResultMessage | undefined;
  /** Runs the team started, in order, as `member:runId`. */
  readonly runs: readonly string[];
}

/**
 * Runs the team demo: offline against the scripted model server unless DEEPSEEK_API_KEY or
 * ANTHROPIC_API_KEY is set. Prints who did what, in order, and resolves once the team is idle.
 */
export async function runTeamDemo(
  print: Print = (line) => console.log(line),
  env: Record<string, string | undefined> = process.env,
): Promise<TeamDemoResult> {
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
      ? `Lattice team: offline, against the scripted model server at ${server.url} (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY to use a real model)`
      : `Lattice team: live, ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
  );
  print(`Task for lead: ${TASK}\n`);

  const narrator = createNarrator(print);
  const team = createTeam({
    members: [lead, researcher, writer],
    ...endpoint,
    onEvent: narrator.onEvent,
  });
  try {
    await team.run("lead", TASK);
    await team.idle();
  } finally {
    await server?.close();
  }
  const usage = narrator.usage();
  const final = narrator.final();
  if (final !== undefined) {
    print("");
    print(`The lead's final answer:\n${final.result}`);
  }
  print("");
  print(
    `Team idle after ${narrator.runs.length} runs (${narrator.runs.join(", ")}); usage ${usage.inputTokens} in / ${usage.outputTokens} out.`,
  );
  return { final, runs: narrator.runs };
}

/** Turns team events into one line per thing a member did. */
function createNarrator(print: Print) {
  const runs: string[] = [];
  /** tool_use id → the tool's name and, for agent tools, the agent it runs. */
  const calls = new Map<string, { tool: string; agent?: string }>();
  /** tool_use id of an agent tool call → how deep its agent stands. */
  const depths = new Map<string, number>();
  let final: SDKResultMessage | undefined;
  let inputTokens = 0;
  let outputTokens = 0;

  const line = (who: string, depth: number, text: string): void =>
    print(`${who.padEnd(10)} │ ${"  ".repeat(depth)}${text}`);

  const onEvent = (event: TeamEvent): void => {
    switch (event.type) {
      case "run_started": {
        runs.push(`${event.member}:${event.runId}`);
        const { mail } = event;
        const what =
          mail.kind === "reply"
            ? `reply from ${mail.from}: ${quote(mail.result ?? "")}`
            : mail.from === "user"
              ? `task from the user: ${quote(mail.task)}`
              : `task handed off by ${mail.from}: ${quote(mail.task)}`;
        line(event.member, 0, `▶ starts ${event.runId} on a ${what}`);
        break;
      }
      case "mail_posted":
        if (event.mail.kind === "reply") {
          line(event.mail.from, 0, `✉ replies to ${event.mail.to} (${event.mail.inReplyTo})`);
        }
        break;
      case "mail_delivered":
        line(event.member, 0, `✉ reads ${event.mail.from}'s reply during its run`);
        break;
      case "run_finished":
        inputTokens += event.result.usage.inputTokens;
        outputTokens += event.result.usage.outputTokens;
        if (event.member === "lead") final = event.result;
        line(
          event.member,
          0,
          `■ finishes ${event.runId} (${event.result.subtype}, ${event.result.numTurns} ${event.result.numTurns === 1 ? "turn" : "turns"}): ${quote(event.result.result)}`,
        );
        break;
      case "run_failed":
        line(event.member, 0, `✗ ${event.runId} failed: ${String(event.error)}`);
        break;
      case "agent_message": {
        const { message } = event;
        const parent = message.parentToolUseId;
        const who = parent === null ? event.member : (calls.get(parent)?.agent ?? "?");
        const depth = parent === null ? 0 : (depths.get(parent) ?? 1);
        if (message.type === "assistant") {
          for (const block of message.message.content) {
            if (block.type === "text" && block.text.trim() !== "") {
              line(who, depth, `says ${quote(block.text)}`);
            }
            if (block.type !== "tool_use") continue;
            const input = block.input as { agent?: string; task?: string; topic?: string };
            if (block.name === "delegate") {
              calls.set(block.id, { tool: block.name, agent: input.agent ?? "?" });
              depths.set(block.id, depth + 1);
              line(
                who,
                depth,
                `→ delegates to ${input.agent} (call mode): ${quote(input.task ?? "")}`,
              );
            } else if (block.name === "hand_off_to_writer") {
              calls.set(block.id, { tool: block.name });
              line(who, depth, `→ hands off to writer: ${quote(input.task ?? "")}`);
            } else {
              calls.set(block.id, { tool: block.name });
              line(who, depth, `→ calls ${block.name}(${JSON.stringify(block.input)})`);
            }
          }
        } else if (message.type === "user") {
          for (const block of message.message.content) {
            const call = calls.get(block.tool_use_id);
            if (call?.tool === "delegate") continue;
            const text =
              typeof block.content === "string"
                ? block.content
                : block.content.map((part) => (part.type === "text" ? part.text : "")).join("");
            line(
              who,
              depth,
              `${block.is_error ? "✗" : "←"} ${call?.tool ?? "tool"}: ${quote(text)}`,
            );
          }
        } else if (message.type === "result" && parent !== null) {
          line(who, depth, `answers ${event.member}: ${quote(message.result)}`);
        }
        break;
      }
    }
  };
  return {
    onEvent,
    runs,
    final: () => final,
    usage: () => ({ inputTokens, outputTokens }),
  };
}

function quote(text: string): string {
  const flat = text.replaceAll(/\s+/g, " ").trim();
  return JSON.stringify(flat.length > 90 ? `${flat.slice(0, 87)}...` : flat);
}
