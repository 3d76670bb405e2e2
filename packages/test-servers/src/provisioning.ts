// What every server of this package shares: one cross-process lock around apt, the apt
// install itself, and a free loopback port.

import { spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * The folder whose creation serializes package installs across processes (vitest runs test
 * files in several worker processes). Every provisioning helper of this package takes it, so
 * two `apt-get` never run at once.
 */
const APT_LOCK = join(tmpdir(), "lattice-test-servers-apt.lock");
/** A lock without an owner file older than this is taken over. */
const LOCK_STALE_MS = 15 * 60_000;
/** How long a process waits for another one's install before giving up. */
const LOCK_WAIT_MS = 20 * 60_000;

/**
 * Runs `body` while holding the apt lock: a folder created with `mkdir` (atomic: exactly one
 * process creates it), holding the owner's pid. A lock whose owner has died is taken over, and
 * so is one without an owner file that is older than 15 minutes.
 *
 * @param installHint - what to install by hand, for the error after 20 minutes of waiting.
 */
export function withAptLock(installHint: string, body: () => void): void {
  const started = Date.now();
  for (;;) {
    try {
      mkdirSync(APT_LOCK);
      writeFileSync(join(APT_LOCK, "owner"), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    if (lockIsStale()) {
      rmSync(APT_LOCK, { recursive: true, force: true });
      continue;
    }
    if (Date.now() - started > LOCK_WAIT_MS) {
      throw new Error(
        `Waited ${LOCK_WAIT_MS / 60_000} minutes for another process to finish installing packages (lock ${APT_LOCK}). Remove that folder if no apt-get is running. ${installHint}`,
      );
    }
    sleepSync(250);
  }
  try {
    body();
  } finally {
    rmSync(APT_LOCK, { recursive: true, force: true });
  }
}

function lockIsStale(): boolean {
  try {
    const owner = Number(readFileSync(join(APT_LOCK, "owner"), "utf8"));
    if (Number.isSafeInteger(owner) && owner > 0) {
      try {
        process.kill(owner, 0);
        return false;
      } catch (error) {
        return (error as NodeJS.ErrnoException).code === "ESRCH";
      }
    }
  } catch {
    // No owner file yet (just created, or its owner died before writing it): go by age.
  }
  try {
    return Date.now() - statSync(APT_LOCK).mtimeMs > LOCK_STALE_MS;
  } catch {
    return false; // Gone meanwhile: the next mkdir will tell.
  }
}

/**
 * Installs a Debian package with apt (`apt-get update` and a second try when the first fails),
 * waiting for dpkg's own lock too, in case something outside these tests runs apt. Call it
 * inside {@link withAptLock}.
 *
 * @returns `""` when apt succeeded, else the end of its output.
 */
export function aptInstall(pkg: string, missing: string): string {
  const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  const apt = (args: readonly string[]) =>
    spawnSync("apt-get", ["-o", "DPkg::Lock::Timeout=300", ...args], {
      env,
      encoding: "utf8",
      maxBuffer: 256 * 1024 * 1024,
    });
  console.error(
    `[test-servers] ${missing} is missing: installing Debian's ${pkg} (apt-get install -y ${pkg})...`,
  );
  let result = apt(["install", "-y", pkg]);
  if (result.status !== 0) {
    apt(["update"]);
    result = apt(["install", "-y", pkg]);
  }
  if (result.status === 0) return "";
  const output = `${result.stdout ?? ""}${result.stderr ?? ""}${result.error === undefined ? "" : String(result.error)}`;
  return output.trimEnd().split("\n").slice(-20).join("\n");
}

/** A loopback port that was free a moment ago: listen on port 0, read it, close. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Blocks the thread: provisioning is synchronous, and only runs when a package is missing. */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}
