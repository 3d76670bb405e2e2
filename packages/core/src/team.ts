import type { Mailbox } from "./mailbox.js";
import type { SDKResultMessage } from "./sdk-message.js";

/** Options of {@link Team.run}. Checked strictly. */
export interface TeamRunOptions {
  /** Aborts this run (and the agents it calls); the promise rejects with an `AbortError`. */
  readonly signal?: AbortSignal;
}

/** A group of member agents over one mailbox: what {@link createTeam} returns. */
export interface Team {
  /** The members' names, in the order given. */
  readonly members: readonly string[];
  /** The team's mailbox. Posting to it delivers like a handoff: the recipient runs the task. */
  readonly mailbox: Mailbox;
  /** Whether {@link Team.abort} was called. */
  readonly aborted: boolean;
  /**
   * Gives `member` a task from outside the team and resolves with the result of the run that
   * works on it. Runs it starts through handoffs go on after that; await {@link Team.idle}.
   *
   * @throws {@link HandoffError} (`unknown_member`) for a name that is not a member.
   * @throws an error named `"AbortError"` when `options.signal` aborts the run, or when the
   *   team is aborted: then `"The team was aborted..."`, once every run the team had started
   *   has settled.
   * @throws the mailbox's error when posting the task fails.
   */
  run(member: string, task: string, options?: TeamRunOptions): Promise<SDKResultMessage>;
  /**
   * Resolves when the team is idle: no member running and every member's mailbox empty.
   * After {@link Team.abort}, resolves once every run has settled.
   *
   * @throws the mailbox's error when it failed to deliver.
   */
  idle(): Promise<void>;
  /**
   * Aborts every running run (and the agents they call) and starts no more. Messages taken
   * from the mailbox but not yet run go back to it. Pending `run()` promises reject with an
   * `AbortError` ("The team was aborted: <reason>. ...") once every run the team had started
   * has settled, so their tool handlers have settled too; tasks still waiting never started.
   * Later `run()` calls reject at once.
   */
  abort(reason?: unknown): void;
}
