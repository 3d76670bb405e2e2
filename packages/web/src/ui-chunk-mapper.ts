import type { SDKMessage, SDKResultMessage, TraceEvent } from "@lattice/core";
import type { ContentBlock, ModelStreamEvent, ToolResultBlock } from "@lattice/providers";
import type { FinishReason } from "ai";
import type { LatticeUIMessageChunk } from "./lattice-ui-message.js";

/** What kind of part an open streamed block is. */
type OpenBlock =
  | { readonly kind: "text"; readonly id: string }
  | { readonly kind: "reasoning"; readonly id: string; signature: string }
  | { readonly kind: "tool"; readonly id: string; readonly name: string }
  | { readonly kind: "none" };

/** The scheduler's view of one call, as the `data-lattice-tool-call` part last showed it. */
interface CallTiming {
  readonly toolName: string;
  readonly turn: number;
  readonly queuedAt: number;
  startedAt?: number;
  runIndex?: number;
}

/**
 * Turns one top-level run's messages and trace events into UI message chunks, in order. A
 * small state machine: which step is open, which streamed blocks are open, which calls the
 * current batch holds. Pure but for `emit`.
 */
export class UIChunkMapper {
  private started = false;
  private stepOpen = false;
  /** Turns seen so far this stream; names the part ids of a model call. */
  private turn = 0;
  /** Whether the model call in progress streamed its blocks (its `assistant` message then adds only tool inputs). */
  private streamedThisTurn = false;
  /** Counts the model call's attempts (a retry or a fallback streams its blocks again): part ids stay unique. */
  private attempt = 0;
  private readonly open = new Map<number, OpenBlock>();
  private readonly calls = new Map<string, CallTiming>();
  /** The tool_use ids of each batch, by turn, in tool_use order (from `tool_call_queued`). */
  private readonly batches = new Map<number, string[]>();
  private runId = "";
  private sessionId = "";

  /**
   * @param emit - Receives each chunk.
   * @param deniedToolCallIds - Calls a person denied in the decisions this query resumes
   *   with: their results end as `tool-output-denied`.
   */
  constructor(
    private readonly emit: (chunk: LatticeUIMessageChunk) => void,
    private readonly deniedToolCallIds: ReadonlySet<string>,
  ) {}

  /** The run the stream follows, once its `init` message came; `""` before. */
  get currentRunId(): string {
    return this.runId;
  }

  /** Whether `start` was sent. */
  get hasStarted(): boolean {
    return this.started;
  }

  /**
   * Maps one message of the query. Messages of child runs (agent tools) are not shown.
   *
   * @returns `true` when the message was the run's result.
   */
  message(message: SDKMessage): boolean {
    if (message.parentToolUseId !== null) return false;
    switch (message.type) {
      case "system":
        if (message.subtype === "init") this.start(message.sessionId, message.runId);
        return false;
      case "stream_event":
        this.streamEvent(message.event);
        return false;
      case "assistant":
        this.assistant(message.message.content);
        return false;
      case "user":
        this.toolResults(message.message.content);
        return false;
      case "output_delta":
        return false;
      case "result":
        this.result(message);
        return true;
    }
  }

  /** Maps one trace event of the run: batch plans, policy refusals, call queueing and timing. */
  trace(event: TraceEvent): void {
    switch (event.type) {
      case "tool_call_queued": {
        const ids = this.batches.get(event.turn) ?? [];
        ids[event.index] = event.id;
        this.batches.set(event.turn, ids);
        this.calls.set(event.id, { toolName: event.name, turn: event.turn, queuedAt: event.time });
        this.callData(event.id, "queued");
        return;
      }
      case "batch_planned": {
        const ids = this.batches.get(event.turn) ?? [];
        this.emit({
          type: "data-lattice-batch",
          id: `batch-${this.runId}-${event.turn}`,
          data: {
            runId: this.runId,
            turn: event.turn,
            mode: event.plan.mode,
            runs: event.plan.runs.map((run) => ({
              concurrent: run.concurrent,
              toolCallIds: run.indices.map((index) => ids[index] ?? `#${index}`),
            })),
          },
        });
        return;
      }
      case "batch_policy": {
        const decision = event.decision;
        if (decision?.allowed) return;
        const ids = this.batches.get(event.turn) ?? [];
        const named = decision?.conflictingToolCallIds ?? [];
        this.emit({
          type: "data-lattice-refusal",
          id: `refusal-${this.runId}-${event.turn}`,
          data: {
            turn: event.turn,
            code: decision !== undefined ? decision.code : "policy_error",
            message: decision !== undefined ? decision.message : (event.error?.message ?? ""),
            toolCallIds: named.length > 0 ? [...named] : ids.filter((id) => id !== undefined),
          },
        });
        return;
      }
      case "tool_call_started": {
        const call = this.calls.get(event.id);
        if (call === undefined) return;
        call.startedAt = event.time;
        call.runIndex = event.runIndex;
        this.callData(event.id, "running");
        return;
      }
      case "tool_call_finished":
        this.callData(event.id, event.status, event.durationMs);
        return;
      default:
        return;
    }
  }

