import {
  type Agent,
  endRun,
  type QueryOptions,
  type SDKMessage,
  SessionError,
} from "@lattice/core";
import type { ContentBlock } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import type { UIMessage } from "ai";
import { type ApprovalResponses, approvalResponses } from "./approval-responses.js";
import { readChatBody } from "./chat-body.js";
import { ChatRequestError } from "./chat-request-error.js";
import { fromUIMessages } from "./from-ui-messages.js";
import type { LatticeUIMessage } from "./lattice-ui-message.js";
import { uiMessagesOfSession } from "./session-ui-messages.js";
import { defaultErrorText } from "./to-ui-message-stream.js";
import type { TraceRelay } from "./trace-relay.js";
import { toUIMessageStreamResponse } from "./ui-message-stream-response.js";

/** The default of {@link ChatEndpointOptions.maxBodyBytes}: 1 MB. */
export const DEFAULT_MAX_CHAT_BODY_BYTES = 1_000_000;

/** Options of {@link chatEndpoint}. */
export interface ChatEndpointOptions<TContext = unknown> {
  /** The relay the agent's `onTrace` feeds, for the `data-lattice-*` parts (see {@link TraceRelay}). */
  readonly trace?: TraceRelay;
  /**
   * Where the conversation lives. `"session"` (the default): the chat's `id` is the Lattice
   * `sessionId`, the agent's `sessionStore` keeps the conversation, and only the request's
   * newest message is read (send only it: see the README). `"client"`: no store, the page's
   * `messages` are the conversation (checked by R4 through {@link fromUIMessages}); approvals
   * need `"session"`.
   */
  readonly conversation?: "session" | "client";
  /**
   * What a new message does to a chat whose last run has not finished and was not stopped
   * through this endpoint (it is not paused for approval either): a run that may be going on
   * in another process, or one cut by a restart. `"refuse"` (the default): 409 `chat_busy`,
   * nothing changed, so no two processes ever run one chat (R8). `"end"`: end that run
   * (`endRun`: its unanswered calls get an `is_error` result) and go on: right for a server
   * that is the only one writing its store.
   */
  readonly unfinishedRuns?: "refuse" | "end";
  /** The largest request body read, in bytes; a larger one is answered 413. Default 1 MB. */
  readonly maxBodyBytes?: number;
  /**
   * More options of each run: the `context` of the user the request comes from, an
   * `outputSchema`. Called once per request (for a new message and for approval answers).
   */
  readonly queryOptions?: (
    request: Request,
    body: ChatRequestBody,
  ) =>
    | Pick<QueryOptions<TContext>, "context" | "outputSchema">
    | Promise<Pick<QueryOptions<TContext>, "context" | "outputSchema">>;
  /**
   * The text the page sees when the server fails (a store that is down, a model API that
   * refuses): the place to log the error. Default: `"The run failed (<code>); the server's
   * logs say why."`, never the error's message, which may name a file, a host or a key.
   */
  readonly onError?: (error: unknown) => string;
}

/** The body `useChat`'s transport posts, or the one message a page sends (see the README). */
export interface ChatRequestBody {
  /** The chat's id: the `sessionId` with `conversation: "session"`. */
  readonly id?: string;
  /** The chat so far, the new message last. */
  readonly messages: readonly UIMessage[];
  /** `"submit-message"`, or `"regenerate-message"` (refused: not supported yet). */
  readonly trigger?: string;
}

/** A chat route: {@link chatEndpoint}'s result. */
export interface ChatEndpoint {
  /**
   * Answers one `useChat` request (W1–W4, W6, W9): a new user message starts a run, approval
   * answers resume the paused one, and the answer is the run's UI message stream; a request
   * the server cannot take gets a 4xx JSON `{ error: { code, message } }` and starts nothing.
   * The request's `signal` (a closed tab, `stop()`) aborts the run; the chat's next message
   * ends the stopped run first (its unanswered calls get an `is_error` result), so the
   * conversation goes on. A chat takes one request at a time: another while a run streams is
   * 409 `chat_busy`; one right after a stop waits for the stopped run to settle.
   */
  handle(request: Request): Promise<Response>;
  /**
   * A chat's conversation as `useChat` messages, for the page to show after a reload
   * ({@link uiMessagesOfSession}); empty for an unknown chat.
   *
   * @throws {@link ChatRequestError} `chat_body_invalid` for an id that is not a chat id.
   */
  history(sessionId: string): Promise<LatticeUIMessage[]>;
}

