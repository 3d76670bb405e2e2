import { RUN_LOG_VERSION, type RunLogEntry, type SessionEntry } from "@lattice/core";
import type { ContentBlock, ModelMessage } from "@lattice/providers";
import type { UIMessage } from "ai";
import type { LatticeMessageMetadata, LatticeUIMessage } from "./lattice-ui-message.js";
import { resultText, toolOutputOf } from "./ui-chunk-mapper.js";

type Part = LatticeUIMessage["parts"][number];
type MutableToolPart = {
  type: string;
  toolCallId: string;
  state: string;
  input: unknown;
  output?: unknown;
  errorText?: string;
  approval?: { id: string; approved?: boolean; reason?: string };
};

/**
 * A stored session's conversation as `useChat` messages (W7: a page that reloads shows the
 * whole chat): each prompt a user message, each run one assistant message whose id is its
 * `runId` — the message the run's UI stream built — with a step per model call, its text,
 * reasoning and tool parts in the state the log leaves them (results, errors, denials, calls
 * waiting for approval with their approval ids), and the run's `subtype` and `usage` as
 * metadata. What the log does not keep is not shown: the `data-lattice-*` parts (timings live
 * in the trace) and a run's wall time. Compactions change what the model sees, not the chat:
 * every message stays.
 *
 * @param entries - The session's entries, as `store.load(sessionId)` gives them.
 * @param sessionId - The session, for the messages' metadata.
 * @returns The messages; none for an empty session. Entries of a newer log version are skipped.
 */
export function uiMessagesOfSession(
  entries: readonly SessionEntry[],
  sessionId: string,
): LatticeUIMessage[] {
  const messages: LatticeUIMessage[] = [];
  let assistant: { parts: Part[]; metadata: LatticeMessageMetadata; id: string } | undefined;
  const calls = new Map<string, MutableToolPart>();
  /** The tool_use id of each approval id of the run's latest interrupt. */
  const approvals = new Map<string, string>();
  const assistantOf = (runId: string) => {
    if (assistant === undefined || assistant.id !== runId) {
      assistant = { id: runId, parts: [], metadata: { sessionId, runId } };
      messages.push({
        id: runId,
        role: "assistant",
        metadata: assistant.metadata,
        parts: assistant.parts,
      });
    }
    return assistant;
  };
  for (const stored of entries) {
    const entry = stored as unknown as RunLogEntry;
    if (typeof entry.v !== "number" || entry.v > RUN_LOG_VERSION) continue;
    switch (entry.type) {
      case "run_started": {
        assistant = undefined;
        messages.push(...(toUIMessages(entry.history ?? []) as LatticeUIMessage[]));
        messages.push(userMessage(entry.message, `${entry.runId}-prompt`));
        break;
      }
      case "reply": {
        const target = assistantOf(entry.runId);
        target.parts.push({ type: "step-start" });
        for (const part of assistantParts(entry.message.content)) {
          target.parts.push(part);
          if ("toolCallId" in part) calls.set(part.toolCallId, part as unknown as MutableToolPart);
        }
        break;
      }
      case "interrupt":
        for (const pending of entry.approvals) {
          approvals.set(pending.approvalId, pending.toolUseId);
          const call = calls.get(pending.toolUseId);
          if (call === undefined) continue;
          call.state = "approval-requested";
          call.approval = { id: pending.approvalId };
        }
        break;
      case "decisions":
        for (const [approvalId, decision] of Object.entries(entry.decisions)) {
          const call = calls.get(approvals.get(approvalId) ?? "");
          if (call === undefined) continue;
          call.state = "approval-responded";
          call.approval = {
            id: approvalId,
            approved: decision.approved,
            ...(!decision.approved && decision.reason !== undefined
              ? { reason: decision.reason }
              : {}),
          };
        }
        break;
      case "tool_result": {
        const call = calls.get(entry.toolUseId);
        if (call === undefined) break;
        settle(call, entry.block, call.approval?.approved === false);
        break;
      }
      case "run_finished": {
        // A run that ended before its first reply (stopped, failed) still has its message,
        // as its stream gave it one: empty, with how it ended.
        assistantOf(entry.runId);
        if (assistant !== undefined && assistant.id === entry.runId) {
          assistant.metadata = {
            ...assistant.metadata,
            subtype: entry.subtype,
            usage: entry.usage,
            ...(entry.errors.length > 0 ? { errors: entry.errors } : {}),
          };
          (
            messages.find((message) => message.id === entry.runId) as { metadata?: unknown }
          ).metadata = assistant.metadata;
        }
        break;
      }
      default:
        break;
    }
  }
  return messages;
}

