import type {
  ModelMessage,
  SDKMessage,
  SDKResultMessage,
  ToolResultBlock,
  TraceEvent,
} from "agent-lattice";

/**
 * Writes the chat's output: whole lines, and streamed text that may stop mid-line. It keeps
 * track of where the cursor is, so a line never starts in the middle of streamed text.
 */
export class Printer {
  readonly #write: (text: string) => void;
  #atLineStart = true;
  #banner: string | undefined;

  /** @param write - Where the text goes, for example `process.stdout.write`. */
  constructor(write: (text: string) => void) {
    this.#write = write;
  }

  /**
   * Sets a line printed before the next output, if there is any (for example "resuming …",
   * which only makes sense when the resumed run shows something). `undefined` drops it.
   */
  set banner(line: string | undefined) {
    this.#banner = line;
  }

  /** Writes streamed text as it is, after the banner. */
  text(text: string): void {
    if (text === "") return;
    this.#flushBanner();
    this.#write(text);
    this.#atLineStart = text.endsWith("\n");
  }

  /** Writes a whole line, on a line of its own. */
  line(line = ""): void {
    this.#flushBanner();
    this.endLine();
    this.#write(`${line}\n`);
  }

  /** Ends the current line if streamed text left the cursor in the middle of one. */
  endLine(): void {
    if (!this.#atLineStart) this.#write("\n");
    this.#atLineStart = true;
  }

  /** Tells the printer the cursor is at the start of a line (the user just pressed Enter). */
  markLineStart(): void {
    this.#atLineStart = true;
  }

  /** Tells the printer something else wrote on the current line (a readline prompt). */
  markMidLine(): void {
    this.#atLineStart = false;
  }

  #flushBanner(): void {
    const banner = this.#banner;
    if (banner === undefined) return;
    this.#banner = undefined;
    this.line(banner);
  }
}

const PREVIEW_LENGTH = 160;

/** One line of at most `length` characters: line breaks become spaces, the rest is cut. */
function preview(text: string, length = PREVIEW_LENGTH): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}

function resultText(content: ToolResultBlock["content"]): string {
  if (typeof content === "string") return content;
  return content.map((part) => (part.type === "text" ? part.text : "[image]")).join("");
}

/** How a tool call is shown: `  → name {"input":…}`. */
function toolCallLine(name: string, input: unknown): string {
  return `  → ${name} ${preview(JSON.stringify(input) ?? "{}")}`;
}

/**
 * How a tool result is shown: `  ← name: text`, or `  ✗ name: text` for a failure, on one
 * line of at most 160 characters.
 *
 * @param name - The tool's name.
 * @param block - The `tool_result` block.
 * @returns The line.
 */
export function toolResultLine(name: string, block: ToolResultBlock): string {
  return `  ${block.is_error === true ? "✗" : "←"} ${name}: ${preview(resultText(block.content))}`;
}

/**
 * The summary line of a result: how it ended, turns, tokens and time, and what went wrong.
 *
 * @param result - The run's result message.
 * @returns One line, plus one line per error.
 */
export function resultLines(result: SDKResultMessage): string[] {
  const turns = `${result.numTurns} ${result.numTurns === 1 ? "turn" : "turns"}`;
  const tokens = `${result.usage.inputTokens} in / ${result.usage.outputTokens} out tokens`;
  const seconds = `${(result.durationMs / 1000).toFixed(1)} s`;
  // The cost, when every model that served the run has a known price.
  const cost = result.usage.costUsd !== undefined ? `, $${result.usage.costUsd.toFixed(6)}` : "";
  const guardrail = result.guardrail;
  return [
    `  [${result.subtype}, ${turns}, ${tokens}${cost}, ${seconds}]`,
    ...(guardrail !== undefined
      ? [
          `  ⨯ stopped by the ${guardrail.kind} guardrail ${guardrail.name}: ${guardrail.reason ?? "no reason given"}`,
        ]
      : result.errors.map((error) => `  ✗ ${error}`)),
  ];
}

/**
 * The line that says what a compaction did (C9): `compacted 42 messages into a summary: 31,204 →
 * 2,310 tokens`, or the tool results it cleared.
 *
 * @param compaction - What was compacted: messages replaced, results cleared, tokens before and after.
 * @returns One line.
 */
export function compactionLine(compaction: {
  readonly strategy: string;
  readonly messagesReplaced: number;
  readonly toolResultsCleared: number;
  readonly tokensBefore: number;
  readonly tokensAfter: number;
}): string {
  const tokens = `${compaction.tokensBefore.toLocaleString("en-US")} → ${compaction.tokensAfter.toLocaleString("en-US")} tokens`;
  if (compaction.strategy === "compact") {
    return `  ⇣ compacted ${compaction.messagesReplaced} messages into a summary: ${tokens}`;
  }
  if (compaction.toolResultsCleared > 0) {
    return `  ⇣ cleared ${compaction.toolResultsCleared} old tool ${compaction.toolResultsCleared === 1 ? "result" : "results"}: ${tokens}`;
  }
  return `  ⇣ ${compaction.strategy} replaced ${compaction.messagesReplaced} messages: ${tokens}`;
}