/** A chat with a request in progress here. */
interface ActiveChat {
  /** Settles when the request's run has (its stream ended or was cancelled and the run settled). */
  readonly done: Promise<void>;
  /** The page went away or pressed stop: the run is settling. */
  stopping: boolean;
}

/** How long a new message waits for a stopped run to settle before it is answered `chat_busy`. */
const STOP_WAIT_MS = 30_000;
/** How many chats' stopped runs an endpoint remembers (the oldest forgotten first). */
const MAX_REMEMBERED_STOPS = 10_000;

/**
 * A chat route for `useChat` in one line (W1–W4, W6, W9): `export const POST = (request) =>
 * chat.handle(request)` in a Next.js route handler, `app.post("/api/chat", (c) =>
 * chat.handle(c.req.raw))` in Hono.
 *
 * @param agent - The agent that answers; with the default `conversation: "session"` its
 *   `sessionStore` keeps the chats. Give it `includePartialMessages: true` for text that
 *   streams as it comes.
 * @param options - {@link ChatEndpointOptions}.
 */
export function chatEndpoint<TContext>(
  agent: Agent<TContext>,
  options: ChatEndpointOptions<TContext> = {},
): ChatEndpoint {
  const maxBodyBytes = options.maxBodyBytes ?? DEFAULT_MAX_CHAT_BODY_BYTES;
  const mode = options.conversation ?? "session";
  const onError = options.onError ?? defaultErrorText;
  const streamOptions = {
    ...(options.trace !== undefined ? { trace: options.trace } : {}),
    onError,
  };
  const active = new Map<string, ActiveChat>();
  /** The run of each chat that this endpoint saw stopped (aborted by the page), by session. */
  const stopped = new Map<string, string>();

  async function clientTurn(request: Request, body: ChatRequestBody): Promise<Response> {
    const newest = body.messages.at(-1);
    if (newest === undefined || newest.role !== "user") {
      throw new ChatRequestError(
        "chat_body_invalid",
        'The last message must be the user\'s new message: with conversation "client" there is no paused run to answer.',
      );
    }
    // The history and the new message apart: results of calls that were never run (a stop)
    // end the history, and the new message is the prompt.
    const conversation = fromUIMessages(body.messages) as {
      role: string;
      content: ContentBlock[];
    }[];
    const prompt = (fromUIMessages([newest])[0] as unknown as { content: ContentBlock[] }).content;
    const last = conversation.at(-1) as { content: ContentBlock[] };
    if (last.content.length > prompt.length) last.content = last.content.slice(0, -prompt.length);
    else conversation.pop();
    const content = promptOf(prompt);
    if (content === "" || content.length === 0) {
      throw new ChatRequestError("chat_body_invalid", "The new message is empty: write something.");
    }
    const extra = (await options.queryOptions?.(request, body)) ?? {};
    const query = agent.query(content, {
      ...extra,
      messages: conversation,
      signal: request.signal,
    } as QueryOptions<TContext>);
    const { iterable } = await started(query);
    return toUIMessageStreamResponse(iterable, streamOptions);
  }

  async function sessionTurn(
    request: Request,
    body: ChatRequestBody,
    sessionId: string,
    release: (runId: string | undefined, response: Response) => Response,
  ): Promise<Response> {
    const extra = (await options.queryOptions?.(request, body)) ?? {};
    const signal = request.signal;
    const answers = approvalResponses(body.messages);
    if (answers !== undefined) {
      const query = agent.resume(sessionId, { ...extra, decisions: answers.decisions, signal });
      const { iterable, runId } = await started(query, answers);
      const response = toUIMessageStreamResponse(iterable, {
        ...streamOptions,
        approvals: answers,
      });
      return release(runId, response);
    }
    if (body.trigger === "regenerate-message") {
      throw new ChatRequestError(
        "chat_body_invalid",
        "Regenerating an answer is not supported by this chat yet: send the message again instead.",
      );
    }
    const newest = body.messages.at(-1);
    if (newest === undefined || newest.role !== "user") {
      throw new ChatRequestError(
        "chat_body_invalid",
        "The last message is neither the user's new message nor an answer to a call waiting for approval.",
      );
    }
    const [prompt] = fromUIMessages([newest]);
    const content = promptOf((prompt as { content: string | ContentBlock[] }).content);
    if (content === "" || (Array.isArray(content) && content.length === 0)) {
      throw new ChatRequestError("chat_body_invalid", "The new message is empty: write something.");
    }
    await endStoppedRun(sessionId);
    const query = agent.query(content, { ...extra, sessionId, signal } as QueryOptions<TContext>);
    const { iterable, runId } = await started(query);
    return release(runId, toUIMessageStreamResponse(iterable, streamOptions));
  }

  /**
   * Before a new message: ends the chat's unfinished run when it is one a new message may end —
   * paused for approval (the user wrote instead of answering), stopped through this endpoint,
   * or any with `unfinishedRuns: "end"`. Otherwise a run that is unfinished is `chat_busy`.
   */
  async function endStoppedRun(sessionId: string): Promise<void> {
    const { entries } = await agent.sessionStore.load(sessionId);
    let open: string | undefined;
    let paused = false;
    for (const entry of entries) {
      const { type, runId } = entry as { type?: unknown; runId?: unknown };
      if (type === "run_started" || type === "run_resumed") open = String(runId);
      else if (type === "run_finished") open = undefined;
      paused = type === "interrupt";
    }
    if (open === undefined) return;
    const wasStopped = stopped.get(sessionId) === open;
    if (!paused && !wasStopped && options.unfinishedRuns !== "end") {
      throw new ChatRequestError(
        "chat_busy",
        "This chat's last run has not finished: it may be running in another process, or a server stopped while running it. Wait and send again; the server can resume it (agent.resume) or end it (endRun).",
      );
    }
    await endRun({
      store: agent.sessionStore,
      sessionId,
      runId: open,
      errors: [
        paused
          ? "The calls waiting for approval were not run: the user sent a new message instead."
          : "The run was stopped before it finished; the user sent a new message.",
      ],
    });
    stopped.delete(sessionId);
  }

  /** Claims a chat for one request: refuses it while another streams, waits for one that stops. */
  async function claim(
    sessionId: string,
    signal: AbortSignal,
  ): Promise<{ entry: ActiveChat; free: () => void }> {
    const current = active.get(sessionId);
    if (current !== undefined) {
      if (current.stopping) {
        await Promise.race([
          current.done,
          new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS)),
          new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true })),
        ]);
      }
      if (active.get(sessionId) !== undefined) {
        throw new ChatRequestError(
          "chat_busy",
          "This chat has a run in progress (in another tab?): wait for it to finish, or stop it, then send again.",
        );
      }
    }
    let settle!: () => void;
    const entry: ActiveChat = {
      done: new Promise<void>((resolve) => {
        settle = resolve;
      }),
      stopping: false,
    };
    active.set(sessionId, entry);
    const free = (): void => {
      if (active.get(sessionId) === entry) active.delete(sessionId);
      settle();
    };
    return { entry, free };
  }

  /** Follows a response's body to its end or its cancel, then frees the chat; remembers a stop. */
  function tracked(
    sessionId: string,
    entry: ActiveChat,
    free: () => void,
    runId: string | undefined,
    response: Response,
    signal: AbortSignal,
  ): Response {
    const source = response.body as ReadableStream<Uint8Array>;
    const reader = source.getReader();
    const stop = (): void => {
      entry.stopping = true;
      if (runId === undefined) return;
      if (stopped.size >= MAX_REMEMBERED_STOPS) {
        stopped.delete(stopped.keys().next().value as string);
      }
      stopped.set(sessionId, runId);
    };
    signal.addEventListener("abort", stop, { once: true });
    const body = new ReadableStream<Uint8Array>(
      {
        async pull(controller) {
          const next = await reader.read();
          if (next.done) {
            controller.close();
            signal.removeEventListener("abort", stop);
            free();
          } else controller.enqueue(next.value);
        },
        async cancel(reason) {
          stop();
          await reader.cancel(reason);
          free();
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(body, { status: response.status, headers: response.headers });
  }

  return {
    async handle(request) {
      try {
        const body = await readChatBody(request, maxBodyBytes);
        if (mode === "client") return await clientTurn(request, body);
        const sessionId = chatIdOf(body.id);
        const { entry, free } = await claim(sessionId, request.signal);
        try {
          return await sessionTurn(request, body, sessionId, (runId, response) =>
            tracked(sessionId, entry, free, runId, response, request.signal),
          );
        } catch (error) {
          free();
          throw error;
        }
      } catch (error) {
        return errorResponse(asRequestError(error) ?? error, onError);
      }
    },
    async history(sessionId) {
      const { entries } = await agent.sessionStore.load(chatIdOf(sessionId));
      return uiMessagesOfSession(entries, sessionId);
    },
  };
}

/** A UTF-16 code unit that is half a pair without its other half (H25). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Checks a chat id: a session id the stores take (R7, H25), of a reasonable length. */
function chatIdOf(id: unknown): string {
  if (typeof id !== "string" || id === "") {
    throw new ChatRequestError(
      "chat_body_invalid",
      "The body has no chat id: useChat sends one as `id`; it names the session.",
    );
  }
  if (id.length > 512 || LONE_SURROGATE.test(id)) {
    throw new ChatRequestError(
      "chat_body_invalid",
      "The chat id must be well-formed text of at most 512 characters.",
    );
  }
  return id;
}

/**
 * Pulls a query's first message (the run's `init`), so a request that cannot start (an
 * unknown approval, a busy session) is answered with a 4xx before any stream; then hands the
 * query on, first message included, with the run's id.
 */
async function started(
  query: AsyncIterable<SDKMessage>,
  answers?: ApprovalResponses,
): Promise<{ iterable: AsyncIterable<SDKMessage>; runId: string | undefined }> {
  const iterator = query[Symbol.asyncIterator]();
  let first: IteratorResult<SDKMessage>;
  try {
    first = await iterator.next();
  } catch (error) {
    throw asRequestError(error, answers) ?? error;
  }
  let replayed = false;
  const replaying: AsyncIterator<SDKMessage> = {
    next: () => {
      if (replayed) return iterator.next();
      replayed = true;
      return Promise.resolve(first);
    },
    return: async () => (await iterator.return?.()) ?? { value: undefined, done: true },
  };
  return {
    iterable: { [Symbol.asyncIterator]: () => replaying },
    runId: first.done === true ? undefined : first.value.runId,
  };
}

/** A failure that is the request's fault, as the 4xx it deserves. */
function asRequestError(error: unknown, answers?: ApprovalResponses): ChatRequestError | undefined {
  if (error instanceof ChatRequestError) return error;
  if (error instanceof SessionError) {
    if (
      answers !== undefined &&
      ["approval_unknown", "approval_missing", "not_interrupted", "session_not_found"].includes(
        error.code,
      )
    ) {
      return new ChatRequestError(
        "approval_unknown",
        `The approval answers do not match the calls waiting in this chat (${error.code}): reload the chat to see what is waiting.`,
        { cause: error },
      );
    }
  }
  if ((error as { code?: unknown })?.code === "session_conflict") {
    return new ChatRequestError(
      "chat_busy",
      "This chat has a run in progress (in another tab or process): wait for it to finish, or stop it, then send again.",
      { cause: error },
    );
  }
  if (error instanceof InvalidOptionError) {
    // What the page sent reached a run's options and was refused there (an edited input out
    // of bounds, a prompt the agent cannot take): the page's fault, told without the option's
    // internals.
    return new ChatRequestError(
      "chat_body_invalid",
      "The message or the approval answers cannot start a run: reload the chat and try again.",
      { cause: error },
    );
  }
  return undefined;
}

function errorResponse(error: unknown, onError: (error: unknown) => string): Response {
  const body =
    error instanceof ChatRequestError
      ? error.toJSON()
      : { error: { code: "chat_failed", message: onError(error) } };
  return new Response(JSON.stringify(body), {
    status: error instanceof ChatRequestError ? error.status : 500,
    headers: { "content-type": "application/json; charset=utf-8" },
  });
}

function promptOf(content: string | readonly ContentBlock[]): string | ContentBlock[] {
  if (typeof content === "string") return content;
  if (content.length === 1 && content[0]?.type === "text") return content[0].text;
  return [...content];
}
