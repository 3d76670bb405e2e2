import { spawn } from "node:child_process";
import { z } from "zod/v4";
import {
  createToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { assertKnownOptions } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { ProcessWatch, type SurvivingProcess } from "./process-survivors.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  realWorkspace,
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** The longest timeout a Bash call may ask for, and the largest `defaultTimeoutMs`: 600,000 ms. */
export const BASH_MAX_TIMEOUT_MS = 600_000;

/** How long a timed-out or cancelled command gets between SIGTERM and SIGKILL. */
const KILL_GRACE_MS = 2000;
/** How long to wait for output still in the pipes after the shell has exited. */
const DRAIN_MS = 250;

/** The caps of the Bash tool. */
export interface BashToolCaps {
  /** Timeout of a call that gives none, in milliseconds. Default 120,000; at most 600,000. */
  readonly defaultTimeoutMs?: number | undefined;
  /** The most characters of combined stdout and stderr one call returns. Default 30,000. */
  readonly maxOutputChars?: number | undefined;
}

/** Options of {@link bashTool}: the workspace (commands run in `cwd`) and the caps. */
export interface BashToolOptions extends WorkspaceOptions, BashToolCaps {}

/** Bash's caps: each one's default (and upper bound, if any). */
const BASH_CAPS = {
  defaultTimeoutMs: { fallback: 120_000, max: BASH_MAX_TIMEOUT_MS },
  maxOutputChars: { fallback: 30_000 },
} satisfies CapSpecs<keyof BashToolCaps>;

/** The keys of {@link BashToolCaps}, for strict option checks. */
export const BASH_CAP_KEYS: readonly string[] = Object.keys(BASH_CAPS);

const bashSchema = z.object({
  command: z.string().min(1).describe("The shell command to run with bash -c."),
  timeout: z
    .number()
    .int()
    .positive()
    .max(BASH_MAX_TIMEOUT_MS)
    .optional()
    .describe("Timeout in milliseconds (at most 600000). Default 120000 (2 minutes)."),
}) satisfies z.ZodType<BashToolInput>;

/** The validated input of the Bash tool. */
export interface BashToolInput {
  /** The command, run with `bash -c`. */
  readonly command: string;
  /** Timeout in milliseconds, at most 600,000. */
  readonly timeout?: number | undefined;
}

type ResolvedBashCaps = ResolvedCaps<typeof BASH_CAPS>;

/** Checks Bash's caps. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveBashCaps(
  caps: BashToolCaps | undefined,
  prefix: string,
  nest?: string,
): ResolvedBashCaps {
  return resolveCaps(BASH_CAPS, caps, prefix, nest);
}

/**
 * The built-in Bash tool: runs a shell command with `bash -c` in the working directory.
 * Input `{ command, timeout? }` (timeout in ms, default `defaultTimeoutMs` = 120 s, at most
 * 600 s); not concurrency-safe (T16): its calls always run alone; kind `"builtin"`.
 *
 * **Bash is not a sandbox.** The command runs with the privileges of the user running the
 * SDK, with the SDK's environment variables, and can read, change or delete anything that
 * user can, and reach the network. The path confinement of the file tools (Read, Write, ...)
 * does not apply to shell commands: `cwd` is only where the command starts. Enable Bash only
 * for models and prompts you trust, or run the agent inside a container or VM.
 *
 * The command runs in its own process group. On timeout, or when the call's `signal` aborts
 * (T22), the whole group (the shell and every process that stayed in it) gets SIGTERM, then
 * SIGKILL after a 2 s grace, and the call ends as an `is_error` result with the output so
 * far. A process that left the group (`setsid`, a daemon that detaches itself) gets neither
 * signal, and Bash does not pretend otherwise (H12): on Linux it watches the command's
 * process tree through `/proc` while it runs, and after the kill the result names every
 * process it started that is still running outside the group, and every process still
 * holding the command's output pipes ("1 process left the process group and may still be
 * running: pid 1234 (sleep)"). It reports them; it does not kill them. The watch is best
 * effort: a process that detaches and closes the pipes between two looks (every 500 ms) is
 * not seen; without `/proc` (macOS) the result says such processes cannot be detected.
 * Background processes that outlive a command which exits normally are left running, and
 * their later output is not captured. stdin is closed. Combined stdout and stderr are
 * returned in arrival order, capped at `maxOutputChars` (default 30,000: the start and the
 * end are kept, with a note of how much was cut from the middle). The result ends with the
 * exit code; a non-zero exit is an `is_error` result carrying the output.
 *
 * @param options - `cwd` (where commands start), `additionalDirectories` (accepted for
 *   uniformity; unused), `defaultTimeoutMs` and `maxOutputChars`.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function bashTool(options: BashToolOptions): ToolDefinition<BashToolInput> {
  const prefix = "bashTool():";
  assertKnownOptions(options, [...WORKSPACE_OPTION_KEYS, ...BASH_CAP_KEYS], prefix);
  return buildBashTool(resolveWorkspace(options, prefix), resolveBashCaps(options, prefix));
}

/** Builds the Bash tool on a checked workspace. Internal. */
export function buildBashTool(
  workspace: Workspace,
  caps: ResolvedBashCaps,
): ToolDefinition<BashToolInput> {
  return createToolDefinition({
    name: "Bash",
    description: [
      "Runs a shell command with bash -c, starting in the working directory, and returns its combined stdout and stderr and its exit code.",
      `Default timeout ${caps.defaultTimeoutMs} ms (timeout input in ms, at most ${BASH_MAX_TIMEOUT_MS}); on timeout the command's process group is killed, and the result names any process that escaped the group and may still run.`,
      `Output over ${caps.maxOutputChars} characters is cut in the middle. stdin is closed, so interactive commands will not wait for input.`,
      "Prefer Read, LS, Glob, Grep, Write and Edit for file work when they are available.",
    ].join("\n"),
    schema: bashSchema,
    kind: "builtin",
    handler: (input, context) => runBash(workspace, caps, input, context),
  });
}

async function runBash(
  workspace: Workspace,
  caps: ResolvedBashCaps,
  input: BashToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  throwIfAborted(context.signal, "Bash");
  const { cwd } = await realWorkspace(workspace);
  const timeoutMs = input.timeout ?? caps.defaultTimeoutMs;
  const output = new OutputCollector(caps.maxOutputChars);
  const outcome = await runCommand(input.command, cwd, timeoutMs, output, context.signal);
  const text = output.text();
  const shown = text === "" ? "(no output)" : text;
  if (outcome.ending === "timeout") {
    return {
      content: `${shown}\n\nCommand timed out after ${timeoutMs} ms; ${killReport(outcome)} Pass a larger timeout (at most ${BASH_MAX_TIMEOUT_MS} ms) or run something shorter.`,
      isError: true,
    };
  }
  if (outcome.ending === "abort") {
    return {
      content: `${shown}\n\nCommand cancelled; ${killReport(outcome)}`,
      isError: true,
    };
  }
  if (outcome.code === null) {
    return {
      content: `${shown}\n\nCommand terminated by signal ${outcome.signal ?? "unknown"}.`,
      isError: true,
    };
  }
  return {
    content: `${shown}\n\nExit code: ${outcome.code}`,
    ...(outcome.code !== 0 ? { isError: true } : {}),
  };
}

interface CommandOutcome {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly ending: "timeout" | "abort" | undefined;
  /** After a timeout or abort: processes still running outside the killed group. */
  readonly survivors: readonly SurvivingProcess[];
  /** Whether survivors could be looked for on this platform (`/proc`). */
  readonly watched: boolean;
}

/** What the kill of a timed-out or cancelled command stopped, and what it could not (H12). */
function killReport(outcome: CommandOutcome): string {
  const killed = "its process group (the shell and every process that stayed in it) was killed.";
  if (!outcome.watched) {
    return `${killed} Processes that left the group (setsid, daemons) cannot be detected on this platform and may still be running.`;
  }
  const count = outcome.survivors.length;
  if (count === 0) return `${killed} No process that it started was found still running.`;
  const list = outcome.survivors.map((found) => `pid ${found.pid} (${found.command})`).join(", ");
  return `${killed} ${count} process${count === 1 ? "" : "es"} left the process group and may still be running: ${list}. Stop ${count === 1 ? "it" : "them"} with kill ${outcome.survivors.map((found) => found.pid).join(" ")} if ${count === 1 ? "it" : "they"} should not run.`;
}

/** How often the command's process tree is looked at while it runs. */
const WATCH_INTERVAL_MS = 500;

function runCommand(
  command: string,
  cwd: string,
  timeoutMs: number,
  output: OutputCollector,
  signal: AbortSignal,
): Promise<CommandOutcome> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", command], {
      cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let ending: "timeout" | "abort" | undefined;
    let killing: Promise<void> | undefined;
    let exited = false;
    // Watch the command's process tree, to tell afterwards what escaped its group (H12).
    const watch = child.pid === undefined ? undefined : new ProcessWatch(child.pid);
    const watcher = setInterval(() => watch?.scan(), WATCH_INTERVAL_MS);
    watcher.unref();
    const closed = new Promise<void>((resolveClosed) => child.once("close", () => resolveClosed()));

    const killGroup = (name: NodeJS.Signals): void => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, name);
      } catch {
        // ESRCH: the group is already gone.
      }
    };
    const terminate = (reason: "timeout" | "abort"): void => {
      if (ending !== undefined || exited) return;
      ending = reason;
      // The last look before the kill: the tree is still whole.
      watch?.scan();
      killGroup("SIGTERM");
      killing = Promise.race([closed, delay(KILL_GRACE_MS)]).then(() => killGroup("SIGKILL"));
    };
    const timer = setTimeout(() => terminate("timeout"), timeoutMs);
    const onAbort = (): void => terminate("abort");
    signal.addEventListener("abort", onAbort, { once: true });
    if (signal.aborted) onAbort();
    const cleanUp = (): void => {
      clearTimeout(timer);
      clearInterval(watcher);
      signal.removeEventListener("abort", onAbort);
    };

    for (const stream of [child.stdout, child.stderr]) {
      stream.setEncoding("utf8");
      stream.on("data", (chunk: string) => output.push(chunk));
    }
    child.once("error", (error) => {
      cleanUp();
      reject(
        new BuiltinToolError(
          "file_system_error",
          `Bash could not start bash (${error.message}). Check that bash is installed and on PATH.`,
          { cause: error },
        ),
      );
    });
    child.once("exit", (code, exitSignal) => {
      exited = true;
      cleanUp();
      const finish = async (): Promise<void> => {
        if (killing !== undefined) {
          // Timed out or cancelled: the rest of the group gets SIGKILL after the grace.
          await killing;
          await Promise.race([closed, delay(DRAIN_MS)]);
        } else {
          // Background processes may still hold the pipes: take what is there, then let go.
          await Promise.race([closed, delay(DRAIN_MS)]);
        }
        const survivors = killing !== undefined && watch !== undefined ? watch.survivors() : [];
        child.stdout.destroy();
        child.stderr.destroy();
        resolve({
          code,
          signal: exitSignal,
          ending,
          survivors,
          watched: watch?.supported ?? false,
        });
      };
      void finish();
    });
  });
}

