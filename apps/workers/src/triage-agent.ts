import type { AgentOptions, TraceEvent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { offlineTurn } from "./offline-script.js";
import { type CallEvent, triageTools } from "./tools.js";

/** The name producers enqueue runs under, and workers know the agent by. */
export const AGENT_NAME = "triage";

const SYSTEM_PROMPT =
  "You triage support tickets. Read the ticket with read_ticket; then call check_service " +
  "(for the ticket's service) and lookup_customer (for its customer) together in one reply; " +
  "then answer with one sentence: the ticket's priority (high when the service is degraded " +
  "and the customer pays, normal when it is degraded for a free customer, low otherwise) and why.";

/** Options of {@link openTriageAgent}. */
export interface TriageAgentOptions {
  /** How long each tool call takes, in milliseconds. */
  readonly workMs: number;
  /** Told when a tool call starts and ends. */
  readonly onCall: (event: CallEvent) => void;
  /** Sees the agent's trace events (model calls, tool calls). */
  readonly onTrace: (event: TraceEvent) => void;
  /** The environment, for the API keys. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

/** The triage agent's options, the model it talks to, and how to let go of it. */
export interface TriageAgent {
  /** For `createRunWorker({ agents: { [AGENT_NAME]: options } })`. */
  readonly options: AgentOptions;
  /** One line that says which model answers (offline, DeepSeek or Anthropic). */
  readonly banner: string;
  /** Stops the scripted model server, when there is one. */
  close(): Promise<void>;
}

/**
 * The triage agent's options. With `DEEPSEEK_API_KEY` it talks to DeepSeek's
 * Anthropic-compatible API (`deepseek-v4-flash`), else with `ANTHROPIC_API_KEY` to Claude
 * (`claude-sonnet-4-6`), else to a scripted model server it starts on 127.0.0.1 for this
 * process alone: its replies depend only on the request (`offlineTurn`), so each worker can
 * have its own and any of them can take any step of a run.
 *
 * @param options - {@link TriageAgentOptions}.
 * @returns The options; call `close()` when the worker is done.
 */
export async function openTriageAgent(options: TriageAgentOptions): Promise<TriageAgent> {
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
  return {
    options: {
      ...endpoint,
      systemPrompt: SYSTEM_PROMPT,
      tools: triageTools({ workMs: options.workMs, onCall: options.onCall }),
      maxTurns: 6,
      onTrace: options.onTrace,
    },
    banner: server
      ? `offline model at ${server.url}`
      : `${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
    close: async () => {
      await server?.close();
    },
  };
}
