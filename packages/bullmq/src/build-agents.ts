import { type Agent, type AgentOptions, createAgent, type SessionStore } from "@lattice/core";
import { type AnyToolDefinition, InvalidOptionError, isToolSource } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { RunWorkerOptions } from "./run-worker-options.js";

/**
 * The agents of a worker, each on the shared store: agents given created are taken as they
 * are, options and definitions are created with `createAgent`, each tool placed by
 * `placeTool` (a fanned-out tool becomes a call job, D6). Internal.
 *
 * @throws `InvalidOptionError` for no agents, or an agent on another session store; what
 *   `createAgent` throws for bad agent options.
 */
export function buildAgents<TContext>(
  given: RunWorkerOptions<TContext>["agents"],
  store: SessionStore,
  placeTool: (agentName: string, definition: AnyToolDefinition) => AnyToolDefinition,
): Map<string, Agent<TContext>> {
  if (given === null || typeof given !== "object" || Object.keys(given).length === 0) {
    throw new InvalidOptionError(
      "RunWorkerOptions:",
      "agents",
      `must name at least one agent: { support: { model, tools, ... } }, received ${describeValue(given)}.`,
    );
  }
  const agents = new Map<string, Agent<TContext>>();
  for (const [agentName, value] of Object.entries(given)) {
    if (isAgent(value)) {
      if (value.sessionStore !== store) {
        throw new InvalidOptionError(
          "RunWorkerOptions:",
          "agents",
          `has the agent ${JSON.stringify(agentName)} on another session store than the worker's sessionStore. Create it with that store, or pass its options and let the worker create it.`,
        );
      }
      agents.set(agentName, value);
      continue;
    }
    const agentOptions = value as AgentOptions;
    if (agentOptions.sessionStore !== undefined && agentOptions.sessionStore !== store) {
      throw new InvalidOptionError(
        "RunWorkerOptions:",
        "agents",
        `has the agent ${JSON.stringify(agentName)} with a sessionStore of its own; every run of a queue lives in the worker's sessionStore. Remove it from the agent's options.`,
      );
    }
    const tools = agentOptions.tools?.map((entry) =>
      isToolSource(entry) ? entry : placeTool(agentName, entry),
    );
    agents.set(
      agentName,
      createAgent<TContext>({
        ...agentOptions,
        ...(tools !== undefined ? { tools } : {}),
        sessionStore: store,
      }),
    );
  }
  return agents;
}

/**
 * Checks `fanOutTools`: names of tools some agent (given as options) has, not agent tools.
 * Internal.
 *
 * @throws `InvalidOptionError` naming what is wrong.
 */
export function checkFanOutTools(
  names: unknown,
  agents: RunWorkerOptions["agents"],
): ReadonlySet<string> {
  if (names === undefined) return new Set();
  const fail = (text: string): never => {
    throw new InvalidOptionError("RunWorkerOptions:", "fanOutTools", text);
  };
  if (!Array.isArray(names) || !names.every((name) => typeof name === "string")) {
    fail(`must be an array of tool names, received ${describeValue(names)}.`);
  }
  const wanted = new Set(names as string[]);
  const found = new Set<string>();
  for (const [agentName, value] of Object.entries(agents ?? {})) {
    if (isAgent(value)) {
      if (wanted.size > 0) {
        fail(
          `cannot apply to the agent ${JSON.stringify(agentName)}, which was given already created: pass its options or definition instead, so the worker can place its tool calls.`,
        );
      }
      continue;
    }
    for (const entry of (value as AgentOptions).tools ?? []) {
      if (isToolSource(entry) || !wanted.has(entry.name)) continue;
      if (entry.kind === "agent_tool") {
        fail(
          `names the agent tool ${JSON.stringify(entry.name)} of agent ${JSON.stringify(agentName)}; an agent tool's child run stays with its parent's step. Fan out the child agent's own tools instead.`,
        );
      }
      found.add(entry.name);
    }
  }
  const missing = [...wanted].filter((name) => !found.has(name));
  if (missing.length > 0) {
    fail(
      `names ${missing.map((name) => JSON.stringify(name)).join(", ")}, which no agent of this worker has (tool sources such as MCP servers cannot be fanned out).`,
    );
  }
  return wanted;
}

/** Whether a value of `agents` is an agent already created (it has `step` and `query`). */
function isAgent(value: unknown): value is Agent<never> {
  return (
    value !== null &&
    typeof value === "object" &&
    typeof (value as { step?: unknown }).step === "function" &&
    typeof (value as { query?: unknown }).query === "function"
  );
}
