import type { FileHandle } from "node:fs/promises";
import { StringDecoder } from "node:string_decoder";
import { z } from "zod/v4";
import {
  createToolDefinition,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "../index.js";
import { assertKnownOptions } from "../internal.js";
import { BuiltinToolError } from "./builtin-tool-error.js";
import { fileSystemError } from "./file-errors.js";
import { openConfined } from "./open-confined.js";
import { type CapSpecs, type ResolvedCaps, resolveCaps } from "./tool-options.js";
import {
  resolveWorkspace,
  throwIfAborted,
  WORKSPACE_OPTION_KEYS,
  type Workspace,
  type WorkspaceOptions,
} from "./workspace.js";

/** The caps of the Read tool. Each is a positive integer. */
export interface ReadToolCaps {
  /** Lines read when the call gives no `limit`. Default 2000. */
  readonly maxLines?: number | undefined;
  /** The most bytes of text one call returns (line numbers included). Default 262,144 (256 KiB). */
  readonly maxBytes?: number | undefined;
  /** Longer lines are cut to this many characters, with a note. Default 2000. */
  readonly maxLineLength?: number | undefined;
}

/** Options of {@link readTool}: the workspace and the caps. */
export interface ReadToolOptions extends WorkspaceOptions, ReadToolCaps {}

/** Read's caps: each one's default (and upper bound, if any). */
const READ_CAPS = {
  maxLines: { fallback: 2000 },
  maxBytes: { fallback: 256 * 1024 },
  maxLineLength: { fallback: 2000 },
} satisfies CapSpecs<keyof ReadToolCaps>;

/** The keys of {@link ReadToolCaps}, for strict option checks. */
export const READ_CAP_KEYS: readonly string[] = Object.keys(READ_CAPS);

const readSchema = z.object({
  file_path: z
    .string()
    .min(1)
    .describe("The file to read: an absolute path, or a path relative to the working directory."),
  offset: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe("The line number to start reading at (1-based; 0 also means the first line)."),
  limit: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe(
      "How many lines to read. Default 2000. Use with offset to read a long file in parts.",
    ),
}) satisfies z.ZodType<ReadToolInput>;

/** The validated input of the Read tool. */
export interface ReadToolInput {
  /** The file to read: absolute, or relative to `cwd`. */
  readonly file_path: string;
  /** The 1-based line to start at (0 also means the first line). */
  readonly offset?: number | undefined;
  /** How many lines to read. */
  readonly limit?: number | undefined;
}

type ResolvedReadCaps = ResolvedCaps<typeof READ_CAPS>;

/** Checks Read's caps. Internal; `nest` names the options object inside `builtinTools()`. */
export function resolveReadCaps(
  caps: ReadToolCaps | undefined,
  prefix: string,
  nest?: string,
): ResolvedReadCaps {
  return resolveCaps(READ_CAPS, caps, prefix, nest);
}

/**
 * The built-in Read tool: reads a text file inside the working directory, numbered like
 * `cat -n`. Input `{ file_path, offset?, limit? }`; concurrency-safe (T16); kind `"builtin"`.
 *
 * Reads at most `limit` lines (default `maxLines`, 2000) from the 1-based `offset`, at most
 * `maxBytes` of output, and cuts lines longer than `maxLineLength`; whenever it cuts, the
 * result ends with a note saying so and which `offset` reads on. The file is streamed, so a
 * huge file costs only what is returned. Binary files (a NUL byte in the first 8 KiB) and
 * directories are refused. Paths are confined to the workspace (see {@link builtinTools}),
 * and the file is read only through a handle checked after it was opened (its real path
 * must be inside too), so a symlink swapped in cannot redirect the read. A FIFO, socket or
 * device is refused without blocking; a file with more than one hard link is refused unless
 * `allowHardLinks`, with a message saying why and what to do.
 *
 * @param options - `cwd`, `additionalDirectories`, `allowHardLinks` (default `false`) and the
 *   caps of {@link ReadToolCaps}.
 * @throws `UnknownOptionError` for an unknown key; `InvalidOptionError` for a
 *   `cwd` that is not an existing directory or a cap that is not a positive integer.
 */
export function readTool(options: ReadToolOptions): ToolDefinition<ReadToolInput> {
  const prefix = "readTool():";
  assertKnownOptions(options, [...WORKSPACE_OPTION_KEYS, ...READ_CAP_KEYS], prefix);
  return buildReadTool(resolveWorkspace(options, prefix), resolveReadCaps(options, prefix));
}

/** Builds the Read tool on a checked workspace. Internal. */
export function buildReadTool(
  workspace: Workspace,
  caps: ResolvedReadCaps,
): ToolDefinition<ReadToolInput> {
  return createToolDefinition({
    name: "Read",
    description: [
      "Reads a text file from the working directory. file_path may be absolute or relative to the working directory; it must stay inside it.",
      `Returns lines numbered like \`cat -n\` (number, tab, text), at most ${caps.maxLines} lines by default; use offset (1-based line) and limit to read a long file in parts.`,
      `Lines longer than ${caps.maxLineLength} characters are cut, and the output stops at ${caps.maxBytes} bytes; when that happens a note at the end says how to read on.`,
      "Reading several files at once is fine: send several Read calls in one reply.",
    ].join("\n"),
    schema: readSchema,
    kind: "builtin",
    isConcurrencySafe: () => true,
    handler: (input, context) => readFile(workspace, caps, input, context),
  });
}

async function readFile(
  workspace: Workspace,
  caps: ResolvedReadCaps,
  input: ReadToolInput,
  context: ToolContext,
): Promise<ToolHandlerResult> {
  const given = input.file_path;
  throwIfAborted(context.signal, "Read");
  let handle: FileHandle | undefined;
  try {
    const opened = await openConfined(workspace, given, "Read", {
      allowHardLinks: workspace.allowHardLinks,
    });
    handle = opened.handle;
    throwIfAborted(context.signal, "Read");
    if (opened.stats.isDirectory()) {
      throw new BuiltinToolError(
        "not_a_file",
        `Read: ${JSON.stringify(given)} is a directory, not a file. Use LS to list it, or Glob to find files in it.`,
      );
    }
    if (opened.stats.size === 0) return { content: `(${given} is empty.)` };
    const start = Math.max(1, input.offset ?? 1);
    const limit = input.limit ?? caps.maxLines;
    return await readLines(opened.handle, given, start, limit, caps, context.signal);
  } catch (error) {
    if (context.signal.aborted) throwIfAborted(context.signal, "Read");
    throw fileSystemError(error, workspace, given, "Read");
  } finally {
    // Nothing waits for the close: the result is already built.
    handle?.close().catch(() => {});
  }
}

async function readLines(
  handle: FileHandle,
  given: string,
  start: number,
  limit: number,
  caps: ResolvedReadCaps,
  signal: AbortSignal,
): Promise<ToolHandlerResult> {
  const { maxBytes, maxLineLength } = caps;
  const stream = handle.createReadStream({ highWaterMark: 64 * 1024, signal, autoClose: false });
  const decoder = new StringDecoder("utf8");
  const lines: string[] = [];
  let outputBytes = 0;
  let lineNumber = 0;
  let pending = "";
  let pendingCut = false;
  let pendingHasText = false;
  let cutLines = 0;
  let stop: "limit" | "bytes" | undefined;
  let first = true;

  const appendPartial = (text: string): void => {
    if (text === "") return;
    if (lines.length === limit) {
      stop = "limit";
      return;
    }
    pendingHasText = true;
    if (lineNumber + 1 < start) return;
    const room = maxLineLength + 1 - pending.length;
    if (room > 0) pending += text.slice(0, room);
    if (text.length > room) pendingCut = true;
  };
  const completeLine = (): void => {
    lineNumber += 1;
    if (lineNumber >= start && lines.length < limit) {
      let text = pending.endsWith("\r") ? pending.slice(0, -1) : pending;
      if (pendingCut || text.length > maxLineLength) {
        text = `${text.slice(0, maxLineLength)}… [line cut at ${maxLineLength} characters]`;
        cutLines += 1;
      }
      const line = `${String(lineNumber).padStart(6)}\t${text}`;
      const bytes = Buffer.byteLength(line) + 1;
      if (outputBytes + bytes > maxBytes) {
        lineNumber -= 1;
        stop = "bytes";
      } else {
        lines.push(line);
        outputBytes += bytes;
      }
    }
    pending = "";
    pendingCut = false;
    pendingHasText = false;
  };
  const feed = (text: string): void => {
    let from = 0;
    while (stop === undefined) {
      const newline = text.indexOf("\n", from);
      if (newline === -1) {
        appendPartial(text.slice(from));
        return;
      }
      appendPartial(text.slice(from, newline));
      if (stop !== undefined) return;
      // An empty line right after the limit was reached still proves the file goes on.
      if (lines.length === limit && lineNumber >= start) {
        stop = "limit";
        return;
      }
      completeLine();
      from = newline + 1;
    }
  };

  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      if (first) {
        first = false;
        if (chunk.subarray(0, 8192).includes(0)) {
          throw new BuiltinToolError(
            "binary_file",
            `Read: ${JSON.stringify(given)} looks like a binary file (it contains NUL bytes), so it is not shown as text.`,
          );
        }
      }
      feed(decoder.write(chunk));
      if (stop !== undefined) break;
    }
    if (stop === undefined) {
      feed(decoder.end());
      if (stop === undefined && (pendingHasText || pending !== "")) {
        if (lines.length === limit) stop = "limit";
        else completeLine();
      }
    }
  } finally {
    stream.destroy();
  }

  if (lines.length === 0 && stop === undefined) {
    return {
      content: `Read: ${JSON.stringify(given)} has only ${lineNumber} line${lineNumber === 1 ? "" : "s"}, so offset ${start} is past its end. Call Read again with a smaller offset.`,
      isError: true,
    };
  }
  const last = start + lines.length - 1;
  const notes: string[] = [];
  if (cutLines > 0) {
    notes.push(
      `[${cutLines} line${cutLines === 1 ? " was" : "s were"} longer than ${maxLineLength} characters and cut. Use Grep to search inside long lines.]`,
    );
  }
  if (stop === "limit") {
    notes.push(
      `[Showing lines ${start}-${last}; the file has more lines. Call Read with offset ${last + 1} to read on.]`,
    );
  } else if (stop === "bytes") {
    notes.push(
      lines.length === 0
        ? `[Line ${start} alone is larger than the ${maxBytes}-byte output cap, so nothing is shown. Use Grep to search the file instead.]`
        : `[Output cut at ${maxBytes} bytes after line ${last}. Call Read with offset ${last + 1} to read on.]`,
    );
  }
  return { content: [...lines, ...notes].join("\n") };
}
