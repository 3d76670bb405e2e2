/** The longest delay setTimeout honours (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The abort controller of one HTTP attempt: aborted when the caller's signal aborts, or when
 * no data arrived for `timeoutMs` (waiting for headers, or between stream chunks).
 *
 * One timer per attempt; `touch()` only records the time, so the per-chunk cost is one
 * `Date.now()`.
 */
export class AttemptController {
  /** The signal to pass to `fetch`. */
  readonly signal: AbortSignal;
  /** Whether the attempt was aborted because of the timeout. */
  timedOut = false;
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #lastActivity = Date.now();
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param parent - The caller's signal, if any.
   * @param timeoutMs - The longest wait for data; `Infinity` disables the timer.
   */
  constructor(parent: AbortSignal | undefined, timeoutMs: number) {
    this.signal = this.#controller.signal;
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    if (parent !== undefined) {
      if (parent.aborted) this.#controller.abort(parent.reason);
      else parent.addEventListener("abort", this, { once: true });
    }
    if (timeoutMs > 0 && Number.isFinite(timeoutMs)) this.#schedule(timeoutMs);
  }

  /** Records that data arrived, postponing the timeout. */
  touch(): void {
    this.#lastActivity = Date.now();
  }

  /** Aborts the attempt (for example when the consumer stopped reading early). */
  abort(): void {
    if (!this.#controller.signal.aborted) this.#controller.abort();
  }

  /** Stops the timer and detaches from the caller's signal. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#parent?.removeEventListener("abort", this);
  }

  /** Forwards the caller's abort; an `EventListenerObject`, so no closure is allocated. */
  handleEvent(): void {
    this.#controller.abort(this.#parent?.reason);
  }

  #schedule(ms: number): void {
    // setTimeout fires after 1 ms for delays above 2^31 - 1: wait in steps no longer than that.
    this.#timer = setTimeout(() => this.#check(), Math.min(ms, MAX_TIMER_MS));
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #check(): void {
    const idle = Date.now() - this.#lastActivity;
    if (idle >= this.#timeoutMs) {
      this.timedOut = true;
      this.#timer = undefined;
      this.#controller.abort(new DOMException("The model request timed out.", "TimeoutError"));
    } else {
      this.#schedule(this.#timeoutMs - idle);
    }
  }
}
