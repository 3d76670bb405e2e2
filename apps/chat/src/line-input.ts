/**
 * The lines typed at the terminal (or piped in), as a queue: the chat loop takes the next
 * line as a prompt or a command, and the `ask_user` tool takes it as an answer while a run
 * waits. Lines that arrive while nobody waits are kept, in order.
 */
export class LineInput {
  readonly #lines: string[] = [];
  readonly #waiting: Array<(line: string | undefined) => void> = [];
  #closed = false;

  /** Whether the input has ended (end of file, Ctrl-D, or {@link LineInput.close}). */
  get closed(): boolean {
    return this.#closed;
  }

  /**
   * Adds a line: it goes to the oldest waiting reader, or is kept for the next one.
   *
   * @param line - The line, without its line break.
   */
  push(line: string): void {
    const reader = this.#waiting.shift();
    if (reader !== undefined) reader(line);
    else this.#lines.push(line);
  }

  /** Ends the input: waiting readers get `undefined`, and so does every later `next()`. */
  close(): void {
    this.#closed = true;
    for (const reader of this.#waiting.splice(0)) reader(undefined);
  }

  /**
   * Takes the next line.
   *
   * @param signal - Stops waiting: the promise rejects with an `AbortError`.
   * @returns The line, or `undefined` once the input has ended and every line was taken.
   */
  next(signal?: AbortSignal): Promise<string | undefined> {
    if (signal?.aborted) return Promise.reject(abortReason(signal));
    const line = this.#lines.shift();
    if (line !== undefined) return Promise.resolve(line);
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => {
      const reader = (value: string | undefined): void => {
        signal?.removeEventListener("abort", onAbort);
        resolve(value);
      };
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(reader);
        if (index >= 0) this.#waiting.splice(index, 1);
        reject(abortReason(signal!));
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.push(reader);
    });
  }
}

function abortReason(signal: AbortSignal): Error {
  return signal.reason instanceof Error
    ? signal.reason
    : new DOMException("Stopped waiting for a line: the run was aborted.", "AbortError");
}