/**
 * Prints one run as it streams: the assistant's text as it arrives, each tool call when the
 * model has sent it, each tool result, and the result's summary line.
 */
export class RunView {
  readonly #printer: Printer;
  readonly #resumed: boolean;
  readonly #toolNames = new Map<string, string>();
  #streamedText = false;
  #inText = false;
  #modelCalled = false;

  /**
   * @param printer - Where the run is shown.
   * @param resumed - Whether the run is a resumed one (`agent.resume()`): its first tool calls
   *   may come from the reply of before the interruption, which this view never saw.
   */
  constructor(printer: Printer, resumed = false) {
    this.#printer = printer;
    this.#resumed = resumed;
  }

  /**
   * Takes the run's trace events (the agent's `onTrace`). A resumed run starts with the calls
   * of its last reply that have no logged result: they run again, and the view says so, since
   * their reply was shown before the interruption, not in this run.
   *
   * @param event - A trace event of the run.
   */
  trace(event: TraceEvent): void {
    if (event.type === "model_request_started") {
      this.#modelCalled = true;
    } else if (event.type === "model_fallback") {
      this.#printer.line(
        `  ↪ ${event.fromModel} failed (${event.message}): this run goes on with ${event.toModel}`,
      );
    } else if (event.type === "tool_call_queued") {
      this.#toolNames.set(event.id, event.name);
      if (this.#resumed && !this.#modelCalled) {
        this.#printer.line(`  ↻ ${event.name} runs again: its result was not logged`);
      }
    }
  }

  /**
   * Shows one message of the run.
   *
   * @param message - A message from `agent.query()` or `agent.resume()`.
   */
  show(message: SDKMessage): void {
    const printer = this.#printer;
    switch (message.type) {
      case "stream_event": {
        const event = message.event;
        if (event.type === "block_start" && event.block.type === "text") {
          printer.endLine();
          printer.text("assistant> ");
          this.#inText = true;
        } else if (event.type === "text_delta") {
          printer.text(event.text);
          this.#streamedText = true;
        } else if (event.type === "block_stop" && this.#inText) {
          printer.endLine();
          this.#inText = false;
        } else if (event.type === "retry") {
          printer.line(`  (model call failed, retry ${event.attempt}: ${event.message})`);
        }
        break;
      }
      case "assistant":
        for (const block of message.message.content) {
          if (block.type === "text" && !this.#streamedText && block.text !== "") {
            printer.line(`assistant> ${block.text}`);
          } else if (block.type === "tool_use") {
            this.#toolNames.set(block.id, block.name);
            printer.line(toolCallLine(block.name, block.input));
          }
        }
        this.#streamedText = false;
        break;
      case "user":
        for (const block of message.message.content) {
          printer.line(toolResultLine(this.#toolNames.get(block.tool_use_id) ?? "tool", block));
        }
        break;
      case "result":
        if (message.parentToolUseId === null) {
          for (const line of resultLines(message)) printer.line(line);
        }
        break;
      case "system":
        if (message.subtype === "compact_boundary") printer.line(compactionLine(message));
        break;
      default:
        break;
    }
  }
}

/**
 * The lines that show a stored conversation, in the same shape as a live run: `you>` for
 * prompts, `assistant>` for text, arrows for tool calls and their results.
 *
 * @param messages - The conversation, oldest first.
 * @returns The lines to print.
 */
export function conversationLines(messages: readonly ModelMessage[]): string[] {
  const lines: string[] = [];
  const toolNames = new Map<string, string>();
  for (const message of messages) {
    if (typeof message.content === "string") {
      lines.push(`${message.role === "user" ? "you" : "assistant"}> ${message.content}`);
      continue;
    }
    for (const block of message.content) {
      switch (block.type) {
        case "text":
          lines.push(`${message.role === "user" ? "you" : "assistant"}> ${block.text}`);
          break;
        case "image":
          lines.push(`${message.role === "user" ? "you" : "assistant"}> [image]`);
          break;
        case "tool_use":
          toolNames.set(block.id, block.name);
          lines.push(toolCallLine(block.name, block.input));
          break;
        case "tool_result":
          lines.push(toolResultLine(toolNames.get(block.tool_use_id) ?? "tool", block));
          break;
        default:
          break;
      }
    }
  }
  return lines;
}
