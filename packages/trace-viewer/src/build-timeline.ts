import type { TraceEvent } from "@lattice/core";
import { checkTraceEvent } from "./check-trace-event.js";
import { NO_HANDLER_STATUSES, type TimelineCallStatus } from "./timeline-call-status.js";
import { shorten } from "./timeline-text.js";
import { TraceEventError } from "./trace-event-error.js";

export type { TimelineCallStatus } from "./timeline-call-status.js";

/** One tool call of a batch, with its times on the trace's clock (milliseconds). */
export interface TimelineCall {
  /** The run the call belongs to. */
  readonly runId: string;
  /** The turn whose model reply holds the call. */
  readonly turn: number;
  /** The call's position in its batch (tool_use order). */
  readonly index: number;
  /** The tool_use id. */
  readonly id: string;
  /** The tool the model called. */
  readonly name: string;
  /** The tool's kind: `"tool"`, `"agent_tool"`, `"builtin"` or `"mcp"`. */
  readonly kind: string;
  /** When the call entered its batch. */
  queuedAt: number;
  /** When its handler started; absent when no handler ran. */
  startedAt?: number;
  /** When its result was known; absent when the trace ends first. */
  finishedAt?: number;
  /** When a handler the batch had given up on (timed out, abandoned) settled after all. */
  settledLateAt?: number;
  /** How it ended; absent when the trace ends first. */
  status?: TimelineCallStatus;
  /** Whether its tool_result is an error. */
  isError?: boolean;
  /** Handlers of the batch running when this one started, itself included. */
  inFlight?: number;
  /** Why it waited in the queue (a concurrency cap, an unsafe call, an earlier run of the plan). */
  waitReason?: string;
  /** Whether the plan ran it alone (an unsafe call in `"safe"` mode). */
  unsafe: boolean;
  /** How many progress reports it sent. */
  progressCount: number;
  /** The agent runs this call started (agent tools), nested under it. */
  readonly children: TimelineRun[];
}

/** One model request of a turn. */
export interface TimelineModelCall {
  /** The 1-based turn. */
  readonly turn: number;
  /** When the request was sent. */
  readonly startedAt: number;
  /** The model asked, when it is not the run's own (a `prepareStep` override or a fallback). */
  readonly model?: string;
  /** When the complete reply (or the final failure) arrived; absent when the trace ends first. */
  finishedAt?: number;
  /**
   * The failure message when the request failed for good, or failed and went to the next
   * `fallback` entry (then it ends with "— fell back to {model}").
   */
  failure?: string;
  /** Each retry: when, which attempt, the HTTP status and the message. */
  readonly retries: { time: number; attempt: number; status?: number; message: string }[];
  /** The reply's stop reason. */
  stopReason?: string;
  /** How many tool calls the reply held. */
  toolCalls?: number;
  /** Input and output tokens of the request. */
  tokens?: { input: number; output: number };
}

/** The batch policy's answer and the plan of one turn's batch. */
export interface TimelineBatch {
  /** When the policy decided, and what: a refusal's code and message, or a policy error. */
  policy?: { time: number; allowed: boolean; code?: string; message?: string };
  /**
   * The plan: its mode, concurrency cap and runs of call indices. Each call of the batch is in
   * one run at most: an index the plan repeats, or one that names no call of the batch, is left
   * out of `runs` and counted in `ignoredIndices` (the scheduler writes neither).
   */
  plan?: {
    time: number;
    mode: string;
    maxConcurrency: number;
    runs: readonly { readonly concurrent: boolean; readonly indices: readonly number[] }[];
    /** How many of the plan's indices were repeats, or named no call of the batch: not drawn. */
    ignoredIndices: number;
  };
  /** The calls, in tool_use order. */
  readonly calls: TimelineCall[];
}

/** One turn of a run: its model request and the batch of tool calls of its reply. */
export interface TimelineTurn {
  /** The 1-based turn number. */
  readonly turn: number;
  /** The model requests of the turn (more than one when a resumed run asks again). */
  readonly models: TimelineModelCall[];
  /** The turn's tool batch, when the reply called tools. */
  batch?: TimelineBatch;
}

