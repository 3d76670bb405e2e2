import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { loadSession, storeLabel } from "./load-session.js";
import { ENTRY_V1, type RunFinishedEntry, type RunLogEntry } from "./run-log-entry.js";
import { RunLogState } from "./run-log-state.js";
import { durationSinceStart, runResult } from "./run-result.js";
import type { SDKResultMessage } from "./sdk-message.js";
import { SessionError } from "./session-error.js";
import type { SessionEntry, SessionStore } from "./session-store.js";
import { checkSessionId } from "./session-store-arguments.js";
import { checkStepLease, leaseLapsed, type StepLease } from "./step-lease.js";

/** Options of {@link endRun}. Checked strictly. */
export interface EndRunOptions {
  /** The session's store. */
  readonly store: SessionStore;
  /** The session. */
  readonly sessionId: string;
  /** The run to end: it must be the session's latest run. Default: the latest run. */
  readonly runId?: string;
  /** Why the run ends; becomes the result's `errors`. At least one non-empty string. */
  readonly errors: readonly string[];
  /**
   * The lease the caller ends the run under, when steps of the session are spread over
   * workers (H28), as `StepOptions.lease`: the end is appended with its `fence`, and nothing is
   * appended once `held()` answers `false`. Default: none (an unfenced append).
   */
  readonly lease?: StepLease;
}

const END_RUN_OPTION_KEYS: ReadonlySet<string> = new Set([
  "store",
  "sessionId",
  "runId",
  "errors",
  "lease",
]);

/**
 * Ends a session's unfinished run as failed, without running anything: appends its
 * `run_finished` entry (`error_during_execution`, with `errors`, the turns and usage the log
 * counts) and returns the result message. Calls of its open batch that have no result get an
 * `is_error` result saying so, so the conversation stays valid for the next prompt. For a run that cannot go on — a step that fails on
 * every attempt, say — so that the session takes new prompts again. A run that had already
 * ended gives its result again.
 *
 * @param options - {@link EndRunOptions}.
 * @throws `InvalidOptionError` for a bad option; `SessionError` `session_not_found` or `not_interrupted` (the latest run is another
 *   one), `SessionConflictError` when another writer appended meanwhile (nothing appended);
 *   `SessionFencedError` when `lease` no longer holds or a newer holder raised the session's
 *   fence (nothing appended).
 */
export async function endRun(options: EndRunOptions): Promise<SDKResultMessage> {
  assertKnownOptions(options, END_RUN_OPTION_KEYS, "endRun():");
  const { store, sessionId } = options;
  if (store === null || typeof store !== "object" || typeof store.append !== "function") {
    throw new InvalidOptionError(
      "endRun():",
      "store",
      `must be a SessionStore, received ${describeValue(store)}.`,
    );
  }
  checkSessionId("endRun():", sessionId);
  const lease = options.lease;
  checkStepLease("endRun():", lease);
  const errors = options.errors;
  if (
    !Array.isArray(errors) ||
    errors.length === 0 ||
    !errors.every((text) => typeof text === "string" && text !== "")
  ) {
    throw new InvalidOptionError(
      "endRun():",
      "errors",
      `must be a non-empty array of non-empty strings saying why the run ends, received ${describeValue(errors)}.`,
    );
  }
  const state = new RunLogState();
  const snapshot = await loadSession(store, sessionId, state);
  const run = state.run;
  if (run === undefined) {
    throw new SessionError(
      "session_not_found",
      sessionId,
      `endRun(): session ${JSON.stringify(sessionId)} has no run in ${storeLabel(store)}.`,
    );
  }
  if (options.runId !== undefined && run.runId !== options.runId) {
    throw new SessionError(
      "not_interrupted",
      sessionId,
      `endRun(): run ${JSON.stringify(options.runId)} is not the latest run of session ${JSON.stringify(sessionId)} (that is ${JSON.stringify(run.runId)}); it had ended.`,
    );
  }
  if (!run.finished) {
    // Calls of an open batch get an error result, so that the conversation stays one the
    // model API accepts (every tool_use answered) when the session takes its next prompt.
    const entries: RunLogEntry[] = [];
    const batch = run.batch;
    if (batch !== undefined && !batch.complete) {
      // One result per id, also when the reply repeated an id (H13): a second would make the
      // log unreadable (H24).
      const answered = new Set(batch.results.keys());
      for (const call of batch.toolUses) {
        if (answered.has(call.id)) continue;
        answered.add(call.id);
        entries.push({
          v: ENTRY_V1,
          type: "tool_result",
          runId: run.runId,
          toolUseId: call.id,
          toolName: call.name,
          status: "cancelled",
          block: {
            type: "tool_result",
            tool_use_id: call.id,
            content: [
              {
                type: "text",
                text: `Tool call "${call.name}" (${call.id}) has no result: the run was ended before it settled (it may have started). ${errors.join(" ")}`,
              },
            ],
            is_error: true,
          },
        });
      }
    }
    const entry: RunFinishedEntry = {
      v: ENTRY_V1,
      type: "run_finished",
      runId: run.runId,
      subtype: "error_during_execution",
      result: "",
      errors: [...errors],
      numTurns: run.numTurns,
      usage: { ...run.usage },
    };
    entries.push(entry);
    if (lease === undefined) {
      await store.append(sessionId, snapshot.version, entries as unknown as SessionEntry[]);
    } else {
      if (!lease.held()) throw leaseLapsed(sessionId, lease.fence);
      await store.append(sessionId, snapshot.version, entries as unknown as SessionEntry[], {
        fence: lease.fence,
      });
    }
    for (const appended of entries) state.apply(appended);
  }
  return runResult(run, state, {
    sessionId,
    parentToolUseId: null,
    durationMs: durationSinceStart(run),
  });
}
