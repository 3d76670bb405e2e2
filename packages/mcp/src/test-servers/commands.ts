import { createRequire } from "node:module";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { FaultServerMode } from "./fault-server.js";
import type { HandWrittenServerMode } from "./hand-written-server.js";

const require = createRequire(import.meta.url);

/** tsx's loader, so a child `node` runs the TypeScript fault server without a build. */
export const TSX_LOADER = pathToFileURL(require.resolve("tsx")).href;

/**
 * The Node.js flags that run this repository's TypeScript in a child `node` without a build:
 * tsx's loader, and the `@lattice/source` condition (other packages are read from `src/`).
 */
export const TSX_ARGS: readonly string[] = ["--conditions=@lattice/source", "--import", TSX_LOADER];

/** How the tests start the fault server over stdio: `{ command, args }` for `mcpServer()`. */
export function faultServerCommand(mode: FaultServerMode = "normal"): {
  readonly command: string;
  readonly args: string[];
} {
  const script = fileURLToPath(new URL("./fault-server-stdio.ts", import.meta.url));
  return { command: process.execPath, args: [...TSX_ARGS, script, mode] };
}

/**
 * How the tests start the hand-written stdio server (see `HandWrittenServerMode`), whose
 * `SERVER_SECRET` is `secret`: `{ command, args, env }` for `mcpServer()`.
 */
export function handWrittenServerCommand(
  mode: HandWrittenServerMode,
  secret = "",
): {
  readonly command: string;
  readonly args: string[];
  readonly env: Record<string, string>;
} {
  const script = fileURLToPath(new URL("./hand-written-server.ts", import.meta.url));
  return {
    command: process.execPath,
    args: [...TSX_ARGS, script, mode],
    env: { SERVER_SECRET: secret },
  };
}

/** How the tests start `@modelcontextprotocol/server-everything` (stdio or Streamable HTTP). */
export function everythingServerCommand(transport: "stdio" | "streamableHttp"): {
  readonly command: string;
  readonly args: string[];
} {
  const entry = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
  return { command: process.execPath, args: [entry, transport] };
}

/** Whether a process with this id still runs. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until `check()` holds, polling every 20 ms, for at most `ms`. */
export async function waitFor(check: () => boolean, ms = 5_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return check();
}
