import type { TraceEvent } from "@lattice/core";

/** How a tool call ended, as the scheduler reports it (`tool_call_finished.status`). */
export type TimelineCallStatus =
  | "completed"
  | "failed"
  | "invalid_input"
  | "unknown_tool"
  | "denied"
  | "refused"
  | "policy_error"
  | "cancelled"
  | "abandoned"
  | "timed_out";

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
  /** When the complete reply (or the final failure) arrived; absent when the trace ends first. */
  finishedAt?: number;
  /** The failure message when the request failed for good. */
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
  /** The plan: its mode, concurrency cap and runs of call indices. */
  plan?: {
    time: number;
    mode: string;
    maxConcurrency: number;
    runs: readonly { concurrent: boolean; indices: readonly number[] }[];
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

/** A mark on a run's line: an approval request or decision, a resume, an abort. */
export interface TimelineMarker {
  /** When it happened. */
  readonly time: number;
  /** What happened, as text (the icon is part of the rendering). */
  readonly label: string;
  /** The kind of mark. */
  readonly kind: "approval_requested" | "approval_decided" | "resumed" | "aborted";
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

const NO_HANDLER: ReadonlySet<string> = new Set([
  "invalid_input",
  "unknown_tool",
  "denied",
  "refused",
  "policy_error",
  "cancelled",
]);

/**
 * Turns trace events (from `onTrace`, or {@link parseTraceJsonl}) into a {@link Timeline}:
 * runs with their turns, model requests and tool calls, each call with its queued, started
 * and finished times, why it waited (from `batch_planned`), and the child runs of agent tools
 * nested under the call whose id their `run_started.parentToolUseId` names. A pure function;
 * events of unknown types are ignored, and a trace cut short leaves open bars open.
 *
 * @param events - Trace events in the order they were emitted.
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

  for (const event of events) {
    if (typeof event?.time !== "number" || typeof event.runId !== "string") continue;
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
            message: String((event.error as { message?: unknown }).message ?? event.error),
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

  const topLevel: TimelineRun[] = [];
  for (const run of runs.values()) {
    for (const turn of run.turns) if (turn.batch !== undefined) explainWaits(turn.batch);
    const parent = run.parentToolUseId === null ? undefined : callsById.get(run.parentToolUseId);
    if (parent !== undefined && parent.runId !== run.runId) parent.children.push(run);
    else topLevel.push(run);
  }
  if (start > end) start = end = 0;
  return { start, end, runs: topLevel, callCount, modelCallCount };
}

/** Marks unsafe calls and says why each call that waited in the queue waited, from the plan. */
function explainWaits(batch: TimelineBatch): void {
  const plan = batch.plan;
  if (plan === undefined) return;
  const byIndex = new Map(batch.calls.map((call) => [call.index, call]));
  const describe = (indices: readonly number[]): string =>
    indices
      .map((index) => {
        const call = byIndex.get(index);
        return call === undefined ? `#${index}` : `${call.name} (${call.id})`;
      })
      .join(", ");
  plan.runs.forEach((planRun, position) => {
    const previous = plan.runs[position - 1];
    planRun.indices.forEach((index, order) => {
      const call = byIndex.get(index);
      if (call === undefined) return;
      const alone = !planRun.concurrent && plan.mode === "safe";
      call.unsafe = alone;
      if (call.status !== undefined && NO_HANDLER.has(call.status)) return;
      if (previous !== undefined) {
        const unsafePrevious = !previous.concurrent && plan.mode === "safe";
        call.waitReason = unsafePrevious
          ? `waited for unsafe call ${describe(previous.indices)}`
          : plan.mode === "sequential"
            ? `sequential mode: waited for ${describe(previous.indices)}`
            : `waited for the calls before it: ${describe(previous.indices)}`;
      } else if (planRun.concurrent && order >= plan.maxConcurrency) {
        call.waitReason = `waited for a free slot (concurrency cap ${plan.maxConcurrency})`;
      }
    });
  });
}