/** A mark on a run's line: an approval request or decision, a resume, an abort, a compaction. */
export interface TimelineMarker {
  /** When it happened. */
  readonly time: number;
  /** What happened, as text (the icon is part of the rendering). */
  readonly label: string;
  /** The kind of mark. */
  readonly kind: "approval_requested" | "approval_decided" | "resumed" | "aborted" | "compaction";
}

/** One agent run: its turns, its outcome, the runs nested under its agent-tool calls. */
export interface TimelineRun {
  /** The run id. */
  readonly runId: string;
  /** The conversation id. */
  readonly sessionId: string;
  /** The model the run used, when its `run_started` is in the trace. */
  model?: string;
  /** The tool_use id of the agent-tool call that started it; `null` for a top-level run. */
  parentToolUseId: string | null;
  /**
   * Why a run that names a parent call is drawn at top level all the same: the call is not in
   * the trace (`"unknown_parent"`), is one of the run's own calls (`"own_call"`), or the runs'
   * parent links go round in a cycle (`"cycle"`: the run of the cycle that started first is
   * drawn at top level, the others under it). Absent for a run drawn where it says.
   */
  orphan?: "unknown_parent" | "own_call" | "cycle";
  /** The first event's time. */
  startedAt: number;
  /** The last event's time. */
  endedAt: number;
  /** How it ended: `finished` with its subtype, `aborted`, or absent when the trace ends first. */
  outcome?: { kind: "finished"; subtype: string } | { kind: "aborted" };
  /** Its turns, in order. */
  readonly turns: TimelineTurn[];
  /** Approvals, resumes and aborts. */
  readonly markers: TimelineMarker[];
}

/** A trace turned into runs, turns, model calls and tool calls: what {@link renderTimeline} draws. */
export interface Timeline {
  /** The earliest time in the trace; the x axis starts here. */
  readonly start: number;
  /** The latest time in the trace. */
  readonly end: number;
  /** Top-level runs, in the order they started (child runs hang under their call). */
  readonly runs: readonly TimelineRun[];
  /** Every tool call in the trace, nested or not. */
  readonly callCount: number;
  /** Every model request in the trace. */
  readonly modelCallCount: number;
}

/**
 * Turns trace events (from `onTrace`, or {@link parseTraceJsonl}) into a {@link Timeline}:
 * runs with their turns, model requests and tool calls, each call with its queued, started
 * and finished times, why it waited (from `batch_planned`), and the child runs of agent tools
 * nested under the call whose id their `run_started.parentToolUseId` names. A pure function;
 * events of unknown types are ignored, and a trace cut short leaves open bars open.
 *
 * Hostile shapes are drawn in time and memory linear in the trace: a plan's repeated indices,
 * and indices that name no call of the batch, are left out (counted in
 * `TimelineBatch.plan.ignoredIndices`); a wait reason names five calls at most; a run whose
 * parent call is not in the trace, is its own, or closes a cycle of parent links is put at top
 * level (with `TimelineRun.orphan` saying why), so every call is reachable from `runs`.
 *
 * Each event is checked first, as {@link parseTraceJsonl} checks a line: an event the page
 * cannot be drawn from is refused, naming its position and the field.
 *
 * @param events - Trace events in the order they were emitted.
 * @throws {@link TraceEventError} for an event that is not an object, has a `time` that is not
 *   finite or is beyond ±1e15 ms, or a field of the wrong type or missing (an unknown `status`,
 *   a `turn` that is not an integer, no `usage`, `plan` or `approvals`, ...).
 */
