import { createAbortError } from "@lattice/scheduler/internal";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions } from "@lattice/tools/internal";
import type { AgentQuery, Prompt, QueryOptions, ResumeOptions } from "./agent.js";
import type { AgentRuntime } from "./agent-runtime.js";
import { checkApprovalDecisions } from "./check-approval-decisions.js";
import { checkHistory } from "./check-history.js";
import { MessageChannel } from "./message-channel.js";
import type { PreparedAgent } from "./prepare-agent.js";
import {
  checkSignal,
  QUERY_OPTION_KEYS,
  RESUME_OPTION_KEYS,
  validatePrompt,
} from "./query-arguments.js";
import { runAgent } from "./run-agent.js";
import { type RunOutput, resolveRunOutput } from "./run-output.js";
import type { RunPlacement } from "./run-placement.js";
import type { RunStart } from "./run-start.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";
import type { SessionStore } from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";

/**
 * Starts a run lazily on first iteration (or `finalResult()`) and streams its messages.
 * Internal: the arguments are checked by the caller.
 */
export function startQuery(
  getRuntime: () => AgentRuntime | Promise<AgentRuntime>,
  start: RunStart,
  queryOptions: { readonly signal?: AbortSignal; readonly context?: unknown } | undefined,
  agentName: string | undefined,
  store: SessionStore,
): AgentQuery {
  const userSignal = queryOptions?.signal;
  const context = queryOptions?.context;
  let started = false;
  let resolveResult!: (result: SDKResultMessage) => void;
  let rejectResult!: (error: unknown) => void;
  const result = new Promise<SDKResultMessage>((resolve, reject) => {
    resolveResult = resolve;
    rejectResult = reject;
  });
  // Nobody may ask for the result: its failure is the iterator's to report.
  result.catch(() => {});
  let draining: Promise<SDKResultMessage> | undefined;

  const query: AgentQuery = {
    [Symbol.asyncIterator](): AsyncIterator<SDKMessage> {
      if (started) {
        throw new InvalidOptionError(
          "QueryOptions:",
          "query",
          "was already iterated. Each query() runs once; call agent.query() again for a new run.",
        );
      }
      started = true;
      const channel = new MessageChannel<SDKMessage>();
      const controller = new AbortController();
      const onAbort = (): void => controller.abort(userSignal?.reason);
      if (userSignal?.aborted) controller.abort(userSignal.reason);
      else userSignal?.addEventListener("abort", onAbort, { once: true });
      const placement: RunPlacement = {
        parentToolUseId: null,
        emit: (message) => channel.push(message),
        depth: 0,
        agentName,
        store,
        ...(context !== undefined ? { context } : {}),
      };
      const execute = async (): Promise<SDKResultMessage> => {
        if (controller.signal.aborted) throw createAbortError(controller.signal.reason);
        const runtime = await getRuntime();
        return runAgent(runtime, start, controller.signal, placement);
      };
      let stopping = false;
      let finished = false;
      // Settles (never rejects) once the run has: with its error, if it failed.
      const settled: Promise<{ readonly error: unknown } | undefined> = execute()
        .then(
          (message) => {
            resolveResult(message);
            return undefined;
          },
          (error: unknown) => {
            rejectResult(error);
            return { error };
          },
        )
        .then((failure) => {
          finished = true;
          userSignal?.removeEventListener("abort", onAbort);
          // After return(), the caller reads nothing more: the AbortError is expected.
          if (stopping && failure !== undefined && isAbortError(failure.error)) channel.close();
          else channel.close(failure);
          return failure;
        });
      let returned = false;
      return {
        // After return(), the iteration is over: messages still buffered are dropped.
        next: () => (returned ? Promise.resolve({ value: undefined, done: true }) : channel.next()),
        // Breaking out of the loop: abort, wait until every started handler has settled
        // (T22), then end the iteration.
        return: async () => {
          // A run that had already ended left its outcome in the channel; nothing to report.
          const wasRunning = !finished && !stopping;
          stopping = true;
          controller.abort(createAbortError("the caller stopped reading the query"));
          const failure = await settled;
          returned = true;
          channel.close();
          // The expected AbortError is swallowed; another failure while stopping is not lost.
          if (wasRunning && failure !== undefined && !isAbortError(failure.error)) {
            throw failure.error;
          }
          return { value: undefined, done: true };
        },
      };
    },
    finalResult() {
      if (started) return result;
      draining ??= (async () => {
        for await (const _message of query) {
          // Drained: the result arrives through `result`.
        }
        return result;
      })();
      return draining;
    },
  };
  return query;
}

