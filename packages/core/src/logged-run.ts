import type { ToolUseBlock } from "@lattice/providers";
import type {
  GuardrailEntry,
  LoggedDecision,
  OutputFeedbackEntry,
  PendingApproval,
  ReplyEntry,
  RunFinishedEntry,
  ToolResultEntry,
} from "./run-log-entry.js";
import type { RunUsage } from "./sdk-message.js";
import { addUsage, type UsageTotals, zeroUsage } from "./usage-totals.js";

/** The tool calls of the run's latest reply and the results logged for them so far. */
export interface OpenBatch {
  /** The reply's `tool_use` blocks, in tool_use order. */
  readonly toolUses: readonly ToolUseBlock[];
  /** Their ids. */
  readonly ids: ReadonlySet<string>;
  /** The results logged so far, by tool_use id. */
  readonly results: Map<string, ToolResultEntry>;
  /** Whether every call has its result (then the results message is in the conversation). */
  complete: boolean;
}

/** What the log says about its latest run. */
export interface LoggedRun {
  readonly runId: string;
  /** When the run started (its `run_started` entry's ISO time). */
  readonly startedTime: string;
  /** Whether a `run_finished` entry closed it. */
  finished: boolean;
  /** The entry that closed it, once finished. */
  finishedEntry: RunFinishedEntry | undefined;
  /** Model calls made so far (R18: continues on resume). */
  numTurns: number;
  /** Tokens used so far, child runs included (R18: continues on resume). */
  readonly usage: UsageTotals;
  /** The latest reply of the run, if any. */
  lastReply: ReplyEntry | undefined;
  /** The latest reply's tool calls, when it made some. */
  batch: OpenBatch | undefined;
  /** The calls waiting for a decision, when the run is interrupted (R14). */
  pending: readonly PendingApproval[] | undefined;
  /** The decisions on the latest batch's calls, by tool_use id (R15). */
  decisions: Map<string, LoggedDecision> | undefined;
  /**
   * The approval ids each `decisions` entry of the run answered, one set per entry in log order
   * (R15): how a resume delivered twice (a worker died after storing its decisions) finds them
   * already stored.
   */
  readonly answeredApprovalIds: ReadonlySet<string>[];
  /** The run's `guardrail` entries, in log order (L9); undefined while there are none. */
  guardrails: GuardrailEntry[] | undefined;
  /** The guardrail entry that tripped, once one did (the run then ends `guardrail_tripped`). */
  tripped: GuardrailEntry | undefined;
  /**
   * Feedback sent on the latest reply (L3, L8), until the next reply: the model is called
   * again though that reply had no tool calls.
   */
  feedback: OutputFeedbackEntry | undefined;
  /** Answers that failed (feedback entries and failed `final_answer` calls) so far (L3). */
  outputFailures: number;
  /** The latest failed answer's error. */
  lastOutputError: string | undefined;
  /** The `fallback` entry the latest reply came from (0: the agent's own model, L10). */
  fallbackIndex: number;
  /** Usage of the replies that name their model (overrides and fallbacks), by model (L10). */
  byModel: Map<string, UsageTotals> | undefined;
  /** Usage that child runs reported (agent tools), with its cost where they knew it. */
  children: ChildUsage | undefined;
}

/** The usage child runs reported to a run, added up. */
export interface ChildUsage {
  readonly usage: UsageTotals;
  /** Their cost in US dollars, of those that reported one. */
  costUsd: number;
  /** Whether some child reported tokens without a cost. */
  unpriced: boolean;
  /** Their usage by model, of those that reported it. */
  readonly byModel: Map<string, UsageTotals>;
}

/** A run as its `run_started` entry begins it. Internal. */
export function newRun(runId: string, startedTime: string): LoggedRun {
  return {
    runId,
    startedTime,
    finished: false,
    finishedEntry: undefined,
    numTurns: 0,
    usage: zeroUsage(),
    lastReply: undefined,
    batch: undefined,
    pending: undefined,
    decisions: undefined,
    answeredApprovalIds: [],
    guardrails: undefined,
    tripped: undefined,
    feedback: undefined,
    outputFailures: 0,
    lastOutputError: undefined,
    fallbackIndex: 0,
    byModel: undefined,
    children: undefined,
  };
}

/** Adds a reply's usage to its model's, for a reply that names its model (L10). */
export function addModelUsage(run: LoggedRun, model: string, usage: RunUsage): void {
  if (run.byModel === undefined) run.byModel = new Map<string, UsageTotals>();
  let totals = run.byModel.get(model);
  if (totals === undefined) {
    totals = zeroUsage();
    run.byModel.set(model, totals);
  }
  addUsage(totals, usage);
}

/** Adds the usage an agent tool's child run reported: to the run's, and to its children's. */
export function addChildUsage(run: LoggedRun, usage: RunUsage): void {
  addUsage(run.usage, usage);
  if (run.children === undefined) {
    run.children = { usage: zeroUsage(), costUsd: 0, unpriced: false, byModel: new Map() };
  }
  const children = run.children;
  addUsage(children.usage, usage);
  if (typeof usage.costUsd === "number") children.costUsd += usage.costUsd;
  else if (usage.inputTokens + usage.outputTokens > 0) children.unpriced = true;
  if (usage.byModel !== undefined) {
    for (const [model, modelUsage] of Object.entries(usage.byModel)) {
      let totals = children.byModel.get(model);
      if (totals === undefined) {
        totals = zeroUsage();
        children.byModel.set(model, totals);
      }
      addUsage(totals, modelUsage);
    }
  }
}
