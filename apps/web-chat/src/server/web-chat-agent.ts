import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import { renderTimeline } from "@lattice/trace-viewer";
import { type ChatEndpoint, chatEndpoint, traceRelay } from "@lattice/web";
import { createAgent, type TraceEvent } from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { offlineTurn } from "./offline-script.js";
import { type WebChatToolsOptions, webChatTools } from "./tools.js";

const SYSTEM_PROMPT =
  "You are a helpful assistant in a web chat. Keep replies short. Use get_weather once per " +
  "city, all cities in one reply. Use send_email once per recipient; each email waits for the " +
  "user's approval, and when one is denied, say so and do not send it another way. Use " +
  "long_job when asked to run the long job.";

/** The largest chat request the server reads, in bytes. */
export const MAX_BODY_BYTES = 1_000_000;

/** How many runs' trace events the app keeps for their timelines (the oldest go first). */
const KEPT_RUNS = 200;

/** Options of {@link openWebChatAgent}. */
export interface WebChatAgentOptions {
  /** The folder of the SQLite session file (`sessions.sqlite`); created if missing. */
  readonly dataDir: string;
  /** The environment, for the API keys. */
  readonly env: Readonly<Record<string, string | undefined>>;
  /** How long the tools take (tests make them shorter). */
  readonly tools?: WebChatToolsOptions;
}

/** The chat's agent behind its route, and the timelines of its runs. */
export interface WebChatAgent {
  /** The `useChat` route: `handle(request)` and `history(chatId)`. */
  readonly chat: ChatEndpoint;
  /** One line that says which model answers (offline, DeepSeek or Anthropic). */
  readonly banner: string;
  /** The SQLite file that keeps the chats. */
  readonly databasePath: string;
  /**
   * The tool timeline of a run as a self-contained HTML page (`@lattice/trace-viewer`), from
   * the trace events this process recorded for it; `undefined` for a run it did not see.
   */
  timeline(runId: string): string | undefined;
  /** Stops the scripted model server, when there is one, and closes the database. */
  close(): Promise<void>;
}

/**
 * Creates the chat's agent on a SQLite session store. With `DEEPSEEK_API_KEY` it talks to
 * DeepSeek's Anthropic-compatible API (`deepseek-v4-flash`), else with `ANTHROPIC_API_KEY` to
 * Claude (`claude-sonnet-4-6`), else to a scripted model server it starts on 127.0.0.1
 * ({@link offlineTurn}).
 *
 * @param options - {@link WebChatAgentOptions}.
 * @throws `SqliteSessionStoreError` when the database cannot be opened.
 */
export async function openWebChatAgent(options: WebChatAgentOptions): Promise<WebChatAgent> {
  const { env } = options;
  mkdirSync(options.dataDir, { recursive: true });
  const databasePath = join(options.dataDir, "sessions.sqlite");
  const store = sqliteSessionStore({ path: databasePath });
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

  // Each run's trace events, for its timeline; the relay hands them to the run's stream too.
  const traces = new Map<string, TraceEvent[]>();
  const relay = traceRelay();
  const onTrace = (event: TraceEvent): void => {
    let events = traces.get(event.runId);
    if (events === undefined) {
      events = [];
      traces.set(event.runId, events);
      if (traces.size > KEPT_RUNS) traces.delete(traces.keys().next().value as string);
    }
    events.push(event);
    relay.onTrace(event);
  };

  const agent = createAgent({
    ...endpoint,
    systemPrompt: SYSTEM_PROMPT,
    tools: webChatTools(options.tools),
    sessionStore: store,
    maxTurns: 8,
    // Text and tool inputs reach the page as the model writes them.
    includePartialMessages: true,
    onTrace,
  });
  // The only process writing its SQLite file: a run cut by a restart is ended by the next message.
  const chat = chatEndpoint(agent, {
    trace: relay,
    maxBodyBytes: MAX_BODY_BYTES,
    unfinishedRuns: "end",
  });
  return {
    chat,
    databasePath,
    banner: server
      ? "offline, on the scripted model server (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY for a real model)"
      : `live, ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
    timeline(runId) {
      const events = traces.get(runId);
      if (events === undefined || events.length === 0) return undefined;
      return renderTimeline(events, { title: `Run ${runId}` });
    },
    async close() {
      await server?.close();
      await store.close();
    },
  };
}
