import { type ChildProcess, spawn } from "node:child_process";
import { accessSync, constants, rmSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createConnection } from "node:net";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { aptInstall, freeLoopbackPort, withAptLock } from "./provisioning.js";

/** What to run when Redis is missing: Debian's package (Redis 7 on Debian 12). */
const INSTALL_HINT =
  "Install Debian's Redis server to run these tests: sudo apt-get install -y redis-server (run sudo apt-get update first if apt cannot find it).";

const START_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;
const START_ATTEMPTS = 5;
const OUTPUT_LIMIT = 16_384;

/** Options of {@link startRedis}. */
export interface StartRedisOptions {
  /**
   * Turn on the append-only file (`--appendonly yes --appendfsync always`), so that data
   * survives {@link RedisServer.restart} and {@link RedisServer.kill}. Default `false`: no
   * persistence at all (`--save "" --appendonly no`), the fastest setting for tests.
   */
  readonly persistent?: boolean;
  /** How long to wait for the server to answer `PING`, in milliseconds. Default 15 000. */
  readonly startTimeoutMs?: number;
}

/** A `redis-server` process started by {@link startRedis}, on loopback, in a temp folder. */
export interface RedisServer {
  /** `redis://127.0.0.1:<port>`, for `new Redis(url)` or a store's `url` option. */
  readonly url: string;
  /** The loopback port the server listens on; it keeps it across restarts. */
  readonly port: number;
  /** The server's working folder (the append-only file lives here); removed by `stop()`. */
  readonly dir: string;
  /**
   * Stops the server (SIGTERM, which Redis handles as `SHUTDOWN`; SIGKILL if it has not exited
   * within 10 s), waits for it to exit and removes its folder. Idempotent.
   */
  stop(): Promise<void>;
  /**
   * Stops the server gracefully (SIGTERM) and starts it again on the same port and folder,
   * resolving once it answers `PING`. With `persistent: true` the data is kept.
   *
   * @throws Error after `stop()`, or when the server does not come back.
   */
  restart(): Promise<void>;
  /**
   * Kills the server at once (SIGKILL) and waits for it to exit, as a crash would. The folder
   * is kept: `restart()` may follow (with `persistent: true`, every acknowledged write is kept,
   * the append-only file being fsynced on each write).
   */
  kill(): Promise<void>;
}

let redisServerPath: string | undefined;

/**
 * Returns the path of the `redis-server` executable. When it is missing and the process runs
 * as root, installs Debian's package (`apt-get install -y redis-server`, with
 * `DEBIAN_FRONTEND=noninteractive`; after an `apt-get update` when the first try fails).
 * Processes that call it at once take turns through a lock folder in the temp folder, shared
 * with PostgreSQL's install, so only one `apt-get` runs; the others wait for it and then find
 * the server installed.
 *
 * Tests never skip for want of Redis: the caller's test fails with this error instead.
 *
 * @throws Error when `redis-server` is still missing, saying what to install
 *   (`sudo apt-get install -y redis-server`, with the end of apt's output when it failed),
 *   with `CI=true` and without.
 */
export function ensureRedisServer(): string {
  if (redisServerPath !== undefined) return redisServerPath;
  let found = findRedisServer();
  const root = process.getuid?.() === 0;
  let aptOutput = "";
  if (found === undefined && root) {
    withAptLock(INSTALL_HINT, () => {
      if (findRedisServer() === undefined) aptOutput = aptInstall("redis-server", "redis-server");
    });
    found = findRedisServer();
  }
  if (found === undefined) {
    throw new Error(
      `redis-server was not found on PATH (${process.env.PATH ?? ""})${root ? ` and apt-get could not install it${aptOutput === "" ? "" : `; the end of apt's output:\n${aptOutput}\n`}` : ""}. ${INSTALL_HINT}`,
    );
  }
  redisServerPath = found;
  return found;
}

/**
 * Starts a `redis-server` of its own for a test: on a free loopback port, in a new temp
 * folder, with protected mode off and no persistence (or the append-only file, with
 * `persistent: true`). Resolves once the server answers `PING`. A port taken between choosing
 * it and the server binding it is retried on another port. The process never outlives the
 * test process: it is killed when the process exits, even if `stop()` was not called.
 *
 * @param options - `persistent` (default `false`), `startTimeoutMs` (default 15 000).
 * @throws Error when `redis-server` is missing (see {@link ensureRedisServer}), or when the
 *   server does not answer in time; the message carries the server's output.
 */