function delay(ms: number): Promise<void> {
  return new Promise((resolveDelay) => setTimeout(resolveDelay, ms));
}

/** Keeps the start and the end of a long output, counting what is cut from the middle. */
class OutputCollector {
  readonly #headMax: number;
  readonly #tailMax: number;
  #head = "";
  #tail = "";
  #omitted = 0;

  constructor(maxChars: number) {
    this.#headMax = Math.ceil(maxChars / 2);
    this.#tailMax = maxChars - this.#headMax;
  }

  push(chunk: string): void {
    let rest = chunk;
    if (this.#head.length < this.#headMax) {
      const take = rest.slice(0, this.#headMax - this.#head.length);
      this.#head += take;
      rest = rest.slice(take.length);
    }
    if (rest === "") return;
    this.#tail += rest;
    if (this.#tail.length > this.#tailMax) {
      this.#omitted += this.#tail.length - this.#tailMax;
      this.#tail = this.#tail.slice(this.#tail.length - this.#tailMax);
    }
  }

  text(): string {
    const text =
      this.#omitted === 0
        ? this.#head + this.#tail
        : `${this.#head}\n[... output cut: ${this.#omitted} characters omitted from the middle; the output had ${this.#head.length + this.#omitted + this.#tail.length} characters in all. Redirect it to a file and Read or Grep it to see everything ...]\n${this.#tail}`;
    return text.replace(/\n+$/, "");
  }
}
