/**
 * Shared set-up for the built-in tools' tests: a real temporary tree with a working
 * directory, a secret outside it, and symlinks leading in and out. Not part of the public API.
 */
import { mkdir, mkdtemp, realpath, rm, symlink, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { type AnyToolDefinition, runTool, type ToolResult, toolResultText } from "../index.js";

/** The secret's content: no tool result may ever contain it. */
export const SECRET = "TOP-SECRET-CONTENT-42";

/** A temporary tree for one test file. */
export interface Fixture {
  /** The temporary root holding everything (real path). */
  readonly root: string;
  /** The working directory the tools are confined to. */
  readonly cwd: string;
  /** A directory outside `cwd` holding `secret.txt`. */
  readonly outside: string;
  /** An extra directory outside `cwd`, for `additionalDirectories`. */
  readonly extra: string;
  /** Removes the tree. */
  cleanUp(): Promise<void>;
}

/**
 * Creates:
 * ```
 * root/work/            cwd
 *   a.txt               "alpha\nbeta\ngamma\n"
 *   src/main.ts         "export const answer = 42;\n"
 *   link-in      -> a.txt              (inside → inside)
 *   link-dir-in  -> src                (inside → inside)
 *   link-out     -> ../outside/secret.txt
 *   link-dir-out -> ../outside
 *   dangling-out -> ../outside/new.txt (does not exist yet)
 * root/outside/secret.txt              SECRET
 * root/extra/notes.md                  "extra notes\n"
 * ```
 */
export async function createFixture(): Promise<Fixture> {
  const root = await realpath(await mkdtemp(path.join(os.tmpdir(), "lattice-builtin-")));
  const cwd = path.join(root, "work");
  const outside = path.join(root, "outside");
  const extra = path.join(root, "extra");
  await mkdir(path.join(cwd, "src"), { recursive: true });
  await mkdir(outside);
  await mkdir(extra);
  await writeFile(path.join(cwd, "a.txt"), "alpha\nbeta\ngamma\n");
  await writeFile(path.join(cwd, "src", "main.ts"), "export const answer = 42;\n");
  await writeFile(path.join(outside, "secret.txt"), `${SECRET}\n`);
  await writeFile(path.join(extra, "notes.md"), "extra notes\n");
  await symlink("a.txt", path.join(cwd, "link-in"));
  await symlink("src", path.join(cwd, "link-dir-in"));
  await symlink("../outside/secret.txt", path.join(cwd, "link-out"));
  await symlink("../outside", path.join(cwd, "link-dir-out"));
  await symlink("../outside/new.txt", path.join(cwd, "dangling-out"));
  return {
    root,
    cwd,
    outside,
    extra,
    cleanUp: () => rm(root, { recursive: true, force: true }),
  };
}

/** Runs a tool the way the SDK does: validation, then the handler; never throws. */
export function call(
  definition: AnyToolDefinition,
  input: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult> {
  return runTool(definition, input, {
    signal,
    toolUseId: `toolu_test_${definition.name}`,
    toolName: definition.name,
  });
}

/** The text of a result. */
export function text(result: ToolResult): string {
  return toolResultText(result);
}
