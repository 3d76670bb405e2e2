import type { LatticeUIMessage } from "@lattice/web";
import { planMessage } from "./tool-batches.js";
import { ToolCard } from "./tool-card.js";

/** Options of {@link AssistantMessage}. */
export interface AssistantMessageProps {
  readonly message: LatticeUIMessage;
  /** The message is still streaming in. */
  readonly streaming: boolean;
  /** The person stopped this run. */
  readonly stopped: boolean;
  /** Whether its calls waiting for approval can be answered now (the newest message, no request running). */
  readonly canAnswer: boolean;
  /** Answers a call that waits for approval. */
  readonly onApproval: (approvalId: string, approved: boolean) => void;
}

/**
 * One run's reply: its text, its tool calls grouped by batch (the calls of one concurrent
 * run side by side), how it ended, and a link to its tool timeline.
 */
export function AssistantMessage({
  message,
  streaming,
  stopped,
  canAnswer,
  onApproval,
}: AssistantMessageProps) {
  const { calls, items } = planMessage(message);
  const metadata = message.metadata;
  const runId = metadata?.runId ?? message.id;
  return (
    <article className="message assistant" aria-label="Assistant" data-run-id={runId}>
      {items.map((item) => {
        if (item.kind === "text") {
          return (
            <p key={item.key} className="text">
              {item.text}
            </p>
          );
        }
        if (item.kind === "reasoning") {
          return (
            <p key={item.key} className="reasoning">
              {item.text}
            </p>
          );
        }
        const count = item.runs.reduce((total, run) => total + run.parts.length, 0);
        return (
          <section key={item.key} className="batch" aria-label={batchLabel(item.turn, count)}>
            {item.runs.map((run) => (
              <div
                key={run.parts[0]!.toolCallId}
                className="batch-run"
                data-concurrent={run.concurrent === undefined ? "unknown" : String(run.concurrent)}
              >
                {run.concurrent === true && run.parts.length > 1 && (
                  <span className="run-label">side by side</span>
                )}
                {run.parts.map((part) => (
                  <ToolCard
                    key={part.toolCallId}
                    part={part}
                    call={calls.get(part.toolCallId)}
                    stopped={stopped}
                    canAnswer={canAnswer}
                    onApproval={onApproval}
                  />
                ))}
              </div>
            ))}
          </section>
        );
      })}
      {streaming && items.length === 0 && <p className="note">Thinking…</p>}
      {stopped && (
        <p className="stopped" role="note">
          Stopped: you stopped this run before it finished.
        </p>
      )}
      <footer className="meta">
        {summaryOf(metadata)}
        <a
          href={`/api/runs/${encodeURIComponent(runId)}/timeline`}
          target="_blank"
          rel="noreferrer"
        >
          Timeline
        </a>
      </footer>
    </article>
  );
}

function batchLabel(turn: number | undefined, count: number): string {
  const calls = `${count} tool ${count === 1 ? "call" : "calls"}`;
  return turn === undefined ? calls : `Batch of turn ${turn}: ${calls}`;
}

function summaryOf(metadata: LatticeUIMessage["metadata"]): string {
  if (metadata === undefined) return "";
  const parts: string[] = [];
  if (metadata.subtype === "interrupted") parts.push("waiting for your approval");
  else if (metadata.subtype !== undefined) parts.push(metadata.subtype.replace(/_/g, " "));
  if (metadata.durationMs !== undefined) parts.push(`${(metadata.durationMs / 1000).toFixed(1)} s`);
  if (metadata.usage !== undefined) {
    parts.push(`${metadata.usage.inputTokens} in / ${metadata.usage.outputTokens} out tokens`);
  }
  return parts.length === 0 ? "" : `${parts.join(" · ")} · `;
}
