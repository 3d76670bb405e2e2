import type { BeforeToolCall, ToolBatchPendingApproval } from "@lattice/scheduler";
import type { ToolRunInfo } from "@lattice/tools";
import type { AgentRuntime } from "./agent-runtime.js";
import type { LoggedRun } from "./logged-run.js";
import type { RunStep } from "./next-step.js";
import type { LoggedDecision, RunLogEntry } from "./run-log-entry.js";
import type { RunLogState } from "./run-log-state.js";
import type { RunPlacement } from "./run-placement.js";
import type { RunSteering } from "./run-steering.js";
import type { SessionWriter } from "./session-writer.js";
import type { StepLease } from "./step-lease.js";
import type { TraceEvent } from "./trace-event.js";
import type { UsageTotals } from "./usage-totals.js";

/**
 * A run taken one step at a time (`agent.step()`): the step the caller expects, and the one
 * taken once it is. Internal.
 */
export interface Stepping {
  readonly expected: number | undefined;
  taken: number | undefined;
  /** Called as the step starts, once any decisions are stored. */
  readonly onStepStart: ((step: number) => void) | undefined;
}

/** The lease a step runs under (H28), and the controller that stops the step. Internal. */
export interface StepFencing {
  readonly lease: StepLease;
  readonly stop: AbortController;
}

/**
 * Watches the entries appended to a run's log, after they are applied to its state: the SDK
 * message stream is one (R3). Internal.
 */
export type EntryObserver = (entry: RunLogEntry, env: RunEnv) => void;

/**
 * Everything a run's steps share, in one object per run: what the run is (ids, where it is
 * placed), what it knows (the state folded from its log), where its entries go (the log sink:
 * `writer`, or `written` while it has no store), and who listens. Made by `openRun`; the step
 * modules take it and append entries through `appendEntry`. Internal.
 */
export interface RunEnv {
  /** The agent's resolved options; replaced when a tool source's list changes. */
  runtime: AgentRuntime;
  readonly signal: AbortSignal;
  readonly placement: RunPlacement;
  /** The run's log, folded: the conversation and the latest run (R2). */
  readonly state: RunLogState;
  /**
   * The run: the state's latest run, kept as a plain field (a getter costs on the hot path);
   * `beginRun` sets it once the opening entries are applied.
   */
  run: LoggedRun;
  readonly sessionId: string;
  readonly runId: string;
  /** Whether the run was started before (a resume, or a later step of it). */
  readonly resumed: boolean;
  /** Whether this is a later step of a run taken one step at a time. */
  readonly continuing: boolean;
  /** The entries to append before the first step (`run_started`, or `run_resumed` and decisions). */
  readonly opening: readonly RunLogEntry[];
  /** The decisions this start brought, for the trace. */
  readonly decided: { readonly [approvalId: string]: LoggedDecision } | undefined;
  /** `performance.now()` as the run started. */
  readonly startedAt: number;
  /** The store's writer, when the run has a session (or once it paused for approvals). */
  writer: SessionWriter | undefined;
  /**
   * Every entry of a run without a session that may pause (R14), kept until it does: the
   * interrupt stores them in the agent's store so that `resume()` finds them.
   */
  readonly written: RunLogEntry[];
  readonly observers: readonly EntryObserver[];
  /** The run's trace sink (its own `onTrace`, made safe, and its parents'), if any. */
  readonly trace: ((event: TraceEvent) => void) | undefined;
  /** How many times the run's own `onTrace` failed so far (H1). */
  readonly traceFailures: () => number;
  readonly stepping: Stepping | undefined;
  readonly fencing: StepFencing | undefined;
  /**
   * Whether the run may still start something (H28): its step's lease holds, and so does its
   * parent run's. Undefined, and never asked, for a run under no lease.
   */
  readonly mayStart: (() => boolean) | undefined;
  /** Usage of agent tools' child runs, by tool_use id, not yet written to the log. */
  readonly childUsage: Map<string, UsageTotals>;
  /** What tool handlers see as `ctx.run`; set once the run's tools are known. */
  toolRun: ToolRunInfo | undefined;
  /** The scheduler's per-call hook (the user's `beforeToolCall`, traced), if any. */
  beforeCall: BeforeToolCall | undefined;
  /** What steers the run (L1–L11); undefined for a run with none, whose steps take the plain path. */
  readonly steer: RunSteering | undefined;
}

/**
 * What a step leaves the driver to do: nothing (take the next step), finish the run as the
 * log or a failure says, or pause it for approvals (R14). Internal.
 */
export type StepOutcome =
  | undefined
  | (Extract<RunStep, { type: "finish" }> & {
      /** Model calls made; default the log's count (a failed call counts, unlogged). */
      readonly numTurns?: number;
    })
  | { readonly type: "interrupt"; readonly calls: readonly ToolBatchPendingApproval[] };
