import { spawn } from "node:child_process";
import { TSX_ARGS } from "./commands.js";

/** How a child `node` process ended, and what it wrote. */
export interface NodeRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  /** The last 4,000 characters of its stderr. */
  readonly stderr: string;
}

/**
 * Test helper: runs a TypeScript script in a child `node` (through tsx's loader and the
 * `@lattice/source` condition, so that no build is needed, with the given Node.js flags
 * first) to its end. Never rejects for the child's exit code: the test
 * reads it.
 *
 * @param flags - Node.js flags, for example `["--expose-gc"]`.
 * @param script - The script's path.
 * @param args - Its arguments.
 */
export function runNodeScript(
  flags: readonly string[],
  script: string,
  args: readonly string[] = [],
): Promise<NodeRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...flags, ...TSX_ARGS, script, ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => {
      stdout += chunk;
    });
    child.stderr.on("data", (chunk) => {
      stderr = (stderr + chunk).slice(-4_000);
    });
    child.once("error", reject);
    child.once("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
  });
}
