import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { createInterface } from "node:readline";
import { sqliteSessionStore } from "@lattice/store-sqlite";
import {
  type AgentOptions,
  anthropic,
  clearToolResults,
  compact,
  createAgent,
  LatticeError,
  type SDKMessage,
} from "agent-lattice";
import { createScriptedModelServer } from "agent-lattice/testing";
import { historyLines } from "./conversation.js";
import { LineInput } from "./line-input.js";
import { offlineTurn } from "./offline-script.js";
import { chatTools } from "./tools.js";
import { compactionLine, Printer, RunView } from "./transcript.js";

/**
 * The offline chat's context threshold, in tokens: small, so that a few minutes of chat show a
 * compaction (the live models' is 80 % of their window).
 */
export const OFFLINE_MAX_INPUT_TOKENS = 1200;

const SYSTEM_PROMPT =
  "You are a friendly assistant in a terminal chat. Keep replies short. Use get_time for the " +
  "date and time, remember_note when the user asks you to remember something, and ask_user " +
  "when you need to ask the user a question.";

/**
 * An input guardrail: a message that tries to override the assistant's instructions ends its
 * run `guardrail_tripped`. It runs beside the first model call, which it aborts when it trips;
 * a message that passes waits for nothing.
 */
function noInstructionOverride({ prompt }: { readonly prompt: unknown }) {
  const text = typeof prompt === "string" ? prompt : JSON.stringify(prompt);
  return /\b(ignore|disregard|forget) (all |any )?(your |the |previous |prior )*(instructions|rules|system prompt)\b/i.test(
    text,
  )
    ? { tripwire: true, reason: "the message asks the assistant to drop its instructions" }
    : { tripwire: false };
}