export function buildTimeline(events: Iterable<TraceEvent>): Timeline {
  const runs = new Map<string, TimelineRun>();
  const callsById = new Map<string, TimelineCall>();
  /** Each run's turns by number, and each turn's calls by id: no key strings per event. */
  const turnsOfRun = new Map<TimelineRun, Map<number, TimelineTurn>>();
  const callsOfTurn = new Map<TimelineTurn, Map<string, TimelineCall>>();
  let lastRun: TimelineRun | undefined;
  let start = Number.POSITIVE_INFINITY;
  let end = Number.NEGATIVE_INFINITY;
  let callCount = 0;
  let modelCallCount = 0;

  const runOf = (event: TraceEvent): TimelineRun => {
    // A run's events come in a row: the last run saves most lookups.
    let run =
      lastRun !== undefined && lastRun.runId === event.runId ? lastRun : runs.get(event.runId);
    if (run === undefined) {
      run = {
        runId: event.runId,
        sessionId: event.sessionId,
        parentToolUseId: null,
        startedAt: event.time,
        endedAt: event.time,
        turns: [],
        markers: [],
      };
      runs.set(event.runId, run);
    }
    lastRun = run;
    if (event.time > run.endedAt) run.endedAt = event.time;
    return run;
  };
  const turnOf = (run: TimelineRun, turn: number): TimelineTurn => {
    let turns = turnsOfRun.get(run);
    if (turns === undefined) {
      turns = new Map();
      turnsOfRun.set(run, turns);
    }
    let found = turns.get(turn);
    if (found === undefined) {
      found = { turn, models: [] };
      run.turns.push(found);
      turns.set(turn, found);
    }
    return found;
  };
  const batchOf = (run: TimelineRun, turn: number): TimelineBatch => {
    const owner = turnOf(run, turn);
    owner.batch ??= { calls: [] };
    return owner.batch;
  };
  const callOf = (run: TimelineRun, turn: number, id: string): TimelineCall | undefined => {
    const owner = turnsOfRun.get(run)?.get(turn);
    return owner === undefined ? undefined : callsOfTurn.get(owner)?.get(id);
  };

  let position = -1;
  for (const event of events) {
    position++;
    const problem = checkTraceEvent(event);
    if (problem !== undefined) {
      throw new TraceEventError(
        position,
        problem.field,
        problem.field === ""
          ? `Trace event ${position} ${problem.message}. Pass the events of onTrace, or of parseTraceJsonl, as they are.`
          : `Trace event ${position} (${problem.type ?? "event"}): ${problem.message}. The timeline cannot be drawn from this event: pass the events of onTrace, or of parseTraceJsonl, as they are.`,
      );
    }
    // Events of types the viewer does not know may have no run.
    if (typeof event.runId !== "string") continue;
    if (event.time < start) start = event.time;
    if (event.time > end) end = event.time;
    const run = runOf(event);
    switch (event.type) {
      case "run_started":
        if (event.resumed === true) {
          run.markers.push({ time: event.time, label: "resumed", kind: "resumed" });
        } else {
          run.startedAt = Math.min(run.startedAt, event.time);
        }
        run.model = event.model;
        run.parentToolUseId = event.parentToolUseId ?? null;
        break;
      case "model_request_started":
        turnOf(run, event.turn).models.push({
          turn: event.turn,
          startedAt: event.time,
          ...(event.model !== undefined ? { model: event.model } : {}),
          retries: [],
        });
        modelCallCount++;
        break;
      case "model_retry": {
        const model = turnOf(run, event.turn).models.at(-1);
        model?.retries.push({
          time: event.time,
          attempt: event.attempt,
          message: event.message,
          ...(event.status !== undefined ? { status: event.status } : {}),
        });
        break;
      }
      case "model_request_finished": {
        const model = turnOf(run, event.turn).models.at(-1);
        if (model !== undefined) {
          model.finishedAt = event.time;
          model.stopReason = event.stopReason;
          model.toolCalls = event.toolCalls;
          model.tokens = { input: event.usage.inputTokens, output: event.usage.outputTokens };
        }
        break;
      }
      case "compaction":
        // The conversation was made smaller before this turn's call (C3).
        run.markers.push({
          time: event.time,
          label:
            event.strategy === "compact"
              ? `compacted ${event.messagesReplaced} messages into a summary: ${event.tokensBefore} → ${event.tokensAfter} tokens`
              : `${event.strategy}: ${event.tokensBefore} → ${event.tokensAfter} tokens`,
          kind: "compaction",
        });
        break;
      case "model_fallback": {
        const model = turnOf(run, event.turn).models.at(-1);
        if (model !== undefined && model.finishedAt === undefined) {
          model.finishedAt = event.time;
          model.failure = `${event.message} — fell back to ${event.toModel}`;
        }
        break;
      }
      case "model_request_failed": {
        const model = turnOf(run, event.turn).models.at(-1);
        if (model !== undefined) {
          model.finishedAt = event.time;
          model.failure = event.message;
        }
        break;
      }
      case "batch_policy": {
        const batch = batchOf(run, event.turn);
        const decision = event.decision;
        if (decision !== undefined && decision.allowed === false) {
          batch.policy = {
            time: event.time,
            allowed: false,
            code: decision.code,
            message: decision.message,
          };
        } else if (event.error !== undefined) {
          batch.policy = {
            time: event.time,
            allowed: false,
            code: "policy_error",
            message:
              typeof event.error === "string"
                ? event.error
                : ((event.error as { message?: string }).message ?? "the batch policy failed"),
          };
        } else {
          batch.policy = { time: event.time, allowed: true };
        }
        break;
      }
      case "batch_planned":
        batchOf(run, event.turn).plan = {
          time: event.time,
          mode: event.plan.mode,
          maxConcurrency: event.plan.maxConcurrency,
          runs: event.plan.runs,
          ignoredIndices: 0,
        };
        break;
      case "tool_call_queued": {
        const call: TimelineCall = {
          runId: event.runId,
          turn: event.turn,
          index: event.index,
          id: event.id,
          name: event.name,
          kind: event.kind,
          queuedAt: event.time,
          unsafe: false,
          progressCount: 0,
          children: [],
        };
        const owner = turnOf(run, event.turn);
        owner.batch ??= { calls: [] };
        owner.batch.calls.push(call);
        callsById.set(call.id, call);
        let calls = callsOfTurn.get(owner);
        if (calls === undefined) {
          calls = new Map();
          callsOfTurn.set(owner, calls);
        }
        calls.set(call.id, call);
        callCount++;
        break;
      }
      case "tool_call_started": {
        const call = callOf(run, event.turn, event.id);
        if (call !== undefined) {
          call.startedAt = event.time;
          call.inFlight = event.inFlight;
        }
        break;
      }
      case "tool_call_finished": {
        const call = callOf(run, event.turn, event.id);
        if (call !== undefined) {
          call.finishedAt = event.time;
          call.status = event.status;
          call.isError = event.isError;
        }
        break;
      }
      case "tool_call_settled_late": {
        const call = callOf(run, event.turn, event.id);
        if (call !== undefined) call.settledLateAt = event.time;
        break;
      }
      case "tool_progress": {
        const call = callsById.get(event.toolUseId);
        if (call !== undefined) call.progressCount++;
        break;
      }
      case "approval_requested":
        run.markers.push({
          time: event.time,
          label: `approval requested for ${event.approvals.length} call${event.approvals.length === 1 ? "" : "s"}`,
          kind: "approval_requested",
        });
        break;
      case "approval_decided": {
        const approved = event.decisions.filter((decision) => decision.approved).length;
        run.markers.push({
          time: event.time,
          label: `approvals decided: ${approved} approved, ${event.decisions.length - approved} denied`,
          kind: "approval_decided",
        });
        break;
      }
      case "run_finished":
        run.outcome = { kind: "finished", subtype: event.subtype };
        break;
      case "run_aborted":
        run.outcome = { kind: "aborted" };
        run.markers.push({ time: event.time, label: "run aborted", kind: "aborted" });
        break;
    }
  }

  for (const run of runs.values()) {
    for (const turn of run.turns) if (turn.batch !== undefined) explainWaits(turn.batch);
  }
  const topLevel: TimelineRun[] = [];
  const parentOf = placeRuns(runs, callsById);
  for (const run of runs.values()) {
    const parent = parentOf.get(run);
    if (parent !== undefined) parent.children.push(run);
    else topLevel.push(run);
  }
  if (start > end) start = end = 0;
  return { start, end, runs: topLevel, callCount, modelCallCount };
}

