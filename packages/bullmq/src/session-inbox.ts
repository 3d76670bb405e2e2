import { randomUUID } from "node:crypto";
import {
  type Mailbox,
  type MailboxMessage,
  mailboxMessageText,
  mailboxReply,
  type SDKResultMessage,
} from "@lattice/core";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import { type RunKeys, stepJobId } from "./keys.js";
import { type RunRecords, type RunReplyTo, runHasEnded } from "./run-records.js";
import { STEP_JOB_NAME, type StepJobData } from "./step-job.js";

// Pushes a reply to the sender's inbox unless this run already replied.
const REPLY_ONCE = `if redis.call("HSETNX", KEYS[1], "replied", "1") == 1 then
  redis.call("RPUSH", KEYS[2], ARGV[1])
end
return 0`;

/** What a run's result says as a reply to the session that handed its task off. Internal. */
export interface ReplyText {
  readonly text: string;
  readonly isError: boolean;
}

/** What a run's result says as a reply to the session that handed the task off. Internal. */
export function resultText(agentName: string, result: SDKResultMessage): ReplyText {
  if (!result.isError) return { text: result.result, isError: false };
  const detail = result.errors.length > 0 ? result.errors.join(" ") : result.subtype;
  return { text: `Agent "${agentName}" failed: ${detail}`, isError: true };
}

/** The replies a step read from its session's inbox, removed once the step is stored. Internal. */
export interface PeekedInbox {
  /** Reads every reply waiting (a step's `takeMail`). */
  take(): Promise<string[]>;
  /** The command that removes the replies read, if any. */
  trim(): string[][];
}

/** What a {@link SessionInbox} works on. Internal. */
export interface SessionInboxSettings {
  readonly client: Redis;
  readonly keys: RunKeys;
  /** The run queue, where handoffs and replies start runs. */
  readonly queue: Queue<StepJobData>;
  readonly records: RunRecords;
}

/**
 * Team mail across workers (D8): each session's inbox of replies to its handoffs, the mailbox
 * through which a step's handoffs become runs on the queue, and the replies a run sends back
 * once it ended. A reply that reaches a session whose latest run has ended starts its next run,
 * as a team member starts a run on a reply that arrives after its run ended. Internal.
 */
export class SessionInbox {
  readonly #client: Redis;
  readonly #keys: RunKeys;
  readonly #queue: Queue<StepJobData>;
  readonly #records: RunRecords;

  /** @param settings - The client, the queue's keys, the run queue and the run records. */
  constructor(settings: SessionInboxSettings) {
    this.#client = settings.client;
    this.#keys = settings.keys;
    this.#queue = settings.queue;
    this.#records = settings.records;
  }

  /**
   * The replies waiting for a session, left in its inbox until the step that reads them has
   * stored them (`trim` says how to remove them then): a step cut before that leaves them for
   * the next one. A step stored but cut before the trim delivers them again (at-least-once).
   */
  peek(sessionId: string): PeekedInbox {
    const key = this.#keys.inbox(sessionId);
    let read = 0;
    return {
      take: async (): Promise<string[]> => {
        const texts = await this.#client.lrange(key, 0, -1);
        read = texts.length;
        return texts;
      },
      trim: (): string[][] => (read > 0 ? [["ltrim", key, String(read), "-1"]] : []),
    };
  }

  /** The mailbox of a step's handoffs: each one becomes a run on the queue (D8). */
  mailbox(senderSession: string): Mailbox {
    return {
      post: async (mail: MailboxMessage) => {
        await this.#startRun(
          {
            agentName: mail.to,
            sessionId: `handoff-${mail.id}`,
            runId: randomUUID(),
            prompt: mailboxMessageText(mail),
            chain: mail.chain,
          },
          { sessionId: senderSession, mail },
        );
      },
      // Replies reach the sender through its session's inbox, never through take().
      take: () => [],
      size: () => 0,
    };
  }

  /**
   * After a run ended: a run that worked on a handoff sends its result back to the session
   * that handed it off (D8), once even when its last job is delivered twice, and replies that
   * reached this session meanwhile start its next run.
   */
  async afterRunEnded(runId: string, sessionId: string, outcome: ReplyText): Promise<void> {
    const replyTo = await this.#records.replyTo(runId);
    if (replyTo !== undefined) {
      const reply = mailboxReply(replyTo.mail, outcome.text, outcome.isError);
      await this.#client.eval(
        REPLY_ONCE,
        2,
        this.#keys.run(runId),
        this.#keys.inbox(replyTo.sessionId),
        mailboxMessageText(reply),
      );
      await this.#drain(replyTo.sessionId);
    }
    await this.#drain(sessionId);
  }

  /** Starts a run on the replies waiting for a session whose latest run has ended (D8). */
  async #drain(sessionId: string): Promise<void> {
    const latest = await this.#records.latestRun(sessionId);
    if (latest.runId === undefined || latest.agentName === undefined) return;
    if (!runHasEnded(await this.#records.state(latest.runId))) return;
    const texts = await this.#take(sessionId);
    if (texts.length === 0) return;
    await this.#startRun({
      agentName: latest.agentName,
      sessionId,
      runId: randomUUID(),
      prompt: texts.join("\n\n"),
    });
  }

  /** Takes every reply waiting for a session, atomically (D8). */
  async #take(sessionId: string): Promise<string[]> {
    const replies = await this.#client
      .multi()
      .lrange(this.#keys.inbox(sessionId), 0, -1)
      .del(this.#keys.inbox(sessionId))
      .exec();
    return (replies?.[0]?.[1] as string[] | undefined) ?? [];
  }

  /** Adds a run's first job, and records it, as `queue.enqueue()` does. */
  async #startRun(data: Omit<StepJobData, "v" | "step">, replyTo?: RunReplyTo): Promise<void> {
    await this.#records.addQueued(data, replyTo);
    const first: StepJobData = { v: 1, ...data, step: 0 };
    await this.#queue.add(STEP_JOB_NAME, first, { jobId: stepJobId(data.runId, 0) });
  }
}
