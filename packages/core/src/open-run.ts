import type { ContentBlock, ModelMessage } from "@lattice/providers";
import { describeValue } from "@lattice/tools/internal";
import type { AgentRuntime } from "./agent-runtime.js";
import { loadSession, storeLabel } from "./load-session.js";
import type { LoggedRun } from "./logged-run.js";
import { randomId } from "./random-id.js";
import type { EntryObserver, RunEnv, StepFencing } from "./run-env.js";
import {
  ENTRY_V1,
  type LoggedDecision,
  type PendingApproval,
  type RunLogEntry,
} from "./run-log-entry.js";
import { emitEntryMessages } from "./run-log-sink.js";
import { RunLogState } from "./run-log-state.js";
import type { RunPlacement } from "./run-placement.js";
import { durationSinceStart, runResult } from "./run-result.js";
import type { RunStart } from "./run-start.js";
import { withRunOutput } from "./run-steering.js";
import { combineTraces } from "./run-trace.js";
import type { SDKResultMessage } from "./sdk-message.js";
import { SessionError } from "./session-error.js";
import { SessionConflictError, type SessionStore } from "./session-store.js";
import { SessionWriter } from "./session-writer.js";
import { leaseLapsed } from "./step-lease.js";
import type { TraceEvent } from "./trace-event.js";

/** How a run opens: ready for its steps, or already ended (a step taken again after its end). */
export type OpenedRun =
  | { readonly env: RunEnv; readonly ended?: undefined }
  | { readonly env?: undefined; readonly ended: SDKResultMessage };

/**
 * Opens a run, whichever way it starts — a prompt (one-off, with a caller-kept history, or on
 * a session), `resume()`, or `step()` — into one value: the state folded from the stored log,
 * the run's ids, the log sink (the store's writer) and the entries to append first. Nothing is
 * appended or run yet, and no later code asks how the run was started.
 *
 * @returns The run's {@link RunEnv}; or its result, rebuilt from the log and emitted, when a
 *   step continues a run that already ended (or paused for approvals, and is asked again).
 * @throws `SessionConflictError` for a prompt on a session whose run is unfinished (R8);
 *   `SessionError` for a resume of an unknown or finished session, decisions that do not
 *   answer the pending approvals (R16), or a log this release cannot read.
 */
