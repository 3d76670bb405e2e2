import { existsSync, readdirSync, readFileSync, readlinkSync } from "node:fs";

/** A process that a command started and that outlived the kill of the command's group. */
export interface SurvivingProcess {
  readonly pid: number;
  /** Its command name (`/proc/<pid>/comm`), or `"?"`. */
  readonly command: string;
}

interface ProcessStat {
  readonly parent: number;
  readonly group: number;
  readonly startTime: string;
  readonly state: string;
}

/**
 * Watches the processes a shell command starts, through `/proc` (Linux), so that after its
 * process group is killed it can say which of them survived: a process that left the group
 * (`setsid`, or a daemon that forked itself away) gets none of the group's signals. Internal.
 *
 * Two honest, best-effort methods, combined: (1) every {@link ProcessWatch.scan} records the
 * descendants of the shell alive at that moment (a process tree walked by parent pid, each
 * process kept with its start time so a reused pid is never mistaken for it); the Bash tool
 * scans while the command runs and once more just before it kills the group. A process that
 * both starts and is orphaned between two scans is missed by this method; (2) any process
 * still holding the command's stdout or stderr pipe is found by its open file descriptors,
 * however it got there. A process that escaped between scans and closed those pipes is not
 * found. Without `/proc` (macOS, Windows) nothing is detected and {@link ProcessWatch.supported}
 * is false.
 */
export class ProcessWatch {
  /** Whether this platform lets survivors be detected (`/proc` exists). */
  readonly supported: boolean;
  readonly #shell: number;
  /** Descendants seen, by pid, with their start time. */
  readonly #seen = new Map<number, string>();
  /** The command's stdout and stderr pipes, as `/proc/<pid>/fd` shows them (`pipe:[123]`). */
  readonly #pipes: readonly string[];

  /** @param shellPid - The pid of the shell, which leads the command's process group. */
  constructor(shellPid: number) {
    this.#shell = shellPid;
    this.supported = existsSync("/proc/self/stat");
    const pipes: string[] = [];
    if (this.supported) {
      for (const fd of [1, 2]) {
        const link = readLink(`/proc/${shellPid}/fd/${fd}`);
        if (link?.startsWith("pipe:")) pipes.push(link);
      }
    }
    this.#pipes = pipes;
  }

  /** Records the shell's descendants alive now. Cheap (one read of `/proc`); never throws. */
  scan(): void {
    if (!this.supported) return;
    const children = new Map<number, number[]>();
    const stats = new Map<number, ProcessStat>();
    for (const pid of processIds()) {
      const info = readStat(pid);
      if (info === undefined) continue;
      stats.set(pid, info);
      const siblings = children.get(info.parent);
      if (siblings === undefined) children.set(info.parent, [pid]);
      else siblings.push(pid);
    }
    // From the shell and from every descendant seen before (it may have been orphaned since).
    const queue = [this.#shell];
    for (const [pid, startTime] of this.#seen) {
      if (stats.get(pid)?.startTime === startTime) queue.push(pid);
    }
    for (let pid = queue.pop(); pid !== undefined; pid = queue.pop()) {
      for (const child of children.get(pid) ?? []) {
        if (this.#seen.has(child)) continue;
        this.#seen.set(child, stats.get(child)!.startTime);
        queue.push(child);
      }
    }
  }

  /**
   * The processes that outlived the group's kill: descendants seen that are still running
   * outside the group, and processes outside the group holding the command's pipes. Call it
   * after the group was sent SIGKILL (members of the group are dying and are not counted).
   */
  survivors(): SurvivingProcess[] {
    if (!this.supported) return [];
    const found = new Map<number, SurvivingProcess>();
    const consider = (pid: number, startTime?: string): void => {
      if (pid === process.pid || found.has(pid)) return;
      const info = readStat(pid);
      if (info === undefined || info.state === "Z" || info.state === "X") return;
      if (startTime !== undefined && info.startTime !== startTime) return;
      if (info.group === this.#shell) return;
      found.set(pid, { pid, command: readCommand(pid) });
    };
    for (const [pid, startTime] of this.#seen) consider(pid, startTime);
    if (this.#pipes.length > 0) {
      for (const pid of processIds()) {
        if (pid === process.pid || found.has(pid)) continue;
        if (holdsAny(pid, this.#pipes)) consider(pid);
      }
    }
    return [...found.values()].sort((a, b) => a.pid - b.pid);
  }
}

function processIds(): number[] {
  try {
    return readdirSync("/proc")
      .filter((name) => /^\d+$/.test(name))
      .map(Number);
  } catch {
    return [];
  }
}

/** Fields of `/proc/<pid>/stat` (after the command name, which may hold spaces). */
function readStat(pid: number): ProcessStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 of proc(5): state, ppid, pgrp, ..., starttime (field 22).
  return {
    state: fields[0] ?? "?",
    parent: Number(fields[1]),
    group: Number(fields[2]),
    startTime: fields[19] ?? "",
  };
}

function readCommand(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim() || "?";
  } catch {
    return "?";
  }
}

function readLink(file: string): string | undefined {
  try {
    return readlinkSync(file);
  } catch {
    return undefined;
  }
}

function holdsAny(pid: number, pipes: readonly string[]): boolean {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  return fds.some((fd) => {
    const link = readLink(`/proc/${pid}/fd/${fd}`);
    return link !== undefined && pipes.includes(link);
  });
}
