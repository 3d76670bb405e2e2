import type { ToolUseBlock } from "@lattice/providers";
import type {
  LoggedDecision,
  PendingApproval,
  ReplyEntry,
  RunFinishedEntry,
  ToolResultEntry,
} from "./run-log-entry.js";
import type { UsageTotals } from "./usage-totals.js";

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
}