export async function startRedis(options: StartRedisOptions = {}): Promise<RedisServer> {
  for (const key of Object.keys(options)) {
    if (key !== "persistent" && key !== "startTimeoutMs") {
      throw new Error(
        `startRedis: unknown option "${key}". Known options: persistent, startTimeoutMs.`,
      );
    }
  }
  const persistent = options.persistent ?? false;
  const startTimeoutMs = options.startTimeoutMs ?? START_TIMEOUT_MS;
  const binary = ensureRedisServer();
  const dir = await mkdtemp(join(tmpdir(), "lattice-redis-"));
  liveFolders.add(dir);
  const args = (port: number) => [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--save",
    "",
    "--appendonly",
    persistent ? "yes" : "no",
    ...(persistent ? ["--appendfsync", "always"] : []),
    "--dir",
    dir,
    "--protected-mode",
    "no",
  ];

  let port = 0;
  let running: RunningRedis | undefined;
  for (let attempt = 1; running === undefined; attempt++) {
    port = await freeLoopbackPort();
    try {
      running = await launch(binary, args(port), port, startTimeoutMs);
    } catch (error) {
      if (!(error instanceof PortTakenError) || attempt >= START_ATTEMPTS) {
        await removeFolder(dir);
        throw error;
      }
    }
  }

  let current: RunningRedis = running;
  let stopping: Promise<void> | undefined;
  const assertNotStopped = (doing: string) => {
    if (stopping !== undefined) {
      throw new Error(
        `startRedis: cannot ${doing} the Redis server on port ${port}: it was stopped.`,
      );
    }
  };

  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    stop() {
      stopping ??= (async () => {
        await current.terminate("SIGTERM");
        await removeFolder(dir);
      })();
      return stopping;
    },
    async restart() {
      assertNotStopped("restart");
      await current.terminate("SIGTERM");
      assertNotStopped("restart");
      // The port is ours, but the old socket may linger for a moment: retry briefly.
      for (let attempt = 1; ; attempt++) {
        try {
          current = await launch(binary, args(port), port, startTimeoutMs);
          return;
        } catch (error) {
          if (!(error instanceof PortTakenError) || attempt >= START_ATTEMPTS) throw error;
          await sleep(200 * attempt);
        }
      }
    },
    async kill() {
      if (stopping !== undefined) return;
      await current.terminate("SIGKILL");
    },
  };
}

/** A started `redis-server` process. */
interface RunningRedis {
  /** Sends `signal` (if the process still runs) and resolves once it has exited. */
  terminate(signal: NodeJS.Signals): Promise<void>;
}

/** The server exited because its port was taken: worth another try. */
class PortTakenError extends Error {}

/** Every server process still running, killed when this process exits. */
const liveProcesses = new Set<ChildProcess>();
/** Every server folder not removed yet, removed when this process exits. */
const liveFolders = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of liveProcesses) {
      try {
        child.kill("SIGKILL");
      } catch {
        // Already gone.
      }
    }
    for (const dir of liveFolders) {
      try {
        rmSync(dir, { recursive: true, force: true });
      } catch {
        // Best effort: the temp folder is cleaned by the system eventually.
      }
    }
  });
}

async function launch(
  binary: string,
  args: readonly string[],
  port: number,
  startTimeoutMs: number,
): Promise<RunningRedis> {
  installExitHook();
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  liveProcesses.add(child);
  let output = "";
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-OUTPUT_LIMIT);
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  let exitedAlready = false;
  const exited = new Promise<void>((resolve) => {
    const done = () => {
      exitedAlready = true;
      liveProcesses.delete(child);
      resolve();
    };
    child.once("exit", done);
    child.once("error", (error) => {
      collect(Buffer.from(`\n${error.message}\n`));
      done();
    });
  });
  // A server a test forgot to stop must not keep the test process alive; the exit hook
  // kills it. The streams are unreferenced too, and referenced again while waiting for exit.
  const setReferenced = (referenced: boolean) => {
    for (const handle of [child, child.stdout, child.stderr] as const) {
      const target = handle as { ref?: () => void; unref?: () => void } | null;
      if (referenced) target?.ref?.();
      else target?.unref?.();
    }
  };
  setReferenced(false);

  const terminate = async (signal: NodeJS.Signals) => {
    if (exitedAlready) return;
    setReferenced(true);
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  };

  const deadline = Date.now() + startTimeoutMs;
  for (;;) {
    if (exitedAlready) {
      const message = `redis-server exited before answering PING on 127.0.0.1:${port} (exit code ${child.exitCode ?? child.signalCode}). Its output:\n${output}`;
      if (/address already in use/i.test(output)) throw new PortTakenError(message);
      throw new Error(message);
    }
    if (await answersPing(port)) return { terminate };
    if (Date.now() > deadline) {
      await terminate("SIGKILL");
      throw new Error(
        `redis-server did not answer PING on 127.0.0.1:${port} within ${startTimeoutMs} ms. Its output:\n${output}`,
      );
    }
    await sleep(50);
  }
}

/** Sends `PING` on a raw socket; true when the server answers `+PONG`. */
function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: "127.0.0.1", port });
    let reply = "";
    const finish = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(1000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write("PING\r\n"));
    socket.on("data", (chunk: Buffer) => {
      reply += chunk.toString();
      if (reply.includes("\r\n")) finish(reply.startsWith("+PONG"));
    });
  });
}

async function removeFolder(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true });
  liveFolders.delete(dir);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

function findRedisServer(): string | undefined {
  const folders = [
    ...(process.env.PATH ?? "").split(delimiter),
    "/usr/bin",
    "/usr/local/bin",
    "/usr/sbin",
  ];
  for (const folder of folders) {
    if (folder === "") continue;
    const candidate = join(folder, "redis-server");
    try {
      accessSync(candidate, constants.X_OK);
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // Not here.
    }
  }
  return undefined;
}