export async function openRun(
  runtime: AgentRuntime,
  start: RunStart,
  signal: AbortSignal,
  placement: RunPlacement,
): Promise<OpenedRun> {
  const startedAt = performance.now();
  const state = new RunLogState();
  let writer: SessionWriter | undefined;
  let sessionId: string;
  let runId: string;
  let resumed = false;
  let continuing = false;
  const opening: RunLogEntry[] = [];
  let decided: { readonly [approvalId: string]: LoggedDecision } | undefined;
  const fencing = start.kind === "step" ? start.fencing : undefined;
  if (start.kind === "step") {
    sessionId = start.sessionId;
    const loaded = await loadStep(start, state);
    writer = new SessionWriter(
      start.store,
      sessionId,
      loaded.version,
      fencing === undefined
        ? undefined
        : {
            fence: fencing.lease.fence,
            held: () => fencing.lease.held(),
            fenced: (error) => {
              if (!fencing.stop.signal.aborted) fencing.stop.abort(error);
            },
          },
    );
    const last = loaded.latest;
    if (last !== undefined) {
      // The next step of the session's latest run: nothing is appended unless decisions are.
      runId = last.runId;
      resumed = true;
      continuing = true;
      // A step job delivered again after its run paused for approvals (its worker died after
      // storing the interrupt): the pause is the step's outcome, given again.
      if (
        last.finished ||
        (start.expectedStep !== undefined &&
          start.decisions === undefined &&
          last.pending !== undefined)
      ) {
        return { ended: rebuiltResult(last, state, sessionId, placement) };
      }
      decided = checkDecisions("step()", sessionId, last.pending, start.decisions);
      if (decided !== undefined) opening.push(...resumedEntries(runId, decided));
    } else {
      runId = start.runId ?? randomId();
      assertNoUnfinishedRun(state, sessionId, state.size);
      opening.push(startedEntry(runId, start.prompt!, undefined));
    }
  } else if (start.kind === "resume") {
    sessionId = start.sessionId;
    const snapshot = await loadSession(start.store, sessionId, state, true);
    const last = state.run;
    if (snapshot.version === 0) {
      throw new SessionError(
        "session_not_found",
        sessionId,
        `resume(): session ${JSON.stringify(sessionId)} does not exist in ${storeLabel(start.store)}. Start it with agent.query(prompt, { sessionId }), or check the id (sessionStore.list() lists the sessions).`,
      );
    }
    if (last === undefined || last.finished) {
      throw new SessionError(
        "not_interrupted",
        sessionId,
        `resume(): session ${JSON.stringify(sessionId)} has no unfinished run: its last run ended. Send the next prompt with agent.query(prompt, { sessionId: ${JSON.stringify(sessionId)} }).`,
      );
    }
    runId = last.runId;
    resumed = true;
    writer = new SessionWriter(start.store, sessionId, snapshot.version);
    decided = checkDecisions("resume()", sessionId, last.pending, start.decisions);
    opening.push(...resumedEntries(runId, decided));
  } else {
    runId = randomId();
    const started = startedEntry(runId, start.prompt, start.history);
    if (start.session !== undefined) {
      sessionId = start.session.sessionId;
      const snapshot = await loadSession(start.session.store, sessionId, state, true);
      assertNoUnfinishedRun(state, sessionId, snapshot.version);
      writer = new SessionWriter(start.session.store, sessionId, snapshot.version);
    } else {
      sessionId = placement.sessionId ?? randomId();
    }
    opening.push(started);
  }
  const trace = combineTraces(runtime.onTrace, placement.trace);
  const env: RunEnv = {
    runtime,
    signal,
    placement,
    state,
    // The latest run of the stored log until the opening entries are applied (beginRun).
    run: state.run as LoggedRun,
    sessionId,
    runId,
    resumed,
    continuing,
    opening,
    decided,
    startedAt,
    writer,
    written: [],
    observers: [emitEntryMessages],
    trace: trace.emit,
    traceFailures: trace.failures,
    stepping:
      start.kind === "step"
        ? { expected: start.expectedStep, taken: undefined, onStepStart: start.onStepStart }
        : undefined,
    fencing,
    mayStart: runMayStart(fencing, sessionId, placement.mayStart),
    childUsage: new Map(),
    toolRun: undefined,
    beforeCall: undefined,
    steer:
      start.output === undefined ? runtime.steering : withRunOutput(runtime.steering, start.output),
  };
  return { env };
}

/**
 * The environment of a stored session between runs, for work on its log that is no run:
 * `agent.compact()` (C9). Its `run` is the session's latest (finished) run, if any; nothing is
 * emitted, and `observe` sees the entries appended. Internal.
 */
export async function openSessionEnv(
  runtime: AgentRuntime,
  store: SessionStore,
  sessionId: string,
  signal: AbortSignal,
  onTrace: ((event: TraceEvent) => void) | undefined,
  observe: EntryObserver,
): Promise<RunEnv> {
  const state = new RunLogState();
  const snapshot = await loadSession(store, sessionId, state, true);
  const trace = combineTraces(runtime.onTrace, onTrace);
  const run = state.run;
  return {
    runtime,
    signal,
    placement: { parentToolUseId: null, emit: () => {}, depth: 0, store },
    state,
    run: run as LoggedRun,
    sessionId,
    runId: run?.runId ?? "",
    resumed: true,
    continuing: true,
    opening: [],
    decided: undefined,
    startedAt: performance.now(),
    writer: new SessionWriter(store, sessionId, snapshot.version),
    written: [],
    observers: [observe],
    trace: trace.emit,
    traceFailures: trace.failures,
    stepping: undefined,
    fencing: undefined,
    mayStart: undefined,
    childUsage: new Map(),
    toolRun: undefined,
    beforeCall: undefined,
    // The session's finished run's budgets do not apply to work between runs.
    steer: undefined,
  };
}

