import type { LatticeToolCallData } from "@lattice/web";
import { getToolName } from "ai";
import type { ToolPart } from "./tool-batches.js";

/** Options of {@link ToolCard}. */
export interface ToolCardProps {
  readonly part: ToolPart;
  /** The scheduler's view of the call (`data-lattice-tool-call`), when the stream sent it. */
  readonly call: LatticeToolCallData | undefined;
  /** The run was stopped: a call that has no result did not finish. */
  readonly stopped: boolean;
  /** Whether a call waiting for approval can be answered now. */
  readonly canAnswer: boolean;
  /** Answers a call that waits for approval. */
  readonly onApproval: (approvalId: string, approved: boolean) => void;
}

/** One tool call: its name, input, status, timing, result, and approve / deny buttons. */
export function ToolCard({ part, call, stopped, canAnswer, onApproval }: ToolCardProps) {
  const name = getToolName(part);
  const status = statusOf(part, call, stopped);
  const titleId = `tool-${part.toolCallId}`;
  const timing = timingOf(call);
  return (
    <article
      className={`tool-card status-${status.replace(/\s+/g, "-")}`}
      aria-labelledby={titleId}
      data-tool-call-id={part.toolCallId}
      data-status={status}
      data-state={part.state}
    >
      <header>
        <h3 id={titleId}>
          {name} <span className="input">{inputText(part.input)}</span>
        </h3>
        <span className="badge">{status}</span>
      </header>
      {timing !== "" && <p className="timing">{timing}</p>}
      {part.state === "output-available" && <pre className="output">{outputText(part.output)}</pre>}
      {part.state === "output-error" && <pre className="output error">{part.errorText}</pre>}
      {part.state === "approval-requested" && canAnswer && (
        <div className="approval">
          <span>Needs your approval.</span>
          <button type="button" onClick={() => onApproval(part.approval.id, true)}>
            Approve
          </button>
          <button
            type="button"
            className="deny"
            onClick={() => onApproval(part.approval.id, false)}
          >
            Deny
          </button>
        </div>
      )}
    </article>
  );
}

const UNFINISHED = new Set(["queued", "running"]);

/** The card's status: the scheduler's when the call ended, else the part's state. */
export function statusOf(
  part: ToolPart,
  call: LatticeToolCallData | undefined,
  stopped: boolean,
): string {
  switch (part.state) {
    case "approval-requested":
      return "needs approval";
    case "approval-responded":
      return part.approval.approved ? "approved" : "denied";
    case "output-denied":
      return "denied";
  }
  if (call !== undefined && !UNFINISHED.has(call.status)) return call.status.replace(/_/g, " ");
  if (part.state === "output-available") return "completed";
  if (part.state === "output-error") return "failed";
  if (stopped) return "stopped";
  if (call !== undefined) return call.status;
  return part.state === "input-streaming" ? "preparing" : "running";
}

function timingOf(call: LatticeToolCallData | undefined): string {
  if (call === undefined) return "";
  const parts: string[] = [];
  if (call.waitMs !== undefined) parts.push(`waited ${formatMs(call.waitMs)}`);
  if (call.durationMs !== undefined) parts.push(`ran ${formatMs(call.durationMs)}`);
  return parts.join(" · ");
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

/** The call's input in a few words: its values, shortened. */
function inputText(input: unknown): string {
  if (input === undefined) return "";
  const text =
    input !== null && typeof input === "object" && !Array.isArray(input)
      ? Object.values(input as Record<string, unknown>)
          .map((value) => (typeof value === "string" ? value : JSON.stringify(value)))
          .join(" · ")
      : JSON.stringify(input);
  return text.length > 48 ? `${text.slice(0, 47)}…` : text;
}

function outputText(output: unknown): string {
  if (typeof output === "string") return output;
  // Lattice sends a tool's result as its content blocks.
  if (Array.isArray(output) && output.every((block) => typeof block?.text === "string")) {
    return output.map((block: { text: string }) => block.text).join("\n");
  }
  if (output !== null && typeof output === "object" && "content" in output) {
    const content = (output as { content: unknown }).content;
    if (typeof content === "string") return content;
  }
  return JSON.stringify(output, null, 2);
}
