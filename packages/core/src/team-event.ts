import type { MailboxMessage } from "./mailbox.js";
import type { SDKMessage, SDKResultMessage } from "./sdk-message.js";

/** Fields every team event carries. */
export interface TeamEventBase {
  /** Monotonic timestamp in milliseconds (`performance.now()`). */
  readonly time: number;
}

/** A message entered the mailbox: a handoff (`kind: "task"`) or a reply. */
export interface TeamMailPostedEvent extends TeamEventBase {
  readonly type: "mail_posted";
  readonly mail: MailboxMessage;
}

/** A member started a run on a message: a task (from `team.run` or a handoff), or a reply that arrived after its last run ended. */
export interface TeamRunStartedEvent extends TeamEventBase {
  readonly type: "run_started";
  /** The team's id of the run: `"run_1"`, `"run_2"`, ... */
  readonly runId: string;
  readonly member: string;
  /** The message the run works on. */
  readonly mail: MailboxMessage;
  /** How deep the run stands in its chain of agents (the first agent is 0). */
  readonly depth: number;
}

/** A reply reached a member while it was running: it is appended to its next model turn. */
export interface TeamMailDeliveredEvent extends TeamEventBase {
  readonly type: "mail_delivered";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
}

/** A member's run ended with a result message (which may be an error result). */
export interface TeamRunFinishedEvent extends TeamEventBase {
  readonly type: "run_finished";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
  readonly result: SDKResultMessage;
}

/** A member's run was aborted or threw. */
export interface TeamRunFailedEvent extends TeamEventBase {
  readonly type: "run_failed";
  readonly runId: string;
  readonly member: string;
  readonly mail: MailboxMessage;
  /** An error named `AbortError` when the run was aborted. */
  readonly error: unknown;
}

/**
 * A message of a member's run, as `agent.query()` would yield it; messages of agents it
 * called (agent tools in "call" mode) carry their `parentToolUseId`.
 */
export interface TeamAgentMessageEvent extends TeamEventBase {
  readonly type: "agent_message";
  readonly runId: string;
  readonly member: string;
  readonly message: SDKMessage;
}

/** Everything `onEvent` receives: who did what, in order. */
export type TeamEvent =
  | TeamMailPostedEvent
  | TeamRunStartedEvent
  | TeamMailDeliveredEvent
  | TeamRunFinishedEvent
  | TeamRunFailedEvent
  | TeamAgentMessageEvent;
