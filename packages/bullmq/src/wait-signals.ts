/** One wait's signal, and how to let go of it once the wait settles. Internal. */
export interface OpenWait {
  /** Aborts when the caller's signal aborts or the queue closes. */
  readonly signal: AbortSignal;
  /** Forgets the wait: call it once the wait has settled, however it settled. */
  release(): void;
}

/**
 * The waits of a queue in progress (`result()`, `events()`, `resume()`), each ended by the
 * queue's `close()`: one `AbortController` per wait, kept in a set until the wait settles.
 * Nothing listens on a signal shared by all waits, so any number of waits at once print no
 * `MaxListenersExceededWarning`, and a settled wait leaves nothing behind (`AbortSignal.any`
 * over one long-lived signal would: Node 20 keeps an entry per call on its source). Internal.
 */
export class WaitSignals {
  readonly #waits = new Set<AbortController>();
  #closed: { readonly reason: unknown } | undefined;

  /** How many waits are open. */
  get size(): number {
    return this.#waits.size;
  }

  /**
   * Opens a wait whose signal aborts with `signal` (the caller's, if any) or when
   * {@link WaitSignals.closeAll} is called; at once when that was called before.
   */
  open(signal: AbortSignal | undefined): OpenWait {
    const controller = new AbortController();
    if (this.#closed !== undefined) controller.abort(this.#closed.reason);
    else this.#waits.add(controller);
    return {
      // The caller's signal and this wait's own, both as short-lived as the wait.
      signal:
        signal === undefined ? controller.signal : AbortSignal.any([signal, controller.signal]),
      release: () => {
        this.#waits.delete(controller);
      },
    };
  }

  /** Aborts every open wait with `reason`, and every wait opened from now on. */
  closeAll(reason: unknown): void {
    this.#closed = { reason };
    for (const controller of this.#waits) controller.abort(reason);
    this.#waits.clear();
  }
}
