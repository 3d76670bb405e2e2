/** The longest delay setTimeout honours (about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647;

/** Which limit ended an attempt. */
export type AttemptTimeout = "idle" | "deadline";

/**
 * The abort controller of one HTTP attempt: aborted when the caller's signal aborts, when no
 * progress was made for `timeoutMs` (waiting for headers, or between decoded events), or when
 * the attempt as a whole ran past `requestTimeoutMs` (H4).
 *
 * One timer per attempt; `touch()` only records the time, so the cost per event is one
 * `Date.now()`. Callers touch on progress only: response headers and decoded events, never
 * raw bytes, so a server that trickles bytes or comments cannot keep an attempt alive.
 */
export class AttemptController {
  /** The signal to pass to `fetch`. */
  readonly signal: AbortSignal;
  /** Which limit aborted the attempt, if one did. */
  timedOut: AttemptTimeout | undefined;
  readonly #controller = new AbortController();
  readonly #parent: AbortSignal | undefined;
  readonly #timeoutMs: number;
  readonly #deadline: number;
  #lastActivity = Date.now();
  #timer: ReturnType<typeof setTimeout> | undefined;

  /**
   * @param parent - The caller's signal, if any.
   * @param timeoutMs - The longest wait for progress; `Infinity` disables it.
   * @param requestTimeoutMs - The longest the whole attempt may take; `Infinity` disables it.
   */
  constructor(parent: AbortSignal | undefined, timeoutMs: number, requestTimeoutMs = Infinity) {
    this.signal = this.#controller.signal;
    this.#parent = parent;
    this.#timeoutMs = timeoutMs > 0 ? timeoutMs : Infinity;
    this.#deadline = requestTimeoutMs > 0 ? this.#lastActivity + requestTimeoutMs : Infinity;
    if (parent !== undefined) {
      if (parent.aborted) this.#controller.abort(parent.reason);
      else parent.addEventListener("abort", this, { once: true });
    }
    this.#schedule();
  }

  /** Records progress, postponing the idle timeout (not the deadline). */
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

  /** Arms the timer for whichever limit comes first; none when both are infinite. */
  #schedule(): void {
    const due = Math.min(this.#lastActivity + this.#timeoutMs, this.#deadline);
    if (!Number.isFinite(due)) return;
    // setTimeout fires after 1 ms for delays above 2^31 - 1: wait in steps no longer than that.
    const delay = Math.min(Math.max(due - Date.now(), 1), MAX_TIMER_MS);
    this.#timer = setTimeout(() => this.#check(), delay);
    (this.#timer as { unref?: () => void }).unref?.();
  }

  #check(): void {
    this.#timer = undefined;
    const now = Date.now();
    const kind: AttemptTimeout | undefined =
      now >= this.#deadline
        ? "deadline"
        : now - this.#lastActivity >= this.#timeoutMs
          ? "idle"
          : undefined;
    if (kind === undefined) {
      this.#schedule();
      return;
    }
    this.timedOut = kind;
    this.#controller.abort(new DOMException("The model request timed out.", "TimeoutError"));
  }
}
