import { type Agent, createAgent, isAgentDefinition, type SDKResultMessage } from "@lattice/core";
import {
  createToolDefinition,
  InvalidOptionError,
  type ToolDefinition,
  type ToolHandlerResult,
} from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { z } from "zod/v4";
import type { ServeMcpAgent } from "./serve-mcp-options.js";

/** What an MCP client sends to a served agent (M12). */
export interface ServedAgentInput {
  /** The task, as a complete request: the agent sees nothing else of the caller's context. */
  readonly prompt: string;
}

/** A served agent: the MCP tool that runs it, and whether `serveMcp` made the agent itself. */
export interface ServedAgentTool {
  /** The tool: input `{ prompt }`, kind `"agent_tool"`, named after the agent. */
  readonly tool: ToolDefinition<ServedAgentInput>;
  /** The agent the tool runs. */
  readonly agent: Agent;
  /** `true` when the agent was made from a definition here, so `close()` releases it. */
  readonly owned: boolean;
}

const PROMPT_SCHEMA = z.object({
  prompt: z
    .string()
    .min(1)
    .describe("The task for the agent, written as a complete request: it sees nothing else."),
});

/**
 * Turns an agent into the MCP tool that runs it (M12). The tool takes `{ prompt }`, runs
 * `agent.run(prompt, { signal })` with the call's signal (MCP cancellation aborts the run), and
 * answers with the run's final text; a run's `structuredResult` becomes the MCP result's
 * `structuredContent`. A failed run (`error_max_turns`, `error_during_execution`) and a run that
 * pauses for an approval no MCP call can give are answered `isError` with the reason.
 *
 * @param entry - An `Agent` with a name, or a `defineAgent` definition that names its model.
 * @param index - The entry's index in `agents`, for messages.
 * @throws `InvalidOptionError` for a value that is neither, an agent without a name, or a
 *   definition `createAgent` refuses (its message is kept).
 */
export function servedAgentTool(entry: ServeMcpAgent, index: number): ServedAgentTool {
  let agent: Agent;
  let owned = false;
  let description: string | undefined;
  if (isAgentDefinition(entry)) {
    try {
      agent = createAgent(entry);
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new InvalidOptionError(
        "serveMcp(definition):",
        `agents[${index}]`,
        `(agent "${entry.name}") cannot run on its own: ${reason} A served definition needs its model and credentials (model, and apiKey/baseURL or provider); or pass the Agent made by createAgent.`,
      );
    }
    owned = true;
    description = entry.description;
  } else if (isAgent(entry)) {
    agent = entry;
  } else {
    throw new InvalidOptionError(
      "serveMcp(definition):",
      `agents[${index}]`,
      `must be an Agent from createAgent() or a definition from defineAgent(), received ${describeValue(entry)}.`,
    );
  }
  const name = agent.name;
  if (name === undefined) {
    throw new InvalidOptionError(
      "serveMcp(definition):",
      `agents[${index}]`,
      `is an agent without a name; its MCP tool is named after it. Create it with createAgent({ name: "researcher", ... }).`,
    );
  }
  const tool = createToolDefinition({
    name,
    description:
      description ??
      `Runs the agent "${name}" on a task and returns its final answer. The agent works on its own with its tools; write the prompt as a complete request.`,
    schema: PROMPT_SCHEMA,
    kind: "agent_tool",
    handler: async ({ prompt }, { signal }) => answer(name, await agent.run(prompt, { signal })),
  });
  return { tool, agent, owned };
}

/** Whether a value looks like an `Agent`: what `createAgent` and `createBareAgent` return. */
export function isAgent(value: unknown): value is Agent {
  if (value === null || typeof value !== "object") return false;
  const candidate = value as Partial<Record<keyof Agent, unknown>>;
  return (
    typeof candidate.run === "function" &&
    typeof candidate.query === "function" &&
    typeof candidate.model === "string"
  );
}

/** The MCP answer of a finished run. */
function answer(name: string, result: SDKResultMessage): ToolHandlerResult {
  if (result.subtype === "interrupted") {
    const tools = [...new Set((result.pendingApprovals ?? []).map((call) => call.toolName))];
    return {
      content: `Agent "${name}" stopped: its run needs a person's approval for ${tools.map((tool) => `"${tool}"`).join(", ") || "a tool call"}, which a call over MCP cannot give. Those calls were not run; serve an agent whose tools need no approval.`,
      isError: true,
    };
  }
  if (result.isError) {
    const reasons = result.errors.length > 0 ? result.errors.join("\n") : "no reason given";
    return {
      content: `Agent "${name}" failed (${result.subtype}): ${reasons}`,
      isError: true,
    };
  }
  return {
    content: result.result,
    ...(result.structuredResult !== undefined ? { structuredResult: result.structuredResult } : {}),
  };
}