/**
 * The call each run hangs under: the one its `parentToolUseId` names, unless that call is not
 * in the trace, is the run's own, or the links go round in a cycle; such a run is drawn at top
 * level, with the reason in its `orphan` field. Every run is reached from a top-level one, so
 * no call is hidden. Walks each chain of parents once, without recursion (linear in the runs).
 */
function placeRuns(
  runs: ReadonlyMap<string, TimelineRun>,
  callsById: ReadonlyMap<string, TimelineCall>,
): Map<TimelineRun, TimelineCall> {
  const parentOf = new Map<TimelineRun, TimelineCall>();
  /** Runs whose place is known (under a call, or at top level), and runs on the chain walked now. */
  const placed = new Set<TimelineRun>();
  const onChain = new Set<TimelineRun>();
  for (const first of runs.values()) {
    const chain: TimelineRun[] = [];
    let run: TimelineRun | undefined = first;
    while (run !== undefined && !placed.has(run) && !onChain.has(run)) {
      onChain.add(run);
      chain.push(run);
      const parent: TimelineCall | undefined =
        run.parentToolUseId === null ? undefined : callsById.get(run.parentToolUseId);
      if (run.parentToolUseId === null) run = undefined;
      else if (parent === undefined) {
        run.orphan = "unknown_parent";
        run = undefined;
      } else if (parent.runId === run.runId) {
        run.orphan = "own_call";
        run = undefined;
      } else {
        parentOf.set(run, parent);
        run = runs.get(parent.runId);
      }
    }
    if (run !== undefined && onChain.has(run)) {
      // The chain came back to a run on it: a cycle. Its earliest run goes to the top level.
      const cycle = chain.slice(chain.indexOf(run));
      let earliest = cycle[0]!;
      for (const member of cycle) if (member.startedAt < earliest.startedAt) earliest = member;
      parentOf.delete(earliest);
      earliest.orphan = "cycle";
    }
    for (const member of chain) {
      onChain.delete(member);
      placed.add(member);
    }
  }
  return parentOf;
}

