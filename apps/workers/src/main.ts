import { DEFAULT_REDIS_URL, parseWorkersArgs, USAGE } from "./args.js";
import { produceRuns } from "./producer.js";
import { startAll } from "./start-all.js";
import { startWorker, type WorkerReport } from "./worker.js";

const command = parseWorkersArgs(process.argv.slice(2));
const print = (line: string) => console.log(line);

if (command.kind === "help") {
  print(USAGE);
} else if (command.kind === "error") {
  console.error(`workers: ${command.message}\n\n${USAGE}`);
  process.exitCode = 2;
} else {
  const stop = new AbortController();
  const onSignal = () => {
    if (stop.signal.aborted) process.exit(130);
    stop.abort(new Error("stopped by a signal"));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  try {
    if (command.kind === "worker") {
      // Started by `start`: report steps and calls to it, and stop when it goes away.
      const parent = process.send !== undefined;
      const report = parent
        ? (message: WorkerReport) => {
            if (process.connected) process.send!(message);
          }
        : undefined;
      process.once("disconnect", () => stop.abort(new Error("the parent process went away")));
      const worker = await startWorker({
        ...command,
        env: process.env,
        print,
        ...(report !== undefined ? { report } : {}),
      });
      if (!parent) print(`[${command.name}] Ctrl-C stops it (after the steps in progress).`);
      if (!stop.signal.aborted) await new Promise((resolve) => (stop.signal.onabort = resolve));
      await worker.close();
      if (!parent) print(`[${command.name}] stopped.`);
      process.exit(0);
    } else if (command.kind === "produce") {
      const outcomes = await produceRuns({ ...command, print, signal: stop.signal });
      process.exitCode = outcomes.every((outcome) => outcome.ok) ? 0 : 1;
    } else {
      const ok = await startAll({ ...command, print, signal: stop.signal });
      process.exitCode = ok ? 0 : 1;
    }
  } catch (error) {
    if (stop.signal.aborted) {
      process.exitCode = 130;
    } else {
      console.error(`workers: ${failureMessage(error, command.redisUrl)}`);
      process.exitCode = 1;
    }
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
}

/** What went wrong, and for a Redis that does not answer, how to start one. */
function failureMessage(error: unknown, redisUrl: string): string {
  const message = error instanceof Error ? error.message : String(error);
  if ((error as { code?: unknown }).code !== "redis_unreachable") return message;
  const start =
    redisUrl === DEFAULT_REDIS_URL
      ? `start one in another terminal: redis-server --port 6390 --save "" (on Debian or Ubuntu, install it with: sudo apt-get install -y redis-server), or pass --redis <url>`
      : "start it, or pass the right --redis <url>";
  return `Redis does not answer at ${redisUrl}: ${start}.\n(${message})`;
}
