import { parseArgs } from "node:util";
import { parseStoreSpec, type StoreSpec } from "./session-store.js";

/** The Redis the app uses when `--redis` is not given. */
export const DEFAULT_REDIS_URL = "redis://127.0.0.1:6390";
/** The queue's name when `--queue` is not given. */
export const DEFAULT_QUEUE = "workers-demo";

/** What `--help` and a bad command line print. */
export const USAGE = `workers [start|worker|produce] [options]

  start      (the default) everything in one terminal: starts the worker processes, enqueues
             the runs, prints each worker's steps and each run's result, stops the workers
  worker     one worker, until Ctrl-C: takes steps of the queue's runs, prints each one
  produce    enqueues runs and prints their results as workers finish them

  --redis <url>        the Redis of the queue (default ${DEFAULT_REDIS_URL})
  --store <store>      where the run logs are: redis (default: the queue's Redis),
                       redis://…, postgres://…, or sqlite:<file>
  --queue <name>       the queue's name (default ${DEFAULT_QUEUE})
  --runs <n>           start, produce: runs to enqueue, "triage ticket 1" to n (default 6)
  --workers <n>        start: worker processes (default 3)
  --kill-one           start: SIGKILL one worker while it runs a tool call
  --name <name>        worker: its name in what it prints (default worker-<pid>)
  --tool-ms <ms>       start, worker: how long each tool call takes (default 1000)
  --concurrency <n>    start, worker: steps each worker takes at once (default 2)
  --lock-ms <ms>       start, worker: BullMQ's job lock; the step of a killed worker is
                       taken over after about this long (default 2000)`;

/** Settings of every command. */
export interface CommonSettings {
  readonly redisUrl: string;
  readonly store: StoreSpec;
  readonly queue: string;
}

/** Settings of the commands that run workers. */
export interface WorkerSettings {
  readonly workMs: number;
  readonly concurrency: number;
  readonly lockMs: number;
}

/** A command line, read. */
export type WorkersCommand =
  | ({
      readonly kind: "start";
      readonly runs: number;
      readonly workers: number;
      readonly killOne: boolean;
    } & CommonSettings &
      WorkerSettings)
  | ({ readonly kind: "worker"; readonly name: string } & CommonSettings & WorkerSettings)
  | ({ readonly kind: "produce"; readonly runs: number } & CommonSettings)
  | { readonly kind: "help" }
  | { readonly kind: "error"; readonly message: string };

const COMMANDS = ["start", "worker", "produce"] as const;
/** The options each command takes, besides `--redis`, `--store` and `--queue`. */
const ALLOWED: Readonly<Record<(typeof COMMANDS)[number], readonly string[]>> = {
  start: ["runs", "workers", "kill-one", "tool-ms", "concurrency", "lock-ms"],
  worker: ["name", "tool-ms", "concurrency", "lock-ms"],
  produce: ["runs"],
};

/**
 * Reads the command line (without `node` and the script).
 *
 * @param argv - The arguments.
 * @returns The command, `help`, or an error to print with the usage.
 */
export function parseWorkersArgs(argv: readonly string[]): WorkersCommand {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    return { kind: "error", message: error instanceof Error ? error.message : String(error) };
  }
  const { values, positionals } = parsed;
  if (values.help) return { kind: "help" };
  const [name = "start", ...rest] = positionals;
  if (!(COMMANDS as readonly string[]).includes(name)) {
    return { kind: "error", message: `unknown command "${name}".` };
  }
  const command = name as (typeof COMMANDS)[number];
  if (rest.length > 0) return { kind: "error", message: `unexpected argument "${rest[0]}".` };
  for (const option of Object.keys(values)) {
    if (["redis", "store", "queue"].includes(option)) continue;
    if (!ALLOWED[command].includes(option)) {
      return { kind: "error", message: `${command} takes no --${option}.` };
    }
  }
  const redisUrl = values.redis ?? DEFAULT_REDIS_URL;
  if (!/^rediss?:\/\//.test(redisUrl)) {
    return { kind: "error", message: `--redis must be a redis:// URL, got "${redisUrl}".` };
  }
  const store = parseStoreSpec(values.store ?? "redis");
  if (typeof store === "string") return { kind: "error", message: store };
  const queue = values.queue ?? DEFAULT_QUEUE;
  if (!/^[A-Za-z0-9_.-]+$/.test(queue)) {
    return { kind: "error", message: `--queue must be letters, digits, "_", "-" or ".".` };
  }
  const common = { redisUrl, store, queue };
  const numbers: Record<string, number> = {};
  for (const [key, fallback, least] of [
    ["runs", 6, 1],
    ["workers", 3, 1],
    ["tool-ms", 1000, 0],
    ["concurrency", 2, 1],
    ["lock-ms", 2000, 500],
  ] as const) {
    const text = values[key];
    const value = text === undefined ? fallback : Number(text);
    if (!Number.isSafeInteger(value) || value < least) {
      return {
        kind: "error",
        message: `--${key} must be a whole number of at least ${least}, got "${text}".`,
      };
    }
    numbers[key] = value;
  }
  const workers = {
    workMs: numbers["tool-ms"]!,
    concurrency: numbers.concurrency!,
    lockMs: numbers["lock-ms"]!,
  };
  if (command === "produce") return { kind: "produce", runs: numbers.runs!, ...common };
  if (command === "worker") {
    const workerName = values.name ?? `worker-${process.pid}`;
    if (workerName.trim() === "") return { kind: "error", message: "--name must not be empty." };
    return { kind: "worker", name: workerName, ...common, ...workers };
  }
  if (values["kill-one"] === true && numbers.workers! < 2) {
    return {
      kind: "error",
      message: "--kill-one needs at least 2 workers: one to kill, one to finish.",
    };
  }
  return {
    kind: "start",
    runs: numbers.runs!,
    workers: numbers.workers!,
    killOne: values["kill-one"] === true,
    ...common,
    ...workers,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      redis: { type: "string" },
      store: { type: "string" },
      queue: { type: "string" },
      runs: { type: "string" },
      workers: { type: "string" },
      "kill-one": { type: "boolean" },
      name: { type: "string" },
      "tool-ms": { type: "string" },
      concurrency: { type: "string" },
      "lock-ms": { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
}
