import {
  RUN_LOG_VERSION,
  type RunLogEntry,
  type SDKResultMessage,
  type SessionEntry,
} from "agent-lattice";

/** A call that waits for a person's decision, as the run log and the result show it. */
export type PendingApproval = NonNullable<SDKResultMessage["pendingApprovals"]>[number];

/** A tool call of the model's latest reply. */
export interface LoggedCall {
  readonly id: string;
  readonly name: string;
  readonly input: unknown;
}

/** What a session's run log says, as the commands need it. */
export interface SessionState {
  /** Whether the store has the session at all. */
  readonly exists: boolean;
  /** The session's last run, if it has one. */
  readonly lastRun:
    | {
        readonly runId: string;
        /** Whether a `run_finished` entry closed it. */
        readonly finished: boolean;
        /** How it ended, when it did. */
        readonly subtype: string | undefined;
        readonly result: string | undefined;
        readonly errors: readonly string[];
      }
    | undefined;
  /**
   * The calls waiting for a decision: those of the last `interrupt` entry, when no
   * `decisions` entry (or a later run) followed it. Empty when nothing waits.
   */
  readonly pending: readonly PendingApproval[];
  /** The tool calls of the model's latest reply: the batch the pending calls belong to. */
  readonly batch: readonly LoggedCall[];
  /** The ids of the calls of `batch` whose results are logged. */
  readonly answered: ReadonlySet<string>;
  /** Every tool call of the session, by tool_use id: to name the tool of a result. */
  readonly toolNames: ReadonlyMap<string, string>;
}

/**
 * Reads a session's run log: the entries the agent appended to the store, plain JSON typed
 * `RunLogEntry` in `agent-lattice`. The calls waiting for a decision are those of the last
 * `"interrupt"` entry (its `approvals`) that no `"decisions"` entry followed.
 *
 * @param entries - The session's entries, as `store.load(sessionId)` returns them; none for a
 *   session the store does not have.
 * @returns The session's state.
 * @throws Error when an entry was written by a newer Lattice (a higher run log version).
 */
export function readSessionState(entries: readonly SessionEntry[]): SessionState {
  let lastRun: SessionState["lastRun"];
  let pending: readonly PendingApproval[] = [];
  let batch: readonly LoggedCall[] = [];
  let answered = new Set<string>();
  const toolNames = new Map<string, string>();
  for (const [index, raw] of entries.entries()) {
    const entry = raw as unknown as RunLogEntry;
    if (typeof entry.v !== "number" || entry.v > RUN_LOG_VERSION) {
      throw new Error(
        `run log entry ${index} has version ${String(entry.v)}; this app reads version ${RUN_LOG_VERSION}. Upgrade it to read this session.`,
      );
    }
    switch (entry.type) {
      case "run_started":
        lastRun = {
          runId: entry.runId,
          finished: false,
          subtype: undefined,
          result: undefined,
          errors: [],
        };
        pending = [];
        batch = [];
        answered = new Set();
        break;
      case "reply":
        batch = entry.message.content.flatMap((block) =>
          block.type === "tool_use" ? [{ id: block.id, name: block.name, input: block.input }] : [],
        );
        for (const call of batch) toolNames.set(call.id, call.name);
        answered = new Set();
        break;
      case "tool_result":
        answered.add(entry.toolUseId);
        break;
      case "interrupt":
        pending = entry.approvals;
        break;
      case "decisions":
        pending = [];
        break;
      case "run_finished":
        if (lastRun !== undefined) {
          lastRun = {
            ...lastRun,
            finished: true,
            subtype: entry.subtype,
            result: entry.result,
            errors: entry.errors,
          };
        }
        pending = [];
        break;
      default:
        break;
    }
  }
  return { exists: entries.length > 0, lastRun, pending, batch, answered, toolNames };
}

/**
 * The tool_result entries of a session's log: what each call's result was, as sent to the
 * model. The tests read a denied call's result here.
 *
 * @param entries - The session's entries, as `store.load(sessionId)` returns them.
 * @returns The `"tool_result"` entries, in the order they were logged.
 */
export function toolResultEntries(
  entries: readonly (SessionEntry | RunLogEntry)[],
): Extract<RunLogEntry, { type: "tool_result" }>[] {
  return entries
    .map((raw) => raw as unknown as RunLogEntry)
    .filter((entry) => entry.type === "tool_result");
}
