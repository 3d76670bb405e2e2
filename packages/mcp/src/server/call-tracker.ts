/**
 * Keeps the calls a server is running, so `close()` can refuse new ones and wait for the
 * others to settle (M14). One tracker serves every connection of a `serveMcp` server.
 */
export class CallTracker {
  readonly #inFlight = new Set<Promise<unknown>>();
  #closing = false;

  /** `true` once `close()` began: new calls are refused. */
  get closing(): boolean {
    return this.#closing;
  }

  /** How many calls are running. */
  get inFlight(): number {
    return this.#inFlight.size;
  }

  /**
   * Runs a call and keeps it until it settles.
   *
   * @param call - Starts the call; called at once.
   */
  track<T>(call: () => Promise<T>): Promise<T> {
    const running = call();
    const kept: Promise<unknown> = running.then(
      () => this.#inFlight.delete(kept),
      () => this.#inFlight.delete(kept),
    );
    this.#inFlight.add(kept);
    return running;
  }

  /** Refuses new calls from now on and resolves once every call in flight has settled. */
  async drain(): Promise<void> {
    this.#closing = true;
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }
}
