import {
  type SessionAppendOptions,
  type SessionEntry,
  SessionFencedError,
  type SessionStore,
} from "./session-store.js";
import { leaseLapsed } from "./step-lease.js";

/** How a writer's appends are fenced by the lease its step runs under (H28). Internal. */
export interface WriterFencing {
  /** The lease's fence, carried by every append. */
  readonly fence: number;
  /** Whether the lease still holds: consulted before each append is sent. */
  held(): boolean;
  /** Told once when an append is refused for the fence, by `held()` or by the store. */
  fenced(error: SessionFencedError): void;
}

/**
 * Appends a run's entries to its session, in order, one compare-and-append at a time: entries
 * that arrive while an append is in flight go together in the next one. With `fencing`, every
 * append carries the lease's fence, and none is sent once the lease no longer holds (H28).
 * Internal.
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
  /** Whether `drain()` is running (it may end without awaiting: an append refused unsent). */
  private draining = false;
  private readonly fencing: WriterFencing | undefined;
  private readonly appendOptions: SessionAppendOptions | undefined;
  /** Whether an append of this writer has carried the fence to the store. */
  private fenceRaised = false;
  /** Whether an append of no entries is asked for, to raise the fence. */
  private raising = false;

  constructor(store: SessionStore, sessionId: string, version: number, fencing?: WriterFencing) {
    this.store = store;
    this.sessionId = sessionId;
    this.version = version;
    this.fencing = fencing;
    this.appendOptions = fencing === undefined ? undefined : { fence: fencing.fence };
  }

  /** Queues an entry; it is appended after every entry queued before it. */
  push(entry: SessionEntry): void {
    if (this.failure !== undefined) return;
    this.queue.push(entry);
    this.startDrain();
  }

  /**
   * With fencing, raises the session's fence in the store (an append of no entries) unless an
   * append of this writer already carried it; `flush()` tells how it went.
   */
  raiseFence(): void {
    if (this.fencing === undefined || this.fenceRaised || this.failure !== undefined) return;
    this.raising = true;
    this.startDrain();
  }

  /** Resolves once every queued entry is appended; with the failure when an append failed. */
  async flush(): Promise<unknown> {
    while (this.inFlight !== undefined) await this.inFlight;
    return this.failure;
  }

  private startDrain(): void {
    if (this.draining) return;
    const drained = this.drain();
    // A drain that ended without awaiting has nothing in flight.
    if (this.draining) this.inFlight = drained;
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while ((this.queue.length > 0 || this.raising) && this.failure === undefined) {
      const entries = this.queue;
      this.queue = [];
      this.raising = false;
      try {
        if (this.fencing === undefined) {
          this.version = await this.store.append(this.sessionId, this.version, entries);
          continue;
        }
        if (entries.length === 0 && this.fenceRaised) continue;
        if (!this.fencing.held()) throw leaseLapsed(this.sessionId, this.fencing.fence);
        this.version = await this.store.append(
          this.sessionId,
          this.version,
          entries,
          this.appendOptions,
        );
        this.fenceRaised = true;
      } catch (error) {
        this.failure = error ?? new Error("the store rejected without a reason");
        if (this.fencing !== undefined && error instanceof SessionFencedError) {
          this.fencing.fenced(error);
        }
      }
    }
    this.draining = false;
    this.inFlight = undefined;
  }
}