  /** The query failed or was aborted before its result: closes what is open. */
  failed(aborted: boolean, errorText: string): void {
    this.closeOpenBlocks(false);
    if (this.stepOpen) {
      this.stepOpen = false;
      this.emit({ type: "finish-step" });
    }
    if (aborted) {
      this.emit({ type: "abort", reason: errorText });
      return;
    }
    this.emit({ type: "error", errorText });
    this.emit({ type: "finish", finishReason: "error" });
  }

  private start(sessionId: string, runId: string): void {
    if (this.started) return;
    this.started = true;
    this.sessionId = sessionId;
    this.runId = runId;
    this.emit({ type: "start", messageId: runId, messageMetadata: { sessionId, runId } });
  }

  private openStep(): void {
    if (this.stepOpen) return;
    this.stepOpen = true;
    this.turn++;
    this.streamedThisTurn = false;
    this.emit({ type: "start-step" });
  }

  private closeStep(): void {
    if (!this.stepOpen) return;
    this.stepOpen = false;
    this.emit({ type: "finish-step" });
  }

  private streamEvent(event: ModelStreamEvent): void {
    switch (event.type) {
      case "message_start":
      case "retry":
        // A model call after a batch (or the first) opens a new step. A retried call (or a
        // fallback model) streams its blocks again in the same step: what the failed attempt
        // streamed is closed, and the new blocks get ids of their own.
        this.openStep();
        this.closeOpenBlocks(false);
        this.attempt++;
        return;
      case "block_start": {
        this.openStep();
        this.streamedThisTurn = true;
        const id = `${this.turn}-${this.attempt}-${event.index}`;
        const block = event.block;
        if (block.type === "text") {
          this.open.set(event.index, { kind: "text", id });
          this.emit({ type: "text-start", id });
        } else if (block.type === "thinking") {
          this.open.set(event.index, { kind: "reasoning", id, signature: "" });
          this.emit({ type: "reasoning-start", id });
        } else if (block.type === "tool_use") {
          this.open.set(event.index, { kind: "tool", id: block.id, name: block.name });
          this.emit({ type: "tool-input-start", toolCallId: block.id, toolName: block.name });
        } else {
          this.open.set(event.index, { kind: "none" });
        }
        return;
      }
      case "text_delta": {
        const open = this.open.get(event.index);
        if (open?.kind === "text")
          this.emit({ type: "text-delta", id: open.id, delta: event.text });
        return;
      }
      case "thinking_delta": {
        const open = this.open.get(event.index);
        if (open?.kind === "reasoning") {
          this.emit({ type: "reasoning-delta", id: open.id, delta: event.thinking });
        }
        return;
      }
      case "signature_delta": {
        const open = this.open.get(event.index);
        if (open?.kind === "reasoning") open.signature += event.signature;
        return;
      }
      case "tool_input_delta": {
        const open = this.open.get(event.index);
        if (open?.kind === "tool") {
          this.emit({
            type: "tool-input-delta",
            toolCallId: open.id,
            inputTextDelta: event.partialJson,
          });
        }
        return;
      }
      case "block_stop":
        this.closeBlock(event.index);
        return;
      default:
        return;
    }
  }

  /**
   * @param complete - The block ended as the model meant it (`block_stop`, or its message
   *   came whole); `false` when the call failed or was retried before the block's end.
   */
  private closeBlock(index: number, complete = true): void {
    const open = this.open.get(index);
    if (open === undefined) return;
    this.open.delete(index);
    if (open.kind === "text") this.emit({ type: "text-end", id: open.id });
    else if (open.kind === "tool" && !complete) {
      // The call's input never arrived whole (the model call failed or was cut): the call
      // will not run, and its part says so rather than staying "input-streaming".
      this.emit({
        type: "tool-input-error",
        toolCallId: open.id,
        toolName: open.name,
        input: undefined,
        errorText: "The model call ended before this call's input was complete; it did not run.",
      });
    } else if (open.kind === "reasoning") {
      this.emit({
        type: "reasoning-end",
        id: open.id,
        ...(open.signature !== ""
          ? { providerMetadata: { lattice: { signature: open.signature } } }
          : {}),
      });
    }
  }

