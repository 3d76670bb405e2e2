import { type Agent, createAgent, type SessionStore, type TraceEvent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { offlineTurn } from "./offline-script.js";
import { opsTools } from "./tools.js";

const SYSTEM_PROMPT =
  "You are an ops assistant for a small fleet: the services web, api and worker, each in " +
  "staging and production. Use check_status to see what runs; when asked to deploy, call " +
  "check_status and deploy together in one reply. Deploys to production and every rollback " +
  "wait for a person's approval. When a call is denied, do not try it again and do not work " +
  "around it: say what you did not do, and quote the reason you were given. When a deploy " +
  "fails its health check, propose a rollback to the previous version by calling rollback. " +
  "Keep your answers to two or three sentences.";

/** Options of {@link openOpsAgent}. */
export interface OpsAgentOptions {
  /** Where the agent keeps its sessions. */
  readonly store: SessionStore;
  /** The pretend fleet's JSON file. */
  readonly fleetPath: string;
  /** The actions log. */
  readonly actionsPath: string;
  /** How long a deploy or rollback takes, in milliseconds. */
  readonly workMs: number;
  /** The environment, for the API keys. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Sees the agent's trace events (model calls, tool calls, approvals). */
  readonly onTrace?: (event: TraceEvent) => void;
}

/** The ops agent, the model it talks to, and how to let go of it. */
export interface OpsAgent {
  readonly agent: Agent;
  /** One line that says which model answers (offline, DeepSeek or Anthropic). */
  readonly banner: string;
  /** Stops the scripted model server, when there is one. */
  close(): Promise<void>;
}

/**
 * Creates the ops agent on a session store. With `DEEPSEEK_API_KEY` it talks to DeepSeek's
 * Anthropic-compatible API (`deepseek-v4-flash`), else with `ANTHROPIC_API_KEY` to Claude
 * (`claude-sonnet-4-6`), else to a scripted model server it starts on 127.0.0.1 for this
 * process alone: its replies depend only on the request (`offlineTurn`), so a later process
 * with its own server continues the same conversation.
 *
 * @param options - {@link OpsAgentOptions}.
 * @returns The agent; call `close()` when done.
 */
export async function openOpsAgent(options: OpsAgentOptions): Promise<OpsAgent> {
  const { env } = options;
  const deepseekKey = env.DEEPSEEK_API_KEY;
  const anthropicKey = env.ANTHROPIC_API_KEY;
  const server =
    deepseekKey || anthropicKey
      ? undefined
      : await createScriptedModelServer({ respond: offlineTurn, recordRequests: false });
  const endpoint = server
    ? { apiKey: "offline", baseURL: server.anthropicBaseURL, model: "scripted-model" }
    : deepseekKey
      ? {
          apiKey: deepseekKey,
          baseURL: "https://api.deepseek.com/anthropic",
          model: "deepseek-v4-flash",
        }
      : { apiKey: anthropicKey, model: "claude-sonnet-4-6" };
  const agent = createAgent({
    ...endpoint,
    systemPrompt: SYSTEM_PROMPT,
    tools: opsTools({
      fleetPath: options.fleetPath,
      actionsPath: options.actionsPath,
      workMs: options.workMs,
    }),
    sessionStore: options.store,
    maxTurns: 12,
    ...(options.onTrace !== undefined ? { onTrace: options.onTrace } : {}),
  });
  return {
    agent,
    banner: server
      ? `Offline: the scripted model server at ${server.url} answers (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY to use a real model).`
      : `Live: ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}.`,
    close: async () => {
      await server?.close();
    },
  };
}
