import { type ChildProcess, execFile, spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { aptInstall, freeLoopbackPort, withAptLock } from "./provisioning.js";

/** Where Debian's `postgresql-15` package puts the server's programs. */
const BIN_DIR = "/usr/lib/postgresql/15/bin";
const REQUIRED_PROGRAMS = ["initdb", "pg_ctl", "postgres", "createdb"] as const;
const INSTALL_HINT =
  "Install Debian's PostgreSQL 15 to run these tests: sudo apt-get install -y postgresql-15 (run sudo apt-get update first if apt cannot find it).";

/** The database user and the database every server is created with. */
const USER = "lattice";
const DATABASE = "lattice";

/** A PostgreSQL server of the tests' own, as {@link startPostgres} returns it. */
export interface PostgresServer {
  /** `postgres://lattice@127.0.0.1:<port>/lattice`: user `lattice`, trust auth, no password. */
  readonly connectionString: string;
  /** The loopback port the server listens on (TCP on 127.0.0.1). */
  readonly port: number;
  /** The server's temp folder: its data folder (`data/`), log (`postgres.log`) and socket. */
  readonly dir: string;
  /**
   * Stops the server at once (`pg_ctl stop -m immediate`: no checkpoint, nothing to keep) and
   * removes its folder. Idempotent: later calls return the first call's promise.
   */
  stop(): Promise<void>;
}

/**
 * Makes sure PostgreSQL 15's server programs (`initdb`, `pg_ctl`, `postgres`, `createdb`) are
 * in `/usr/lib/postgresql/15/bin`, where Debian's `postgresql-15` package puts them, and
 * returns that folder. When they are missing and the process runs as root, installs the
 * package (`apt-get install -y postgresql-15`, then `apt-get update` and again when that
 * fails). Several processes (vitest workers) may call it at once: every install of this
 * package (PostgreSQL's and Redis's) takes one lock folder in the temp folder (`mkdir` is
 * atomic), so only one `apt-get` runs; a lock whose owner died is taken over.
 *
 * Synchronous: it blocks while apt runs (the first time only).
 *
 * @returns `/usr/lib/postgresql/15/bin`.
 * @throws Error when the programs are still missing, saying what to install
 *   (`sudo apt-get install -y postgresql-15`), with the end of apt's output when it failed.
 *   Tests that need PostgreSQL fail; they never skip.
 */
export function ensurePostgresBinaries(): string {
  if (missingPrograms().length === 0) return BIN_DIR;
  let aptOutput = "";
  if (process.getuid?.() === 0) {
    withAptLock(INSTALL_HINT, () => {
      if (missingPrograms().length === 0) return;
      aptOutput = aptInstall("postgresql-15", "PostgreSQL 15");
    });
  }
  const missing = missingPrograms();
  if (missing.length === 0) return BIN_DIR;
  const why =
    process.getuid?.() === 0
      ? `apt-get install -y postgresql-15 did not provide them${aptOutput === "" ? "" : `; the end of apt's output:\n${aptOutput}\n`}`
      : "this process is not root, so it cannot install them";
  throw new Error(
    `PostgreSQL 15 is missing: ${BIN_DIR} lacks ${missing.join(", ")}, and ${why}. ${INSTALL_HINT}`,
  );
}

/**
 * Starts a PostgreSQL 15 server of its own for a test: a fresh data folder in a temp folder,
 * a free loopback port, trust authentication for user `lattice`, and a database `lattice`.
 * Durability is off (`fsync`, `full_page_writes`, `synchronous_commit`), which makes it fast
 * and is fine for tests. Takes about half a second.
 *
 * PostgreSQL refuses to run as root. As root, the folder is given to the `postgres` user
 * (which Debian's package creates) and `initdb` and `pg_ctl` run as that user through
 * `runuser -u postgres`; when that user does not exist, it fails saying how to create it.
 *
 * No server outlives the process that started it: `stop()` stops it; if the process exits
 * without calling it, an exit handler stops it synchronously; if the process is killed
 * (SIGKILL), a small watchdog shell (detached, polling the process once a second) stops it
 * and removes its folder.
 *
 * @throws Error when PostgreSQL 15 is missing (see {@link ensurePostgresBinaries}), or when
 *   `initdb`, `pg_ctl start` or `createdb` fail; the message carries their output and the end
 *   of the server's log. The folder is removed.
 */
export async function startPostgres(): Promise<PostgresServer> {
  const bin = ensurePostgresBinaries();
  const owner = process.getuid?.() === 0 ? postgresUser() : undefined;
  const dir = mkdtempSync(join(tmpdir(), "lattice-postgres-"));
  const data = join(dir, "data");
  const log = join(dir, "postgres.log");
  const asOwner = (program: string, args: readonly string[]): [string, string[]] =>
    owner === undefined
      ? [join(bin, program), [...args]]
      : ["runuser", ["-u", owner.name, "--", join(bin, program), ...args]];
  const stopCommand = asOwner("pg_ctl", ["-D", data, "-m", "immediate", "-w", "stop"]);
  const watchdog = startWatchdog(dir, stopCommand);
  /** What follows the server's stop, whichever way it stopped. */
  const removeAll = () => {
    rmSync(dir, { recursive: true, force: true });
    watchdog.kill();
  };
  const cleanUp = () => {
    live.delete(cleanUp);
    spawnSync(stopCommand[0], stopCommand[1], { cwd: dir, stdio: "ignore" });
    removeAll();
  };
  live.add(cleanUp);
  listenForExit();

  try {
    if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
    await run(
      "initdb",
      dir,
      ...asOwner("initdb", [
        "-D",
        data,
        "-U",
        USER,
        "--auth=trust",
        "-E",
        "UTF8",
        "--no-locale",
        "--no-sync",
        "--no-instructions",
      ]),
    );
    let port = 0;
    for (let attempt = 1; ; attempt++) {
      port = await freeLoopbackPort();
      const serverOptions = [
        `-p ${port}`,
        "-c listen_addresses=127.0.0.1",
        `-k '${dir}'`,
        "-c fsync=off",
        "-c full_page_writes=off",
        "-c synchronous_commit=off",
      ].join(" ");
      try {
        await run(
          "pg_ctl start",
          dir,
          ...asOwner("pg_ctl", [
            "-D",
            data,
            "-w",
            "-t",
            "30",
            "-o",
            serverOptions,
            "-l",
            log,
            "start",
          ]),
        );
        break;
      } catch (error) {
        // Another process took the free port between our check and the server's bind: retry.
        if (attempt >= 3 || !/could not bind|already in use/i.test(logTail(log))) {
          throw withLog(error, log);
        }
      }
    }
    await run("createdb", dir, join(bin, "createdb"), [
      "-h",
      "127.0.0.1",
      "-p",
      String(port),
      "-U",
      USER,
      DATABASE,
    ]).catch((error: unknown) => {
      throw withLog(error, log);
    });

    let stopping: Promise<void> | undefined;
    return {
      connectionString: `postgres://${USER}@127.0.0.1:${port}/${DATABASE}`,
      port,
      dir,
      stop() {
        stopping ??= (async () => {
          live.delete(cleanUp);
          // Fails when the server is already gone; the folder is removed all the same.
          await run("pg_ctl stop", dir, ...stopCommand).catch(() => undefined);
          removeAll();
        })();
        return stopping;
      },
    };
  } catch (error) {
    cleanUp();
    throw error;
  }
}

/** Stops every server of this process that is still running, synchronously. */
const live = new Set<() => void>();
let listening = false;

function listenForExit(): void {
  if (listening) return;
  listening = true;
  process.on("exit", () => {
    for (const cleanUp of [...live]) cleanUp();
  });
}

/**
 * A detached shell that waits for this process to end, however it ends (even SIGKILL), then
 * stops the server and removes its folder. `stop()` kills it.
 */
function startWatchdog(dir: string, [program, args]: [string, string[]]): ChildProcess {
  const script = [
    'parent=$1; dir=$2; shift 2; cd "$dir" || exit 0',
    'while kill -0 "$parent" 2>/dev/null; do sleep 1; done',
    '"$@" >/dev/null 2>&1; cd /; rm -rf "$dir"',
  ].join("\n");
  const watchdog = spawn(
    "sh",
    ["-c", script, "lattice-postgres-watchdog", String(process.pid), dir, program, ...args],
    { detached: true, stdio: "ignore" },
  );
  watchdog.on("error", () => undefined);
  watchdog.unref();
  return watchdog;
}

/** Runs a program; rejects with an Error carrying its output when it fails. */
function run(what: string, cwd: string, program: string, args: readonly string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    execFile(program, args, { cwd, encoding: "utf8" }, (error, stdout, stderr) => {
      if (error === null) {
        resolve();
        return;
      }
      const output = `${stdout}${stderr}`.trim();
      reject(
        new Error(
          `startPostgres: ${what} failed (${program} ${args.join(" ")}): ${error.message.split("\n")[0]}${output === "" ? "" : `\n${output}`}`,
          { cause: error },
        ),
      );
    });
  });
}

