import type { SDKMessage } from "@lattice/core";
import type { ApprovalResponses } from "./approval-responses.js";
import type { LatticeUIMessageChunk } from "./lattice-ui-message.js";
import type { TraceRelay } from "./trace-relay.js";
import { UIChunkMapper } from "./ui-chunk-mapper.js";

/** Options of {@link toUIMessageStream}. */
export interface UIMessageStreamOptions {
  /**
   * The relay the agent's `onTrace` feeds: with it the stream carries each batch's plan, each
   * call's queueing and timing, and policy refusals as `data-lattice-*` parts. Without it those
   * parts are left out; everything else is the same.
   */
  readonly trace?: TraceRelay;
  /**
   * The decisions this query resumes a paused run with, as {@link approvalResponses} read them
   * from the page: the calls a person denied end as `tool-output-denied` (the protocol's
   * state for them) rather than as an error.
   */
  readonly approvals?: ApprovalResponses;
  /**
   * The text the page sees when the query fails before its result (a `session_conflict`, a
   * store that is down): the place to log the error. Default: a fixed sentence with the
   * error's code (`"The run failed (session_conflict); the server's logs say why."`), never
   * its message, so a stack trace, a file path or a host never reaches the page.
   */
  readonly onError?: (error: unknown) => string;
}

/**
 * A run as the AI SDK's UI message stream (W1, W2): a web `ReadableStream` of chunks that
 * `useChat` (React, Vue, Svelte, Angular) and `readUIMessageStream` read. One assistant
 * message per run, whose id is the `runId`; per model call a step (`start-step` /
 * `finish-step`) with its text and reasoning (`*-start`, `*-delta`, `*-end`) and one tool part
 * per call (input streamed, then `tool-input-available` with the input the model sent, then
 * `tool-output-available` with the result's content or `tool-output-error` with its
 * `is_error` text); `tool-approval-request` for each call of a run paused for approval (W3);
 * last `finish` with `{ sessionId, runId, subtype, usage, durationMs }` as message metadata,
 * after an `error` chunk when the run failed. Create the agent with
 * `includePartialMessages: true` to stream text and tool inputs as they come; without it each
 * step's text arrives whole.
 *
 * Reading drives the run (a slow reader slows it, nothing piles up); cancelling the stream
 * (the page went away, W6) aborts the run and resolves once its started tool handlers have
 * settled, so nothing of it keeps running or writing. A run aborted otherwise ends the stream
 * with an `abort` chunk. Messages of agent tools' child runs are not shown.
 *
 * @param query - A query not yet iterated: `agent.query(...)` or `agent.resume(...)`.
 * @param options - {@link UIMessageStreamOptions}.
 */
export function toUIMessageStream(
  query: AsyncIterable<SDKMessage>,
  options: UIMessageStreamOptions = {},
): ReadableStream<LatticeUIMessageChunk> {
  return uiStream(query, options, (chunks, controller) => {
    for (const chunk of chunks) controller.enqueue(chunk);
  });
}

/**
 * The stream of {@link toUIMessageStream}, with each pull's chunks handed to `deliver` at once:
 * one chunk at a time as objects, or (for a response) one SSE-encoded buffer per pull, so
 * that a turn of many deltas costs a few stream operations rather than one per delta.
 * Internal.
 */
