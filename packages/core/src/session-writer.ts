import type { SessionEntry, SessionStore } from "./session-store.js";

/**
 * Appends a run's entries to its session, in order, one compare-and-append at a time: entries
 * that arrive while an append is in flight go together in the next one. Internal.
 */
export class SessionWriter {
  readonly store: SessionStore;
  readonly sessionId: string;
  /** The session's version after the last successful append. */
  version: number;
  /** The first failure; once set, nothing more is appended. */
  failure: unknown;
  private queue: SessionEntry[] = [];
  private inFlight: Promise<void> | undefined;

  constructor(store: SessionStore, sessionId: string, version: number) {
    this.store = store;
    this.sessionId = sessionId;
    this.version = version;
  }

  /** Queues an entry; it is appended after every entry queued before it. */
  push(entry: SessionEntry): void {
    if (this.failure !== undefined) return;
    this.queue.push(entry);
    this.inFlight ??= this.drain();
  }

  /** Resolves once every queued entry is appended; with the failure when an append failed. */
  async flush(): Promise<unknown> {
    while (this.inFlight !== undefined) await this.inFlight;
    return this.failure;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0 && this.failure === undefined) {
      const entries = this.queue;
      this.queue = [];
      try {
        this.version = await this.store.append(this.sessionId, this.version, entries);
      } catch (error) {
        this.failure = error ?? new Error("the store rejected without a reason");
      }
    }
    this.inFlight = undefined;
  }
}