/** Adds the end of the server's log to an error's message. */
function withLog(error: unknown, log: string): Error {
  const base = error instanceof Error ? error : new Error(String(error));
  const tail = logTail(log);
  return new Error(
    `${base.message}\nThe last lines of the server's log (${log}):\n${tail === "" ? "(empty)" : tail}`,
    { cause: error },
  );
}

function logTail(log: string, lines = 30): string {
  try {
    return readFileSync(log, "utf8").trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

interface SystemUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** The `postgres` system user, which runs the server when this process is root. */
function postgresUser(): SystemUser {
  const entry = spawnSync("getent", ["passwd", "postgres"], { encoding: "utf8" });
  const fields = entry.status === 0 ? entry.stdout.trim().split(":") : [];
  const uid = Number(fields[2]);
  const gid = Number(fields[3]);
  if (fields.length < 4 || !Number.isInteger(uid) || !Number.isInteger(gid)) {
    throw new Error(
      "startPostgres: PostgreSQL refuses to run as root, and there is no postgres user to run it as. Debian's postgresql-15 package creates that user: reinstall it (sudo apt-get install --reinstall -y postgresql-common postgresql-15), or create the user (sudo useradd --system --user-group --home-dir /var/lib/postgresql postgres), or run the tests as a user that is not root.",
    );
  }
  return { name: "postgres", uid, gid };
}

function missingPrograms(): string[] {
  return REQUIRED_PROGRAMS.filter((program) => !existsSync(join(BIN_DIR, program)));
}
