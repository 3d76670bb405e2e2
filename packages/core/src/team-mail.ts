import type { MailboxMessage } from "./mailbox.js";
import { prefixedRandomId } from "./random-id.js";

/**
 * The sender of tasks given to a team from outside (`team.run`): a name no member may take.
 * A member's prompt shows such a task as written, without a sender.
 */
export const OUTSIDE_SENDER = "user";

/**
 * How a mailbox message reads to the member it is for, as a team shows it: a task as written
 * (with who handed it off), a reply as `Reply from "writer" to the task you handed off (...)`
 * followed by the result. For runners that deliver mail themselves (`StepOptions.takeMail`).
 *
 * @param mail - A task or a reply.
 */
export function mailboxMessageText(mail: MailboxMessage): string {
  if (mail.kind === "reply") {
    const about = `the task you handed off ("${shorten(mail.task)}")`;
    return mail.isError === true
      ? `"${mail.from}" failed ${about}:\n\n${mail.result ?? ""}`
      : `Reply from "${mail.from}" to ${about}:\n\n${mail.result ?? ""}`;
  }
  if (mail.from === OUTSIDE_SENDER) return mail.task;
  return `"${mail.from}" handed you this task:\n\n${mail.task}`;
}

/**
 * The reply to a handed-off task, as a team posts it back to the sender when the member's run
 * ends: from the member, to the task's sender, with the run's result text (or what went
 * wrong, with `isError`).
 *
 * @param task - The task message (`kind: "task"`) being answered.
 * @param result - The member's result text, or the failure.
 * @param isError - Whether the member's run failed.
 */
export function mailboxReply(
  task: MailboxMessage,
  result: string,
  isError: boolean,
): MailboxMessage {
  return {
    id: prefixedRandomId("mail_"),
    kind: "reply",
    from: task.to,
    to: task.from,
    task: task.task,
    createdAt: new Date().toISOString(),
    chain: [...task.chain, task.from],
    inReplyTo: task.id,
    result,
    ...(isError ? { isError: true } : {}),
  };
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
