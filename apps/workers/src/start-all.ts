import { type ChildProcess, fork } from "node:child_process";
import { once } from "node:events";
import { fileURLToPath } from "node:url";
import { createRunQueue } from "@lattice/bullmq";
import type { SessionStore } from "agent-lattice";
import type { CommonSettings, WorkerSettings } from "./args.js";
import { CallTracker, callKey } from "./call-tracker.js";
import { checkExecutions, type Death } from "./check-executions.js";
import { produceRuns, type RunOutcome } from "./producer.js";
import { formatStoreSpec, openSessionStore } from "./session-store.js";
import type { WorkerReport } from "./worker.js";

const MAIN = fileURLToPath(new URL("./main.ts", import.meta.url));
const READY_TIMEOUT_MS = 60_000;
const STOP_TIMEOUT_MS = 15_000;

/** Options of {@link startAll}. */
export interface StartAllOptions extends CommonSettings, WorkerSettings {
  /** Runs to enqueue. */
  readonly runs: number;
  /** Worker processes to start. */
  readonly workers: number;
  /** SIGKILL one worker while it runs a tool call. */
  readonly killOne: boolean;
  /** Prints a line. */
  readonly print: (line: string) => void;
  /** Stops waiting for the runs (Ctrl-C); the workers are stopped. */
  readonly signal?: AbortSignal;
}

/** A worker process started by {@link startAll}. */
interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly exited: Promise<void>;
}

/**
 * Everything in one terminal: starts `workers` worker processes (this app's `worker` command,
 * with an IPC channel to report their steps and calls), enqueues the runs, prints the results,
 * stops the workers, and prints who took each step and which tool calls ran more than once.
 * With `killOne`, SIGKILLs a worker in the middle of a tool call once a quarter of the calls
 * have ended, just after it starts one; a worker killed from outside (`kill -9 <pid>`) is noticed the same way.
 *
 * @param options - {@link StartAllOptions}.
 * @returns Whether every run succeeded and no call whose result was logged ran again.
 * @throws `RunQueueError` `redis_unreachable`; an `AbortError` when `signal` aborts.
 */
export async function startAll(options: StartAllOptions): Promise<boolean> {
  const { print } = options;
  const probe = createRunQueue({
    connection: options.redisUrl,
    name: options.queue,
    connectTimeoutMs: 3_000,
  });
  try {
    await probe.ready();
  } finally {
    await probe.close();
  }
  const {
    store,
    label,
    close: closeStore,
  } = await openSessionStore(options.store, options.redisUrl);
  print(
    `Queue "${options.queue}" on ${options.redisUrl}; run logs in ${label}. Starting ${options.workers} worker processes…`,
  );
  const tracker = new CallTracker();
  const deaths: Death[] = [];
  const pending: Promise<void>[] = [];
  let stopping = false;
  // Ctrl-C reaches the workers too: their exits are not deaths to report.
  options.signal?.addEventListener("abort", () => {
    stopping = true;
  });
  let killed: WorkerProcess | undefined;
  const stopped = new AbortController();
  const signal = AbortSignal.any([
    stopped.signal,
    ...(options.signal !== undefined ? [options.signal] : []),
  ]);
  const threshold = Math.max(1, Math.floor((options.runs * 3) / 4));

  const workers: WorkerProcess[] = [];
  const onReport = (report: WorkerReport) => {
    tracker.record(report);
    if (!options.killOne || killed !== undefined || report.kind !== "call") return;
    // The kill follows a call's start, never its end: a call seen in flight at an end report
    // may be about to finish, and its result logged, before the signal lands.
    if (report.phase !== "start" || tracker.ended < threshold) return;
    const victim = workers.find(
      (worker) => worker.name === report.worker && worker.child.exitCode === null,
    );
    if (victim === undefined) return;
    killed = victim;
    const calls = describeCalls(tracker, victim.name);
    print(
      `✂ --kill-one: SIGKILL to ${victim.name} (pid ${victim.child.pid}) in the middle of ${calls}. Its steps go to the other workers once their lock expires (about ${seconds(options.lockMs)}).`,
    );
    victim.child.kill("SIGKILL");
  };
  for (let index = 1; index <= options.workers; index++) {
    const name = `worker-${index}`;
    const child = fork(
      MAIN,
      [
        "worker",
        ...["--name", name, "--redis", options.redisUrl, "--queue", options.queue],
        ...["--store", formatStoreSpec(options.store)],
        ...["--tool-ms", String(options.workMs), "--concurrency", String(options.concurrency)],
        ...["--lock-ms", String(options.lockMs)],
      ],
      { stdio: ["ignore", "inherit", "inherit", "ipc"] },
    );
    const exited = once(child, "exit").then(() => undefined);
    const worker = { name, child, exited };
    workers.push(worker);
    child.on("message", (message) => onReport(message as WorkerReport));
    child.on("exit", (code, exitSignal) => {
      if (stopping) return;
      if (killed?.name !== name) {
        const calls = describeCalls(tracker, name);
        print(
          `✝ ${name} (pid ${child.pid}) exited (${exitSignal ?? `code ${code}`})${calls === "nothing" ? "" : ` in the middle of ${calls}`}. Its steps go to the other workers once their lock expires (about ${seconds(options.lockMs)}).`,
        );
      }
      pending.push(
        loggedCalls(store, tracker.sessions()).then(
          (logged) => {
            deaths.push({ worker: name, logged });
          },
          (error: unknown) => print(`Could not read the run logs: ${(error as Error).message}`),
        ),
      );
      if (workers.every((other) => other.child.exitCode !== null || other.child.signalCode)) {
        stopped.abort(new Error("every worker exited"));
      }
    });
  }

  const stopWorkers = async () => {
    stopping = true;
    for (const worker of workers) {
      if (worker.child.exitCode === null && worker.child.signalCode === null) {
        worker.child.kill("SIGTERM");
      }
    }
    const timer = setTimeout(() => {
      for (const worker of workers) worker.child.kill("SIGKILL");
    }, STOP_TIMEOUT_MS);
    await Promise.all(workers.map((worker) => worker.exited));
    clearTimeout(timer);
  };

  let outcomes: RunOutcome[];
  try {
    await waitUntilReady(workers, signal);
    print(
      `Workers: ${workers.map((worker) => `${worker.name} (pid ${worker.child.pid})`).join(", ")}.${options.killOne ? "" : " To see one die mid-run: kill -9 <pid> from another terminal, or start with --kill-one."}`,
    );
    outcomes = await produceRuns({
      redisUrl: options.redisUrl,
      queue: options.queue,
      runs: options.runs,
      print,
      signal,
    });
  } catch (error) {
    await stopWorkers();
    await closeStore();
    if (options.signal?.aborted) {
      print(
        `Stopped. Unfinished runs stay in queue "${options.queue}": workers started later on it finish them.`,
      );
    }
    if (stopped.signal.aborted && options.signal?.aborted !== true) {
      throw new Error("Every worker exited before the runs finished; nothing takes their steps.");
    }
    throw error;
  }
  await stopWorkers();
  await Promise.all(pending);
  await closeStore();
  print("");
  for (const line of stepLines(tracker, outcomes)) print(line);
  print("");
  const sessions = new Set(outcomes.map((outcome) => outcome.sessionId));
  const checked = checkExecutions(tracker, deaths, sessions);
  for (const line of checked.lines) print(line);
  if (options.killOne && killed === undefined) {
    print(
      "--kill-one: no worker was in the middle of a tool call at the right time; none was killed.",
    );
  }
  return checked.ok && outcomes.every((outcome) => outcome.ok);
}

