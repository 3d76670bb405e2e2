import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";

/**
 * How long Grep's worker thread may take over one line too long to search on the main
 * thread, in milliseconds. A line that takes longer is reported as not searched, and so is
 * every long line after it in the same call.
 */
export const LONG_LINE_TIME_LIMIT_MS = 5000;

/** The worker's code: it compiles the pattern once, then answers one line at a time. */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { RE2JS } = require(workerData.engine);
const pattern = RE2JS.compile(workerData.pattern, workerData.flags);
parentPort.on("message", (line) => parentPort.postMessage(pattern.test(line)));
`;

/**
 * Tests lines that are too long for the main thread (RE2 is linear in the line's length
 * times the pattern's size, which for a large pattern over a megabyte-long minified line
 * means seconds) on a worker thread, started on first use, with a time limit; an abort
 * terminates it at once. Internal: Grep makes one per call and closes it at the end.
 */
export class LongLineSearcher {
  readonly #pattern: string;
  readonly #flags: number;
  #worker: Worker | undefined;
  #gaveUp = false;

  /**
   * @param pattern - The RE2 pattern, already known to compile.
   * @param flags - `re2js` flags.
   */
  constructor(pattern: string, flags: number) {
    this.#pattern = pattern;
    this.#flags = flags;
  }

  /**
   * Whether `line` matches; `undefined` when it was not searched: the time limit passed
   * (on this line or an earlier one), the worker failed, or `signal` aborted.
   */
  test(line: string, signal: AbortSignal): Promise<boolean | undefined> {
    if (this.#gaveUp || signal.aborted) return Promise.resolve(undefined);
    this.#worker ??= new Worker(WORKER_SOURCE, {
      eval: true,
      // A line is at most Grep's maxFileBytes; a worker that needs more fails, and the line
      // is reported as not searched.
      resourceLimits: { maxOldGenerationSizeMb: 256 },
      workerData: {
        engine: createRequire(import.meta.url).resolve("re2js"),
        pattern: this.#pattern,
        flags: this.#flags,
      },
    });
    const worker = this.#worker;
    return new Promise((resolve) => {
      const finish = (matched: boolean | undefined): void => {
        clearTimeout(timer);
        signal.removeEventListener("abort", onAbort);
        worker.off("message", onMessage);
        worker.off("error", onError);
        if (matched === undefined) {
          this.#gaveUp = !signal.aborted || this.#gaveUp;
          this.close();
        }
        resolve(matched);
      };
      const onMessage = (matched: unknown): void => finish(matched === true);
      const onError = (): void => finish(undefined);
      const onAbort = (): void => finish(undefined);
      const timer = setTimeout(() => finish(undefined), LONG_LINE_TIME_LIMIT_MS);
      worker.on("message", onMessage);
      worker.on("error", onError);
      signal.addEventListener("abort", onAbort, { once: true });
      worker.postMessage(line);
    });
  }

  /** Terminates the worker, if it runs. */
  close(): void {
    void this.#worker?.terminate();
    this.#worker = undefined;
  }
}