  private closeOpenBlocks(complete = true): void {
    for (const index of [...this.open.keys()]) this.closeBlock(index, complete);
  }

  private assistant(content: readonly ContentBlock[]): void {
    this.openStep();
    this.closeOpenBlocks();
    const streamed = this.streamedThisTurn;
    for (let index = 0; index < content.length; index++) {
      const block = content[index] as ContentBlock;
      const id = `${this.turn}-${this.attempt}-${index}`;
      if (block.type === "text" && !streamed) {
        this.emit({ type: "text-start", id });
        if (block.text !== "") this.emit({ type: "text-delta", id, delta: block.text });
        this.emit({ type: "text-end", id });
      } else if (block.type === "thinking" && !streamed) {
        this.emit({ type: "reasoning-start", id });
        if (block.thinking !== "")
          this.emit({ type: "reasoning-delta", id, delta: block.thinking });
        this.emit({
          type: "reasoning-end",
          id,
          ...(block.signature !== ""
            ? { providerMetadata: { lattice: { signature: block.signature } } }
            : {}),
        });
      } else if (block.type === "tool_use") {
        this.emit({
          type: "tool-input-available",
          toolCallId: block.id,
          toolName: block.name,
          input: block.input,
        });
      }
    }
  }

  private toolResults(content: readonly ToolResultBlock[]): void {
    for (const block of content) {
      if (block.type !== "tool_result") continue;
      const toolCallId = block.tool_use_id;
      if (this.deniedToolCallIds.has(toolCallId)) {
        this.emit({ type: "tool-output-denied", toolCallId });
      } else if (block.is_error === true) {
        this.emit({ type: "tool-output-error", toolCallId, errorText: resultText(block) });
      } else {
        this.emit({ type: "tool-output-available", toolCallId, output: toolOutputOf(block) });
      }
    }
    this.closeStep();
  }

  private result(message: SDKResultMessage): void {
    this.start(message.sessionId, message.runId);
    this.closeOpenBlocks(false);
    for (const pending of message.pendingApprovals ?? []) {
      this.emit({
        type: "tool-approval-request",
        approvalId: pending.approvalId,
        toolCallId: pending.toolUseId,
      });
    }
    this.closeStep();
    if (message.isError) {
      this.emit({
        type: "error",
        errorText: message.errors.length > 0 ? message.errors.join("\n") : message.subtype,
      });
    }
    this.emit({
      type: "finish",
      finishReason: finishReasonOf(message),
      messageMetadata: {
        sessionId: this.sessionId,
        runId: this.runId,
        subtype: message.subtype,
        usage: message.usage,
        durationMs: message.durationMs,
        ...(message.errors.length > 0 ? { errors: message.errors } : {}),
      },
    });
  }

  private callData(toolCallId: string, status: string, durationMs?: number): void {
    const call = this.calls.get(toolCallId);
    if (call === undefined) return;
    this.emit({
      type: "data-lattice-tool-call",
      id: toolCallId,
      data: {
        toolCallId,
        toolName: call.toolName,
        turn: call.turn,
        status: status as "queued",
        ...(call.runIndex !== undefined ? { runIndex: call.runIndex } : {}),
        ...(call.startedAt !== undefined ? { waitMs: round(call.startedAt - call.queuedAt) } : {}),
        ...(durationMs !== undefined ? { durationMs: round(durationMs) } : {}),
      },
    });
  }
}

/**
 * A tool result's content as a tool part's `output`: a result of one text block (most
 * results) is its text; anything else (images, several blocks) the blocks as they are.
 */
export function toolOutputOf(block: ToolResultBlock): ToolResultBlock["content"] {
  const content = block.content;
  if (typeof content !== "string" && content.length === 1 && content[0]?.type === "text") {
    return content[0].text;
  }
  return content;
}

/** A tool result's text: its string, or its text blocks joined (images are left out). */
export function resultText(block: ToolResultBlock): string {
  if (typeof block.content === "string") return block.content;
  return block.content
    .filter((part) => part.type === "text")
    .map((part) => (part as { text: string }).text)
    .join("\n");
}

function finishReasonOf(message: SDKResultMessage): FinishReason {
  switch (message.subtype) {
    case "success":
      return "stop";
    case "interrupted":
      return "tool-calls";
    case "guardrail_tripped":
      return "content-filter";
    case "error_max_turns":
    case "error_budget":
    case "error_context_overflow":
      return "length";
    default:
      return "error";
  }
}

function round(ms: number): number {
  return Math.round(ms * 10) / 10;
}
