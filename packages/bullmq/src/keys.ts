/** Lattice's own Redis keys of one queue, beside BullMQ's. Internal. */
export class RunKeys {
  private readonly base: string;

  /**
   * @param prefix - The BullMQ prefix (default `"lattice"`).
   * @param queueName - The queue's name.
   */
  constructor(prefix: string, queueName: string) {
    this.base = `${prefix}:${queueName}:runs`;
  }

  /** Hash: the run's agent, session and state. */
  run(runId: string): string {
    return `${this.base}:run:${runId}`;
  }

  /** Stream: the run's messages and control records, for `events()` and `result()`. */
  events(runId: string): string {
    return `${this.base}:events:${runId}`;
  }

  /** String: set when the run was aborted, with the reason. */
  abort(runId: string): string {
    return `${this.base}:abort:${runId}`;
  }

  /** String: the token of the worker holding the session (one step at a time, D10). */
  lease(sessionId: string): string {
    return `${this.base}:lease:${sessionId}`;
  }

  /** String: the session's last lease fence, so that the next one is higher (H28). */
  fence(sessionId: string): string {
    return `${this.base}:fence:${sessionId}`;
  }

  /** Hash: the session's latest run and its agent, for `resume(sessionId)`. */
  session(sessionId: string): string {
    return `${this.base}:session:${sessionId}`;
  }

  /** List: texts of replies to the session's handoffs, waiting for its next model call (D8). */
  inbox(sessionId: string): string {
    return `${this.base}:inbox:${sessionId}`;
  }

  /** List: runs enqueued on the session that have not started, oldest first (D10). */
  waiting(sessionId: string): string {
    return `${this.base}:waiting:${sessionId}`;
  }

  /** Pub/sub channel: run ids to abort, heard by every worker. */
  get abortChannel(): string {
    return `${this.base}:aborts`;
  }
}

/** The BullMQ job id of a run's step: `run:<runId>:<step>` (D4). Internal. */
export function stepJobId(runId: string, step: number | string): string {
  return `run:${runId}:${step}`;
}
