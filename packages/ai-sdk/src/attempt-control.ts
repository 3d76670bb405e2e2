/** The longest delay setTimeout honours (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * The abort controller of one attempt: aborted when the caller's signal aborts, when the
 * bridge stops early, or when the model made no progress for `timeoutMs` (no answer to the
 * call, or no stream part).
 *
 * One timer per attempt; `touch()` only records the time, so a stream part costs one
 * `Date.now()`. `onAbort` runs once, whatever aborted the attempt (it cancels the stream
 * reader, which ends a pending read even when the model ignores its abort signal).
 */
export class AttemptControl {
  /** The signal passed to the model as `abortSignal`. */
  readonly signal: AbortSignal;
  /** Whether the idle timeout aborted the attempt. */
  timedOut = false;
  /** Called once when the attempt aborts. */
  onAbort: (() => void) | undefined;
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  #lastActivity = Date.now();
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param parent - The caller's signal, if any.
   * @param timeoutMs - The longest wait for progress; `Infinity` disables it.
   */
  constructor(parent: AbortSignal | undefined, timeoutMs: number) {
    this.signal = this.#controller.signal;
    this.#parent = parent;
    this.#timeoutMs = timeoutMs;
    if (parent !== undefined) {
      if (parent.aborted) this.#abort(parent.reason);
      else parent.addEventListener("abort", this, { once: true });
    }
    this.#schedule();
  }

  /** Records progress, postponing the idle timeout. */
  touch(): void {
    this.#lastActivity = Date.now();
  }

  /** Aborts the attempt (the consumer stopped reading, or the attempt failed). */
  abort(): void {
    this.#abort(undefined);
  }

  /**
   * A promise that rejects when the attempt aborts, to race against a model call that may
   * ignore its signal. Resolves never.
   */
  aborted(): Promise<never> {
    return new Promise<never>((_resolve, reject) => {
      const fail = (): void => reject(this.signal.reason);
      if (this.signal.aborted) fail();
      else this.signal.addEventListener("abort", fail, { once: true });
    });
  }

  /** Stops the timer and detaches from the caller's signal. */
  dispose(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#parent?.removeEventListener("abort", this);
  }

  /** Forwards the caller's abort; an `EventListenerObject`, so no closure is allocated. */
  handleEvent(): void {
    this.#abort(this.#parent?.reason);
  }

  #abort(reason: unknown): void {
    if (this.#controller.signal.aborted) return;
    this.#controller.abort(reason);
    const onAbort = this.onAbort;
    this.onAbort = undefined;
    onAbort?.();
  }

  #schedule(): void {
    if (!Number.isFinite(this.#timeoutMs)) return;
    const due = this.#lastActivity + this.#timeoutMs;
    const delay = Math.min(Math.max(due - Date.now(), 1), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#check(), delay);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #check(): void {
    this.#timer = undefined;
    if (this.#controller.signal.aborted) return;
    if (Date.now() - this.#lastActivity < this.#timeoutMs) {
      this.#schedule();
      return;
    }
    this.timedOut = true;
    this.#abort(new DOMException("The model request timed out.", "TimeoutError"));
  }
}