async function waitUntilReady(workers: readonly WorkerProcess[], signal: AbortSignal) {
  const waits = workers.map(
    (worker) =>
      new Promise<void>((resolve, reject) => {
        const onMessage = (message: WorkerReport) => {
          if (message.kind === "ready") resolve();
        };
        worker.child.on("message", onMessage);
        worker.child.once("exit", (code) =>
          reject(new Error(`${worker.name} exited with code ${code} before it was ready.`)),
        );
      }),
  );
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`The workers were not ready within ${READY_TIMEOUT_MS / 1000} s.`)),
      READY_TIMEOUT_MS,
    );
  });
  const aborted = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  try {
    await Promise.race([Promise.all(waits), timeout, aborted]);
  } finally {
    clearTimeout(timer);
  }
}

/** The calls a worker has in flight, for a message: "read_ticket of ticket-3-9f2c". */
function describeCalls(tracker: CallTracker, worker: string): string {
  const calls = tracker.inFlight(worker);
  if (calls.length === 0) return "nothing";
  return calls.map(({ execution }) => `${execution.toolName} of ${execution.sessionId}`).join(", ");
}

/** The calls whose results are in the run logs of these sessions now. */
async function loggedCalls(store: SessionStore, sessions: readonly string[]): Promise<Set<string>> {
  const logged = new Set<string>();
  for (const sessionId of sessions) {
    for (const entry of (await store.load(sessionId)).entries) {
      if (entry.type === "tool_result") {
        logged.add(callKey(String(entry.runId), String(entry.toolUseId)));
      }
    }
  }
  return logged;
}

/** A table of who took each step of each run; a step taken over shows both workers. */
function stepLines(tracker: CallTracker, outcomes: readonly RunOutcome[]): string[] {
  const rows = outcomes.map((outcome) => {
    const steps = tracker.steps.get(outcome.sessionId) ?? [];
    return [outcome.sessionId, ...Array.from(steps, (takers) => (takers ?? []).join("→"))];
  });
  const columns = Math.max(0, ...rows.map((row) => row.length - 1));
  const header = ["run", ...Array.from({ length: columns }, (_, step) => `step ${step}`)];
  const widths = header.map((title, index) =>
    Math.max(title.length, ...rows.map((row) => row[index]?.length ?? 0)),
  );
  const format = (row: readonly string[]) =>
    row
      .map((cell, index) => cell.padEnd(widths[index]!))
      .join("  ")
      .trimEnd();
  return [
    "Who took each step (steps 0, 2, 4: model calls; 1 and 3: tool calls; a→b: a started it, b took it over):",
    format(header),
    ...rows.map(format),
  ];
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