/** Options of {@link runChat}. */
export interface ChatOptions {
  /** The session (conversation) to continue or start. */
  readonly session: string;
  /** The SQLite file that keeps the sessions; its folder is created if missing. */
  readonly db: string;
  /** Where lines come from. Default `process.stdin`. */
  readonly input?: NodeJS.ReadableStream & { isTTY?: boolean };
  /** Where the chat writes. Default `process.stdout`. */
  readonly output?: NodeJS.WritableStream & { isTTY?: boolean };
  /** The environment, for the API keys. Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * What the chat says when the session was written by someone else (another chat on the same
 * session): for a message or a `/resume`, refused before it began or stopped on the way.
 *
 * @param resumed - Whether the run was a resume (`/resume`, or the resume at start).
 * @param began - Whether the run had begun (its first entry was stored) when it was refused.
 */
function conflictText(resumed: boolean, began: boolean): string {
  if (began) {
    return resumed
      ? "⨯ Another chat took this session's run over while this chat was finishing it, so this chat stopped; what it did is saved. Let the other chat finish the run; /history shows where the conversation stands."
      : "⨯ Another chat took this session over while your message was being answered, so this chat stopped; what it did is saved. Let the other chat finish; /history shows where the conversation stands, then send your next message.";
  }
  return resumed
    ? "⨯ Another chat resumed this session's run at the same moment, so this chat did not: the run goes on there. Let it finish there; /history shows where the conversation stands."
    : "⨯ The last run of this session did not finish, so your message was not sent: type /resume to finish it first, then send your message again. (If another chat is running on this session, wait for it instead.)";
}

/** How a run ended, as {@link runChat} reports it to the user. */
type RunOutcome = "finished" | "interrupted" | "nothing_to_resume" | "failed";

/**
 * Runs the chat until the input ends, the user types `/exit`, or presses Ctrl-C at the
 * prompt. The conversation is the session `options.session` of the SQLite store at
 * `options.db`, so a later chat on the same session continues it.
 *
 * At start, a run of the session that did not finish (interrupted by Ctrl-C, or a process
 * that was killed) is resumed. Ctrl-C during a run aborts it and leaves it resumable
 * (`/resume`). Without `DEEPSEEK_API_KEY` or `ANTHROPIC_API_KEY`, the model is the scripted
 * model server of `agent-lattice/testing`, started here, on 127.0.0.1.
 *
 * @param options - {@link ChatOptions}.
 * @throws `SqliteSessionStoreError` when the database cannot be opened.
 */
export async function runChat(options: ChatOptions): Promise<void> {
  const { session } = options;
  const input = options.input ?? process.stdin;
  const output = options.output ?? process.stdout;
  const env = options.env ?? process.env;
  const interactive = input.isTTY === true && output.isTTY === true;
  const printer = new Printer((text) => output.write(text));

  mkdirSync(dirname(options.db), { recursive: true });
  const store = sqliteSessionStore({ path: options.db });

  const deepseekKey = env.DEEPSEEK_API_KEY;
  const anthropicKey = env.ANTHROPIC_API_KEY;
  const server =
    deepseekKey || anthropicKey
      ? undefined
      : await createScriptedModelServer({ respond: offlineTurn, recordRequests: false });
  const endpoint: Pick<
    AgentOptions,
    "apiKey" | "baseURL" | "model" | "provider" | "fallback" | "pricing"
  > = server
    ? {
        // Offline: no retries, so an overloaded model (say "overload" to the offline model)
        // moves to the fallback at once; made-up prices, so the cost shows.
        provider: anthropic({ apiKey: "offline", baseURL: server.anthropicBaseURL, maxRetries: 0 }),
        model: "scripted-model",
        fallback: [{ model: "scripted-backup" }],
        pricing: {
          "scripted-model": { inputPerMTok: 3, outputPerMTok: 15 },
          "scripted-backup": { inputPerMTok: 1, outputPerMTok: 5 },
        },
      }
    : deepseekKey
      ? {
          apiKey: deepseekKey,
          baseURL: "https://api.deepseek.com/anthropic",
          model: "deepseek-v4-flash",
        }
      : {
          apiKey: anthropicKey,
          model: "claude-sonnet-4-6",
          // Overloaded or down after its retries: the same request goes to Haiku.
          fallback: [{ model: "claude-haiku-4-5" }],
        };
  printer.line(
    server
      ? `Lattice chat: offline, against the scripted model server at ${server.url} (set DEEPSEEK_API_KEY or ANTHROPIC_API_KEY to use a real model)`
      : `Lattice chat: live, ${endpoint.model}${deepseekKey ? " on DeepSeek" : " on Anthropic"}`,
  );
  printer.line(
    `Session "${session}" in ${store.path} (process ${process.pid}). /help lists the commands; Ctrl-C stops a run, Ctrl-D quits.`,
  );

  const lines = new LineInputFeed(input, output, interactive, printer);
  let running: AbortController | undefined;
  let currentView: RunView | undefined;
  const onInterrupt = (): void => {
    if (running !== undefined && !running.signal.aborted) {
      running.abort();
    } else if (running !== undefined || lines.closed) {
      // A second Ctrl-C while a run is still stopping, or while closing: leave now.
      process.exit(130);
    } else {
      lines.close();
    }
  };
  lines.onInterrupt(onInterrupt);
  process.on("SIGINT", onInterrupt);

  const agent = createAgent({
    ...endpoint,
    systemPrompt: SYSTEM_PROMPT,
    tools: chatTools(async (question, signal) => {
      printer.line(`? ${question}`);
      return lines.next("answer> ", signal);
    }),
    sessionStore: store,
    guardrails: { input: [noInstructionOverride] },
    includePartialMessages: true,
    onTrace: (event) => currentView?.trace(event),
    maxTurns: 10,
    // A long chat stays under the model's window: old tool results are cleared first, then
    // older turns are summarized; /history still shows every message.
    contextManagement: {
      ...(server ? { maxInputTokens: OFFLINE_MAX_INPUT_TOKENS } : { triggerAt: 0.8 }),
      strategies: [clearToolResults({ keepLast: 4 }), compact({ keepLastTurns: 2 })],
    },
  });

  /** Streams one run to the terminal; Ctrl-C aborts it. */
  const show = async (
    start: (signal: AbortSignal) => AsyncIterable<SDKMessage>,
    resumed = false,
  ): Promise<RunOutcome> => {
    const controller = new AbortController();
    running = controller;
    const view = new RunView(printer, resumed);
    currentView = view;
    // Whether the run got going: its first message comes once its first entry is stored.
    let began = false;
    try {
      for await (const message of start(controller.signal)) {
        began = true;
        view.show(message);
      }
      return "finished";
    } catch (error) {
      printer.banner = undefined;
      const code = error instanceof LatticeError ? error.code : undefined;
      if (error instanceof Error && error.name === "AbortError") {
        printer.line(
          "⨯ Interrupted. The run is saved unfinished: /resume finishes it (a restart of the chat does too).",
        );
        return "interrupted";
      }
      if (code === "not_interrupted" || code === "session_not_found") {
        return "nothing_to_resume";
      }
      if (code === "session_conflict") {
        // The library's message speaks to programmers (agent.resume(...)); this is the chat's.
        printer.line(conflictText(resumed, began));
        return "failed";
      }
      printer.line(`⨯ ${error instanceof Error ? `${error.name}: ${error.message}` : error}`);
      return "failed";
    } finally {
      running = undefined;
      currentView = undefined;
      printer.banner = undefined;
      printer.endLine();
    }
  };

  const resume = (): Promise<RunOutcome> =>
    show((signal) => agent.resume(session, { signal }), true);

  try {
    // A run left unfinished by Ctrl-C or a killed process: finish it first.
    printer.banner = `↻ The last run of session "${session}" did not finish; resuming it.`;
    await resume();

    for (;;) {
      const line = await lines.next("you> ");
      if (line === undefined) break;
      const text = line.trim();
      if (text === "") continue;
      if (!interactive) printer.line(`you> ${text}`);
      if (!text.startsWith("/")) {
        await show((signal) => agent.query(text, { sessionId: session, signal }));
        continue;
      }
      const [command] = text.split(/\s+/);
      if (command === "/exit" || command === "/quit") break;
      switch (command) {
        case "/history": {
          const { entries } = await store.load(session);
          printer.line(`── session "${session}" ──`);
          const history = historyLines(entries);
          if (history.length === 0) printer.line("(nothing yet)");
          for (const entry of history) printer.line(entry);
          printer.line("──");
          break;
        }
        case "/compact": {
          try {
            const done = await agent.compact(session);
            if (!done.compacted) printer.line("Nothing to compact yet.");
            for (const entry of done.entries) {
              printer.line(
                compactionLine({
                  strategy: entry.strategy,
                  messagesReplaced: entry.replaced,
                  toolResultsCleared: entry.cleared?.length ?? 0,
                  tokensBefore: entry.tokensBefore,
                  tokensAfter: entry.tokensAfter,
                }),
              );
            }
          } catch (error) {
            printer.line(`⨯ ${error instanceof Error ? error.message : String(error)}`);
          }
          break;
        }
        case "/resume":
          if ((await resume()) === "nothing_to_resume") {
            printer.line(`Nothing to resume: every run of session "${session}" has finished.`);
          }
          break;
        case "/sessions": {
          const ids = await store.list();
          if (ids.length === 0) printer.line("No sessions yet.");
          for (const id of ids) printer.line(`${id === session ? "*" : " "} ${id}`);
          break;
        }
        case "/help":
          printer.line("/history   the conversation so far, read from the database");
          printer.line("/resume    finish the last run if it was interrupted");
          printer.line("/compact   summarize the conversation now (the history keeps it all)");
          printer.line("/sessions  the sessions in the database (* is this one)");
          printer.line("/exit      quit (so do Ctrl-D, and Ctrl-C at the prompt)");
          break;
        default:
          printer.line(`Unknown command ${command}. /help lists the commands.`);
      }
    }
  } finally {
    printer.endLine();
    process.off("SIGINT", onInterrupt);
    lines.dispose();
    await store.close();
    await server?.close();
  }
}

/** The terminal's lines as a {@link LineInput}, with a readline prompt when interactive. */
class LineInputFeed {
  readonly #queue = new LineInput();
  readonly #readline: ReturnType<typeof createInterface>;
  readonly #interactive: boolean;
  readonly #printer: Printer;

