import { createAbortError } from "@lattice/scheduler/internal";
import { InvalidOptionError, LatticeError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { type ContextStrategy, compact } from "./context-options.js";
import { manageContext, requestTokens } from "./context-step.js";
import { saveCheckpoint } from "./finish-run.js";
import { storeFailure } from "./load-session.js";
import { openSessionEnv } from "./open-run.js";
import type { PreparedAgent } from "./prepare-agent.js";
import { checkStrategies, type RunContext } from "./resolve-context.js";
import type { CompactionEntry } from "./run-log-entry.js";
import type { RunUsage } from "./sdk-message.js";
import { SessionError } from "./session-error.js";
import type { SessionStore } from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";
import type { TraceEvent } from "./trace-event.js";
import { addUsage, zeroUsage } from "./usage-totals.js";

/** Options of `agent.compact(sessionId, options)`. */
export interface CompactOptions {
  /** The strategies to run, each once, in order. Default: the agent's, else `[compact()]`. */
  readonly strategies?: readonly ContextStrategy[];
  /** Aborts the compaction's model call; nothing is appended then. */
  readonly signal?: AbortSignal;
  /** Trace events of the compaction (the agent's `onTrace` gets them too). */
  readonly onTrace?: (event: TraceEvent) => void;
}

/** What `agent.compact()` did. */
export interface CompactResult {
  /** Whether some strategy changed the conversation (a `compaction` entry was appended). */
  readonly compacted: boolean;
  /** The compaction entries appended, in order. */
  readonly entries: readonly CompactionEntry[];
  /** Messages of the conversation before and after. */
  readonly messagesBefore: number;
  readonly messagesAfter: number;
  /** The request's size before and after, in tokens (C1). */
  readonly tokensBefore: number;
  readonly tokensAfter: number;
  /** The tokens the compaction's own model calls used. */
  readonly usage: RunUsage;
}

const KEYS: ReadonlySet<string> = new Set(["strategies", "signal", "onTrace"]);

/**
 * `agent.compact(sessionId)`: makes a stored session's conversation smaller now, between runs
 * (C9, `/compact` in a chat), with the strategies each run once. Each change is a `compaction`
 * entry with trigger `"manual"`, and the session gets a checkpoint (C8). Internal.
 *
 * @throws `SessionError` `session_not_found` for a session without a run, `not_interrupted`
 *   when its run is unfinished (resume it first); `InvalidOptionError` for a bad option; an
 *   error named `"AbortError"` when `signal` aborts.
 */
export async function compactSession(
  prepared: PreparedAgent,
  store: SessionStore,
  sessionId: string,
  options: CompactOptions | undefined,
): Promise<CompactResult> {
  checkSessionId("compact():", sessionId);
  assertKnownOptions(options, KEYS, "CompactOptions:");
  const signal = options?.signal ?? new AbortController().signal;
  if (!(signal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      "CompactOptions:",
      "signal",
      `must be an AbortSignal, received ${describeValue(signal)}.`,
    );
  }
  if (signal.aborted) throw createAbortError(signal.reason);
  const runtime = await prepared.getRuntime();
  const strategies =
    options?.strategies !== undefined
      ? checkStrategies(options.strategies)
      : (runtime.context?.strategies ?? []);
  const context: RunContext = {
    // A manual compaction runs every strategy once: no size is small enough to stop it.
    maxInputTokens: 0,
    countTokens: "estimate",
    strategies: strategies.length > 0 ? strategies : [compact()],
    onCompact: runtime.context?.onCompact,
  };
  const entries: CompactionEntry[] = [];
  const env = await openSessionEnv(runtime, store, sessionId, signal, options?.onTrace, (entry) => {
    if (entry.type === "compaction") entries.push(entry);
  });
  const run = env.state.run;
  if (run === undefined) {
    throw new SessionError(
      "session_not_found",
      sessionId,
      `compact(): session ${JSON.stringify(sessionId)} has no run to compact. Start it with agent.query(prompt, { sessionId }).`,
    );
  }
  if (!run.finished) {
    throw new SessionError(
      "not_interrupted",
      sessionId,
      `compact(): session ${JSON.stringify(sessionId)} has an unfinished run (${run.runId}); compact it between runs. Finish it first: agent.resume(${JSON.stringify(sessionId)}).`,
    );
  }
  const messagesBefore = env.state.messages.length;
  const tokensBefore = requestTokens(env);
  const failed = await manageContext(env, context, "manual");
  if (failed !== undefined) {
    if (signal.aborted) throw createAbortError(signal.reason);
    throw new LatticeError(
      "compaction_failed",
      `compact(): session ${JSON.stringify(sessionId)} was not compacted: ${failed.errors.join(" ")} Nothing was appended; the session is as it was.`,
    );
  }
  const usage = zeroUsage();
  for (const entry of entries) if (entry.usage !== undefined) addUsage(usage, entry.usage);
  if (entries.length > 0) await saveCheckpoint(env);
  const writer = env.writer!;
  if (writer.failure !== undefined)
    throw storeFailure(writer.failure, writer, "compact the session");
  return {
    compacted: entries.length > 0,
    entries,
    messagesBefore,
    messagesAfter: env.state.messages.length,
    tokensBefore,
    tokensAfter: requestTokens(env),
    usage: { ...usage },
  };
}