/** A new run's first entry, on its prompt (and a caller-kept history, R4). */
function startedEntry(
  runId: string,
  prompt: string | readonly ContentBlock[],
  history: readonly ModelMessage[] | undefined,
): RunLogEntry {
  const message: ModelMessage = {
    role: "user",
    content: typeof prompt === "string" ? prompt : [...prompt],
  };
  const time = new Date().toISOString();
  return history !== undefined
    ? { v: ENTRY_V1, type: "run_started", runId, time, history, message }
    : { v: ENTRY_V1, type: "run_started", runId, time, message };
}

/** A run taken up again: its `run_resumed` entry, and the decisions it brings (R15). */
function resumedEntries(
  runId: string,
  decided: { readonly [approvalId: string]: LoggedDecision } | undefined,
): RunLogEntry[] {
  const resumedAt: RunLogEntry = {
    v: ENTRY_V1,
    type: "run_resumed",
    runId,
    time: new Date().toISOString(),
  };
  return decided === undefined
    ? [resumedAt]
    : [resumedAt, { v: ENTRY_V1, type: "decisions", runId, decisions: decided }];
}

/**
 * Whether a run may still start something: its step's lease holds (when it does not, stops the
 * step, which then rejects with `SessionFencedError`, H28), and so does its parent run's (an
 * agent tool's child run). Undefined, and never asked, for a run under no lease.
 */
function runMayStart(
  fencing: StepFencing | undefined,
  sessionId: string,
  inherited: (() => boolean) | undefined,
): (() => boolean) | undefined {
  if (fencing === undefined) return inherited;
  const leaseHeld = (): boolean => {
    if (fencing.lease.held()) return true;
    if (!fencing.stop.signal.aborted)
      fencing.stop.abort(leaseLapsed(sessionId, fencing.lease.fence));
    return false;
  };
  return inherited === undefined ? leaseHeld : () => leaseHeld() && inherited();
}

/** The result of a run that ended, given again from its log, emitted. */
function rebuiltResult(
  run: LoggedRun,
  state: RunLogState,
  sessionId: string,
  placement: RunPlacement,
): SDKResultMessage {
  const message = runResult(run, state, {
    sessionId,
    parentToolUseId: placement.parentToolUseId,
    durationMs: durationSinceStart(run),
  });
  placement.emit(message);
  return message;
}

/**
 * Refuses a new prompt on a session whose latest run is unfinished (R8): it would interleave
 * with that run, or leave its pending approvals unanswered.
 */
function assertNoUnfinishedRun(state: RunLogState, sessionId: string, version: number): void {
  const run = state.run;
  if (run === undefined || run.finished) return;
  const pending = run.pending;
  throw new SessionConflictError(
    sessionId,
    version,
    version,
    pending !== undefined
      ? `Session ${JSON.stringify(sessionId)} has a run waiting for approval of ${pending.length} tool call(s) (${pending.map((approval) => `${approval.toolName}: ${approval.approvalId}`).join(", ")}). A new prompt would leave those calls unanswered, so nothing was sent. Decide them first: agent.resume(${JSON.stringify(sessionId)}, { decisions: { [approvalId]: { approved: true } | { approved: false, reason } } }).`
      : `Session ${JSON.stringify(sessionId)} has an unfinished run (${run.runId}): it is still running, or it was cut by an abort or a crash. A new prompt would interleave with it, so nothing was sent. Continue it with agent.resume(${JSON.stringify(sessionId)}), or wait for it to finish.`,
  );
}

/**
 * Loads the session of a `step` start into `state`. Returns its version, and the latest run
 * when the step continues it (no prompt, or a prompt for a run that already started: a
 * repeated first step).
 *
 * @throws `SessionError` `session_not_found` without a prompt for an empty session, and
 *   `not_interrupted` when `runId` is given and the latest run is another one.
 */