  constructor(
    input: NodeJS.ReadableStream,
    output: NodeJS.WritableStream,
    interactive: boolean,
    printer: Printer,
  ) {
    this.#interactive = interactive;
    this.#printer = printer;
    this.#readline = createInterface({
      input,
      ...(interactive ? { output, terminal: true } : { terminal: false }),
    });
    this.#readline.on("line", (line) => {
      // On a terminal, Enter moved the cursor to a new line; piped lines are not echoed.
      if (interactive) this.#printer.markLineStart();
      this.#queue.push(line);
    });
    this.#readline.on("close", () => this.#queue.close());
  }

  get closed(): boolean {
    return this.#queue.closed;
  }

  /** Calls `listener` on Ctrl-C, which readline catches on a terminal. */
  onInterrupt(listener: () => void): void {
    this.#readline.on("SIGINT", listener);
  }

  /** Shows `prompt` (on a terminal) and takes the next line. */
  next(prompt: string, signal?: AbortSignal): Promise<string | undefined> {
    if (this.#interactive && !this.#queue.closed) {
      this.#printer.endLine();
      this.#readline.setPrompt(prompt);
      this.#readline.prompt();
      this.#printer.markMidLine();
    }
    return this.#queue.next(signal);
  }

  close(): void {
    this.#queue.close();
  }

  dispose(): void {
    this.#readline.close();
  }
}