function _ignoreMessage(): void {}

function isAbortError(error: unknown): boolean {
  return error instanceof Error && error.name === "AbortError";
}

/**
 * `agent.query(prompt, options)`: checks the prompt and options (strictly), then starts the
 * run lazily. Internal.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError` for a bad prompt or option.
 */
export function startPromptQuery(
  prepared: PreparedAgent,
  store: SessionStore,
  prompt: Prompt,
  queryOptions: QueryOptions<unknown> | undefined,
): AgentQuery {
  const agentName = prepared.name;
  assertKnownOptions(queryOptions, QUERY_OPTION_KEYS, "QueryOptions:");
  checkSignal("QueryOptions:", queryOptions?.signal);
  validatePrompt(prompt);
  const sessionId = queryOptions?.sessionId;
  if (sessionId !== undefined) {
    checkSessionId("QueryOptions:", sessionId);
    if (queryOptions?.messages !== undefined) {
      throw new InvalidOptionError(
        "QueryOptions:",
        "messages",
        `cannot be combined with "sessionId": session ${JSON.stringify(sessionId)} keeps its own history in the agent's sessionStore. Pass sessionId to continue the stored conversation, or messages to continue one you keep.`,
      );
    }
  }
  const history =
    queryOptions?.messages === undefined ? undefined : checkHistory(queryOptions.messages);
  const output = queryOutput(prepared, queryOptions?.outputSchema, "QueryOptions:");
  const start: RunStart = {
    kind: "prompt",
    prompt,
    ...(history !== undefined ? { history } : {}),
    ...(sessionId !== undefined ? { session: { store, sessionId } } : {}),
    ...(output !== undefined ? { output } : {}),
  };
  return startQuery(prepared.getRuntime, start, queryOptions, agentName, store);
}

/**
 * `agent.resume(sessionId, options)`: checks the id, options and decisions (strictly), then
 * starts the resumed run lazily. Internal.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError` for a bad argument.
 */
export function startResumeQuery(
  prepared: PreparedAgent,
  store: SessionStore,
  sessionId: string,
  resumeOptions: ResumeOptions<unknown> | undefined,
): AgentQuery {
  const agentName = prepared.name;
  assertKnownOptions(resumeOptions, RESUME_OPTION_KEYS, "ResumeOptions:");
  checkSessionId("resume():", sessionId);
  checkSignal("ResumeOptions:", resumeOptions?.signal);
  const decisions = checkApprovalDecisions("ResumeOptions:", resumeOptions?.decisions);
  const output = queryOutput(prepared, resumeOptions?.outputSchema, "ResumeOptions:");
  return startQuery(
    prepared.getRuntime,
    {
      kind: "resume",
      store,
      sessionId,
      ...(decisions !== undefined ? { decisions } : {}),
      ...(output !== undefined ? { output } : {}),
    },
    resumeOptions,
    agentName,
    store,
  );
}

/**
 * A query's own `outputSchema`, resolved in the agent's output mode (L1), or `undefined`.
 * Internal.
 *
 * @throws `InvalidOptionError` naming `prefix` for a schema the SDK cannot use.
 */
export function queryOutput(
  prepared: PreparedAgent,
  schema: unknown,
  prefix: string,
): RunOutput | undefined {
  if (schema === undefined) return undefined;
  const { mode, retries } = prepared.outputSettings;
  return resolveRunOutput(schema, mode, retries, prefix);
}