async function loadStep(
  start: Extract<RunStart, { kind: "step" }>,
  state: RunLogState,
): Promise<{ readonly latest: LoggedRun | undefined; readonly version: number }> {
  const sessionId = start.sessionId;
  const snapshot = await loadSession(start.store, sessionId, state, true);
  const latest = state.run;
  const version = snapshot.version;
  if (start.prompt !== undefined && (latest === undefined || latest.runId !== start.runId)) {
    // A first step asked again after its run ended and another began: never a second start.
    // A run started before a checkpoint is known by the ids the checkpoint keeps (C8).
    if (start.runId !== undefined && state.hasRun(start.runId)) {
      throw new SessionError(
        "not_interrupted",
        sessionId,
        `step(): run ${JSON.stringify(start.runId)} already ran in session ${JSON.stringify(sessionId)} and ended before the session moved on; it is not started again.`,
      );
    }
    return { latest: undefined, version };
  }
  if (latest === undefined) {
    throw new SessionError(
      "session_not_found",
      sessionId,
      `step(): session ${JSON.stringify(sessionId)} has no run in ${storeLabel(start.store)}. Take the first step of a run with agent.step(${JSON.stringify(sessionId)}, { prompt }).`,
    );
  }
  if (start.runId !== undefined && latest.runId !== start.runId) {
    throw new SessionError(
      "not_interrupted",
      sessionId,
      `step(): run ${JSON.stringify(start.runId)} is not the latest run of session ${JSON.stringify(sessionId)} (that is ${JSON.stringify(latest.runId)}), so it cannot take a step; it ended before the session moved on.`,
    );
  }
  return { latest, version };
}

/**
 * Checks a resume's decisions against the pending approvals (R16): one for every pending id,
 * none for another (own keys only). Returns the decisions to log, or `undefined` when nothing
 * was pending. `method` names the call in messages (`resume()`, `step()`).
 */
function checkDecisions(
  method: string,
  sessionId: string,
  pending: readonly PendingApproval[] | undefined,
  given: { readonly [approvalId: string]: LoggedDecision } | undefined,
): { readonly [approvalId: string]: LoggedDecision } | undefined {
  const ids = Object.keys(given ?? {});
  const pendingIds = new Set((pending ?? []).map((approval) => approval.approvalId));
  const unknown = ids.filter((id) => !pendingIds.has(id));
  if (unknown.length > 0) {
    throw new SessionError(
      "approval_unknown",
      sessionId,
      pending === undefined
        ? `${method}: session ${JSON.stringify(sessionId)} is not waiting for approvals, so the decision(s) for ${unknown.map((id) => describeValue(id)).join(", ")} cannot apply (already decided, or never asked). Nothing ran. If another process resumed it, its run goes on there; resume() without decisions is only for a run cut by a crash or an abort.`
        : `${method}: ${unknown.map((id) => describeValue(id)).join(", ")} ${unknown.length === 1 ? "is" : "are"} not pending in session ${JSON.stringify(sessionId)} (already decided, or never asked). The pending approvals are ${[...pendingIds].map((id) => JSON.stringify(id)).join(", ")}. Nothing ran.`,
    );
  }
  if (pending === undefined) return undefined;
  const has = (id: string): boolean => given !== undefined && Object.hasOwn(given, id);
  const missing = pending.filter((approval) => !has(approval.approvalId));
  if (missing.length > 0) {
    throw new SessionError(
      "approval_missing",
      sessionId,
      `${method}: session ${JSON.stringify(sessionId)} waits for a decision on ${missing.map((approval) => `${approval.toolName} (${approval.approvalId})`).join(", ")}. Pass one for each: agent.resume(${JSON.stringify(sessionId)}, { decisions: { [approvalId]: { approved: true } | { approved: true, input } | { approved: false, reason } } }). Nothing ran.`,
    );
  }
  // Checked and copied as JSON where they entered (checkApprovalDecisions, H26); defined as
  // own properties, whatever the ids.
  return Object.fromEntries(
    pending.map((approval) => [approval.approvalId, given![approval.approvalId]!]),
  );
}