/**
 * A Lattice conversation (`result.messages`, a caller's history) as `useChat` messages: user
 * messages with text and image parts; assistant messages, with the tool results of the user
 * message after them folded into their tool parts. Consecutive assistant messages of one run
 * (a tool loop) become one assistant message with a step each, as a run's stream shows them.
 * The inverse of {@link fromUIMessages} on conversations it made.
 *
 * @param conversation - The messages, plain `{ role, content }`.
 * @param idPrefix - The messages' ids are `${idPrefix}${index}`. Default `"m"`.
 */
export function toUIMessages(conversation: readonly ModelMessage[], idPrefix = "m"): UIMessage[] {
  const messages: LatticeUIMessage[] = [];
  const calls = new Map<string, MutableToolPart>();
  let assistant: LatticeUIMessage | undefined;
  conversation.forEach((message, index) => {
    const blocks: readonly ContentBlock[] =
      typeof message.content === "string"
        ? [{ type: "text", text: message.content }]
        : message.content;
    if (message.role === "assistant") {
      if (assistant === undefined) {
        assistant = { id: `${idPrefix}${index}`, role: "assistant", parts: [] };
        messages.push(assistant);
      }
      assistant.parts.push({ type: "step-start" });
      for (const part of assistantParts(blocks)) {
        assistant.parts.push(part);
        if ("toolCallId" in part) calls.set(part.toolCallId, part as unknown as MutableToolPart);
      }
      return;
    }
    const rest: ContentBlock[] = [];
    for (const block of blocks) {
      const call = block.type === "tool_result" ? calls.get(block.tool_use_id) : undefined;
      if (block.type === "tool_result" && call !== undefined) settle(call, block, false);
      else rest.push(block);
    }
    if (rest.length === 0) return;
    assistant = undefined;
    messages.push(userMessage({ role: "user", content: rest }, `${idPrefix}${index}`));
  });
  return messages;
}

function userMessage(message: ModelMessage, id: string): LatticeUIMessage {
  const blocks: readonly ContentBlock[] =
    typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content;
  const parts: Part[] = [];
  for (const block of blocks) {
    if (block.type === "text") parts.push({ type: "text", text: block.text });
    else if (block.type === "image") {
      parts.push(
        block.source.type === "base64"
          ? {
              type: "file",
              mediaType: block.source.media_type,
              url: `data:${block.source.media_type};base64,${block.source.data}`,
            }
          : { type: "file", mediaType: "image/*", url: block.source.url },
      );
    } else if (block.type === "tool_result") {
      parts.push({ type: "text", text: resultText(block) });
    }
  }
  return { id, role: "user", parts };
}

function assistantParts(content: readonly ContentBlock[]): Part[] {
  const parts: Part[] = [];
  for (const block of content) {
    if (block.type === "text") parts.push({ type: "text", text: block.text, state: "done" });
    else if (block.type === "thinking") {
      parts.push({
        type: "reasoning",
        text: block.thinking,
        state: "done",
        ...(block.signature !== ""
          ? { providerMetadata: { lattice: { signature: block.signature } } }
          : {}),
      });
    } else if (block.type === "tool_use") {
      parts.push({
        type: `tool-${block.name}`,
        toolCallId: block.id,
        state: "input-available",
        input: block.input,
      } as Part);
    }
  }
  return parts;
}

function settle(
  call: MutableToolPart,
  block: Extract<ContentBlock, { type: "tool_result" }>,
  denied: boolean,
): void {
  // An approval asked for and never answered (the run was ended instead) is no approval: the
  // protocol's parts with a result carry only a decided one.
  if (call.approval !== undefined && call.approval.approved === undefined) delete call.approval;
  if (denied) call.state = "output-denied";
  else if (block.is_error === true) {
    call.state = "output-error";
    call.errorText = resultText(block);
  } else {
    call.state = "output-available";
    call.output = toolOutputOf(block);
  }
}
