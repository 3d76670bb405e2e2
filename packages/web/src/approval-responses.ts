import type { ApprovalDecision } from "@lattice/scheduler";
import type { UIMessage } from "ai";

/** The answers a page gave to calls waiting for approval (W3), ready for `agent.resume()`. */
export interface ApprovalResponses {
  /** One decision per approval id: pass as `resume(sessionId, { decisions })`. */
  readonly decisions: { readonly [approvalId: string]: ApprovalDecision };
  /** The calls a person denied: give them to {@link toUIMessageStream} (`approvals`). */
  readonly deniedToolCallIds: readonly string[];
}

/**
 * Reads the approval answers of a `useChat` history (W3): the tool parts of its last message,
 * when that is an assistant message, in state `"approval-responded"` (what
 * `addToolApprovalResponse` makes). `undefined` when there are none: the request is a new
 * message, not an answer.
 *
 * @param messages - The `messages` a `useChat` request sends.
 */
export function approvalResponses(messages: readonly UIMessage[]): ApprovalResponses | undefined {
  const last = messages.at(-1);
  if (last === null || typeof last !== "object" || last.role !== "assistant") return undefined;
  if (!Array.isArray(last.parts)) return undefined;
  // Entries, then an object made from them: an approval id such as "__proto__" stays a key.
  const decisions: [string, ApprovalDecision][] = [];
  const denied: string[] = [];
  let found = false;
  for (const part of last.parts) {
    if (!isToolPart(part) || part.state !== "approval-responded") continue;
    const approval = part.approval as { id?: unknown; approved?: unknown; reason?: unknown };
    if (typeof approval?.id !== "string" || typeof approval.approved !== "boolean") continue;
    found = true;
    if (approval.approved) decisions.push([approval.id, { approved: true }]);
    else {
      decisions.push([
        approval.id,
        typeof approval.reason === "string" && approval.reason !== ""
          ? { approved: false, reason: approval.reason }
          : { approved: false },
      ]);
      denied.push(part.toolCallId);
    }
  }
  return found
    ? { decisions: Object.fromEntries(decisions), deniedToolCallIds: denied }
    : undefined;
}

/** A tool part of a `UIMessage`: `tool-<name>` or `dynamic-tool`. */
export interface ToolPartLike {
  readonly type: string;
  readonly toolCallId: string;
  readonly toolName?: string;
  readonly state: string;
  readonly input?: unknown;
  readonly output?: unknown;
  readonly errorText?: string;
  readonly approval?: unknown;
}

/** Whether a part is a tool part (`tool-<name>` or `dynamic-tool`). */
export function isToolPart(part: { readonly type: string }): part is ToolPartLike {
  return (
    part !== null &&
    typeof part === "object" &&
    typeof part.type === "string" &&
    (part.type.startsWith("tool-") || part.type === "dynamic-tool") &&
    typeof (part as { toolCallId?: unknown }).toolCallId === "string"
  );
}

/** The tool a tool part calls. */
export function toolNameOf(part: ToolPartLike): string {
  return part.type === "dynamic-tool" ? String(part.toolName) : part.type.slice("tool-".length);
}