/** A list of calls for a sentence: the first few as `name (id)`, then how many more. */
function describeCalls(calls: readonly TimelineCall[]): string {
  const named = calls
    .slice(0, LISTED_CALLS)
    .map((call) => `${shorten(call.name, 40)} (${shorten(call.id, 40)})`);
  const more = calls.length - named.length;
  return more > 0 ? `${named.join(", ")} and ${more} more` : named.join(", ");
}

/** How many calls a wait reason names before it says "and N more". */
const LISTED_CALLS = 5;

/**
 * Marks unsafe calls and says why each call that waited in the queue waited, from the plan.
 * Keeps each call in the first run that names it and drops indices that name no call of the
 * batch (counting both in `ignoredIndices`), and describes each run once: the work is linear
 * in the plan and the calls, whatever the plan repeats.
 */
function explainWaits(batch: TimelineBatch): void {
  const plan = batch.plan;
  if (plan === undefined) return;
  const byIndex = new Map<number, TimelineCall>();
  for (const call of batch.calls) if (!byIndex.has(call.index)) byIndex.set(call.index, call);
  const seen = new Set<number>();
  let ignored = 0;
  const runs: { concurrent: boolean; indices: number[] }[] = [];
  for (const planRun of plan.runs) {
    const indices: number[] = [];
    for (const index of planRun.indices) {
      if (seen.has(index) || !byIndex.has(index)) {
        ignored++;
        continue;
      }
      seen.add(index);
      indices.push(index);
    }
    if (indices.length > 0) runs.push({ concurrent: planRun.concurrent, indices });
  }
  plan.runs = runs;
  plan.ignoredIndices = ignored;
  let previous: { concurrent: boolean; description: string } | undefined;
  for (const planRun of runs) {
    const alone = !planRun.concurrent && plan.mode === "safe";
    const reason =
      previous === undefined
        ? undefined
        : !previous.concurrent && plan.mode === "safe"
          ? `waited for unsafe call ${previous.description}`
          : plan.mode === "sequential"
            ? `sequential mode: waited for ${previous.description}`
            : `waited for the calls before it: ${previous.description}`;
    planRun.indices.forEach((index, order) => {
      const call = byIndex.get(index)!;
      call.unsafe = alone;
      if (call.status !== undefined && NO_HANDLER_STATUSES.has(call.status)) return;
      if (reason !== undefined) call.waitReason = reason;
      else if (planRun.concurrent && order >= plan.maxConcurrency) {
        call.waitReason = `waited for a free slot (concurrency cap ${plan.maxConcurrency})`;
      }
    });
    previous = {
      concurrent: planRun.concurrent,
      description: describeCalls(planRun.indices.map((index) => byIndex.get(index)!)),
    };
  }
}
