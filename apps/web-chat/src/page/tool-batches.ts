import type { LatticeBatchData, LatticeToolCallData, LatticeUIMessage } from "@lattice/web";
import { type DynamicToolUIPart, isToolUIPart, type ToolUIPart, type UITools } from "ai";

/** A tool call's part, as `useChat` holds it. */
export type ToolPart = ToolUIPart<UITools> | DynamicToolUIPart;

/** One run of a batch's plan: its calls ran side by side when `concurrent`. */
export interface BatchRunView {
  /** `true`: the calls overlapped; `false`: one after another; `undefined`: not known. */
  readonly concurrent: boolean | undefined;
  readonly parts: readonly ToolPart[];
}

/** What an assistant message shows, in order. */
export type MessageItem =
  | { readonly kind: "text"; readonly key: string; readonly text: string }
  | { readonly kind: "reasoning"; readonly key: string; readonly text: string }
  | {
      readonly kind: "batch";
      readonly key: string;
      /** The turn of the batch, when the plan is known. */
      readonly turn: number | undefined;
      readonly runs: readonly BatchRunView[];
    };

/** What a message's `data-lattice-*` parts say about its tool calls. */
export interface MessagePlan {
  /** Each call's scheduler status and timing, by tool call id. */
  readonly calls: ReadonlyMap<string, LatticeToolCallData>;
  /** The message's items: text, reasoning, and tool calls grouped by batch and run. */
  readonly items: readonly MessageItem[];
}

/**
 * Groups an assistant message's parts for display: text and reasoning in order, and the tool
 * calls of each batch together, one row per run of the batch's plan (`data-lattice-batch`).
 * Calls whose plan the message lacks (a conversation reloaded from the server keeps no
 * `data-lattice-*` parts) are grouped by model turn, in one row.
 *
 * @param message - An assistant message.
 */
export function planMessage(message: LatticeUIMessage): MessagePlan {
  const calls = new Map<string, LatticeToolCallData>();
  const batchOf = new Map<string, { readonly key: string; readonly batch: LatticeBatchData }>();
  const toolParts = new Map<string, ToolPart>();
  for (const part of message.parts) {
    if (part.type === "data-lattice-tool-call") calls.set(part.data.toolCallId, part.data);
    else if (part.type === "data-lattice-batch") {
      const key = part.id ?? `batch-${part.data.turn}`;
      for (const run of part.data.runs) {
        for (const id of run.toolCallIds) batchOf.set(id, { key, batch: part.data });
      }
    } else if (isToolUIPart(part)) toolParts.set(part.toolCallId, part);
  }

  const items: MessageItem[] = [];
  const shown = new Set<string>();
  let pending: ToolPart[] = [];
  const flush = () => {
    if (pending.length === 0) return;
    items.push({
      kind: "batch",
      key: `calls-${pending[0]!.toolCallId}`,
      turn: undefined,
      runs: [{ concurrent: undefined, parts: pending }],
    });
    pending = [];
  };
  message.parts.forEach((part, index) => {
    if (part.type === "step-start") flush();
    else if (part.type === "text") {
      flush();
      if (part.text !== "") items.push({ kind: "text", key: `text-${index}`, text: part.text });
    } else if (part.type === "reasoning") {
      flush();
      if (part.text !== "") {
        items.push({ kind: "reasoning", key: `reasoning-${index}`, text: part.text });
      }
    } else if (isToolUIPart(part)) {
      const planned = batchOf.get(part.toolCallId);
      if (planned === undefined) {
        pending.push(part);
        return;
      }
      flush();
      if (shown.has(planned.key)) return;
      shown.add(planned.key);
      const runs = planned.batch.runs
        .map((run) => ({
          concurrent: run.concurrent,
          parts: run.toolCallIds
            .map((id) => toolParts.get(id))
            .filter((found): found is ToolPart => found !== undefined),
        }))
        .filter((run) => run.parts.length > 0);
      items.push({ kind: "batch", key: planned.key, turn: planned.batch.turn, runs });
    }
  });
  flush();
  return { calls, items };
}