export function uiStream<T>(
  query: AsyncIterable<SDKMessage>,
  options: UIMessageStreamOptions,
  deliver: (
    chunks: LatticeUIMessageChunk[],
    controller: ReadableStreamDefaultController<T>,
  ) => void,
  end?: (controller: ReadableStreamDefaultController<T>) => void,
): ReadableStream<T> {
  const iterator = query[Symbol.asyncIterator]();
  const onError = options.onError ?? defaultErrorText;
  let unfollow: (() => void) | undefined;
  let done = false;
  let started = false;
  let pending: LatticeUIMessageChunk[] = [];
  let output: ReadableStreamDefaultController<T> | undefined;
  /** Resolves when the reader wants more (backpressure: the run waits for a slow page). */
  let wanted: (() => void) | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const flush = (): void => {
    if (timer !== undefined) {
      clearTimeout(timer);
      timer = undefined;
    }
    if (done || pending.length === 0 || output === undefined) return;
    const chunks = pending;
    pending = [];
    deliver(chunks, output);
  };
  const stop = (): void => {
    done = true;
    unfollow?.();
    unfollow = undefined;
    if (timer !== undefined) clearTimeout(timer);
    wanted?.();
  };
  const close = (): void => {
    flush();
    stop();
    if (output !== undefined) {
      end?.(output);
      output.close();
    }
  };
  const mapper = new UIChunkMapper(
    (chunk) => {
      if (!done) pending.push(chunk);
    },
    new Set(options.approvals?.deniedToolCallIds ?? []),
  );
  const follow = (runId: string, trace: TraceRelay): void => {
    // Trace events come while the run works: their chunks ride with the next message's, or
    // go out on their own after a moment when none comes (a tool that runs long shows as
    // running).
    unfollow = trace.follow(runId, (event) => {
      mapper.trace(event);
      if (pending.length > 0 && timer === undefined && !done) {
        timer = setTimeout(flush, TRACE_FLUSH_MS);
      }
    });
  };
  /** Reads the run to its end, each message's chunks sent as it comes. */
  const drive = async (): Promise<void> => {
    for (;;) {
      if ((output?.desiredSize ?? 1) <= 0) {
        await new Promise<void>((resolve) => {
          wanted = resolve;
        });
        wanted = undefined;
      }
      if (done) return;
      let next: IteratorResult<SDKMessage>;
      try {
        next = await iterator.next();
      } catch (error) {
        if (done) return;
        const aborted = error instanceof Error && error.name === "AbortError";
        mapper.failed(aborted, aborted ? "The run was aborted." : onError(error));
        close();
        return;
      }
      if (done) return;
      if (next.done) {
        close();
        return;
      }
      const runBefore = mapper.currentRunId;
      const ended = mapper.message(next.value);
      if (runBefore === "" && mapper.currentRunId !== "" && options.trace !== undefined) {
        follow(mapper.currentRunId, options.trace);
      }
      if (ended) {
        // The result is the run's last message: let the query end (it does right after)
        // before the stream does. Reading it to its end, not return(), which would make an
        // AbortError for a run that has finished anyway.
        try {
          while (!(await iterator.next()).done) {}
        } catch {
          // The run's outcome is the result already sent.
        }
        // The reader may have gone meanwhile.
        if (!done) close();
        return;
      }
      flush();
    }
  };
  return new ReadableStream<T>(
    {
      start(controller) {
        output = controller;
        // The run starts when the stream is first read, as a query starts at its first next().
      },
      pull() {
        if (wanted !== undefined) wanted();
        else if (!started) {
          started = true;
          void drive();
        }
      },
      async cancel() {
        pending = [];
        stop();
        await iterator.return?.();
      },
    },
    { highWaterMark: QUEUED_BATCHES },
  );
}

/**
 * How many batches of chunks may wait for a slow reader before the run waits for it: enough
 * that a reader a little behind costs the run nothing.
 */
const QUEUED_BATCHES = 16;

/**
 * How long the chunks of trace events (a call queued, started, finished) wait for a message to
 * ride with, in milliseconds: a UI shows a call's state this much late at most.
 */
const TRACE_FLUSH_MS = 15;

/**
 * The default text of a failure before the run's result (see
 * {@link UIMessageStreamOptions.onError}): a fixed sentence with the error's code, never its
 * message, which may name a file (a store's path), a host or an id the page should not see.
 */
export function defaultErrorText(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && /^[A-Za-z][A-Za-z0-9_]{0,63}$/.test(code)
    ? `The run failed (${code}); the server's logs say why.`
    : "The run failed on the server; its logs say why.";
}
