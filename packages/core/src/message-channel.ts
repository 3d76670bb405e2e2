/**
 * A push-to-pull queue: the loop pushes messages as they happen (including from agent tools
 * running inside a batch), the caller pulls them with `for await`.
 */
export class MessageChannel<T> implements AsyncIterator<T> {
  private readonly buffer: T[] = [];
  private head = 0;
  private waiting: ((result: IteratorResult<T>) => void) | undefined;
  private rejectWaiting: ((error: unknown) => void) | undefined;
  private closed = false;
  private failure: { error: unknown } | undefined;

  /** Adds a message; ignored once the channel is closed. */
  push(value: T): void {
    if (this.closed) return;
    const resolve = this.waiting;
    if (resolve !== undefined) {
      this.waiting = undefined;
      this.rejectWaiting = undefined;
      resolve({ value, done: false });
      return;
    }
    this.buffer.push(value);
  }

  /** Ends the stream after the buffered messages, or with `error` after them. */
  close(error?: { error: unknown }): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    if (this.waiting !== undefined && this.head >= this.buffer.length) this.settleWaiting();
  }

  next(): Promise<IteratorResult<T>> {
    if (this.head < this.buffer.length) {
      const value = this.buffer[this.head] as T;
      this.buffer[this.head] = undefined as T;
      this.head++;
      if (this.head === this.buffer.length) {
        this.buffer.length = 0;
        this.head = 0;
      }
      return Promise.resolve({ value, done: false });
    }
    if (this.closed) {
      return this.failure !== undefined
        ? Promise.reject(this.takeFailure())
        : Promise.resolve({ value: undefined, done: true });
    }
    return new Promise((resolve, reject) => {
      this.waiting = resolve;
      this.rejectWaiting = reject;
    });
  }

  private takeFailure(): unknown {
    const failure = this.failure;
    this.failure = undefined;
    return failure?.error;
  }

  private settleWaiting(): void {
    const resolve = this.waiting;
    const reject = this.rejectWaiting;
    this.waiting = undefined;
    this.rejectWaiting = undefined;
    if (this.failure !== undefined) reject?.(this.takeFailure());
    else resolve?.({ value: undefined, done: true });
  }
}
