import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";

/**
 * One message in a team's {@link Mailbox}: a task handed off to a member (`kind: "task"`), or
 * the result of such a task sent back to the member that handed it off (`kind: "reply"`).
 *
 * Every field is plain JSON, so a durable mailbox can store messages as they are.
 */
export interface MailboxMessage {
  /** A unique id, for example `"mail_3f2c…"`. */
  readonly id: string;
  /** `"task"` for a handoff, `"reply"` for the result of one. */
  readonly kind: "task" | "reply";
  /** The member that sent it; `"user"` for tasks given from outside the team (`team.run`). */
  readonly from: string;
  /** The member it is for. */
  readonly to: string;
  /** The task, as the sender wrote it (a reply repeats the task it answers). */
  readonly task: string;
  /** When it was posted, as an ISO 8601 string. */
  readonly createdAt: string;
  /**
   * The agents that led to this message, from the first one to the recipient, for example
   * `["lead", "writer"]`. Its length bounds handoff cycles (`maxDepth`).
   */
  readonly chain: readonly string[];
  /** For a reply: the id of the task it answers. */
  readonly inReplyTo?: string;
  /** For a reply: the recipient's result text (or what went wrong). */
  readonly result?: string;
  /** For a reply: `true` when the run that worked on the task failed. */
  readonly isError?: boolean;
}

/**
 * Where handed-off tasks and their replies wait for their recipient. Small on purpose, so a
 * durable implementation (a database table, a queue) can replace the in-memory default.
 *
 * Contract: `post` stores a message for `message.to`; `take(member)` removes and returns that
 * member's messages in the order they were posted; `size(member)` counts a member's waiting
 * messages, `size()` every waiting message. Each method may be sync or async.
 */
export interface Mailbox {
  /** Stores a message for `message.to`. */
  post(message: MailboxMessage): void | Promise<void>;
  /** Removes and returns every message waiting for `member`, oldest first. */
  take(member: string): readonly MailboxMessage[] | Promise<readonly MailboxMessage[]>;
  /** How many messages wait for `member`, or for anyone when `member` is omitted. */
  size(member?: string): number | Promise<number>;
}

/**
 * Creates a {@link Mailbox} that keeps messages in memory, in posting order per member. The
 * default mailbox of `createTeam`; messages are lost when the process exits.
 */
export function createInMemoryMailbox(): Mailbox {
  const queues = new Map<string, MailboxMessage[]>();
  return Object.freeze({
    post(message: MailboxMessage): void {
      const queue = queues.get(message.to);
      if (queue === undefined) queues.set(message.to, [message]);
      else queue.push(message);
    },
    take(member: string): readonly MailboxMessage[] {
      const queue = queues.get(member);
      if (queue === undefined) return [];
      queues.delete(member);
      return queue;
    },
    size(member?: string): number {
      if (member !== undefined) return queues.get(member)?.length ?? 0;
      let total = 0;
      for (const queue of queues.values()) total += queue.length;
      return total;
    },
  });
}

/**
 * Throws unless `value` has the three methods of a {@link Mailbox}.
 *
 * @param value - The value given as a mailbox.
 * @param prefix - Who owns the option, for the message.
 */
export function assertMailbox(value: unknown, prefix: string): asserts value is Mailbox {
  const mailbox = value as Partial<Mailbox> | null;
  if (
    mailbox === null ||
    typeof mailbox !== "object" ||
    typeof mailbox.post !== "function" ||
    typeof mailbox.take !== "function" ||
    typeof mailbox.size !== "function"
  ) {
    throw new InvalidOptionError(
      prefix,
      "mailbox",
      `must be a Mailbox { post, take, size }, such as createInMemoryMailbox(), received ${describeValue(value)}.`,
    );
  }
}
