import type { ToolBatchPendingApproval } from "@lattice/scheduler";
import { toJson } from "./error-message.js";
import { finishRun } from "./finish-run.js";
import { storeFailure } from "./load-session.js";
import { randomToken } from "./random-id.js";
import type { RunEnv } from "./run-env.js";
import { ENTRY_V1, type PendingApproval } from "./run-log-entry.js";
import { appendEntry } from "./run-log-sink.js";
import type { SDKResultMessage } from "./sdk-message.js";
import { SessionConflictError, type SessionEntry } from "./session-store.js";
import { SessionWriter } from "./session-writer.js";

/**
 * The interrupt: pauses the run for approvals (R14). Each call gets an unguessable approval
 * id; the `interrupt` entry is stored (a run without a session moves its log into the agent's
 * store first, so that `resume()` finds it), then the `interrupted` result is given. An agent
 * tool's child run has no store and cannot pause: it ends with an error saying so.
 *
 * @returns The result message (also emitted).
 */
export async function interruptRun(
  env: RunEnv,
  calls: readonly ToolBatchPendingApproval[],
): Promise<SDKResultMessage> {
  const approvals: PendingApproval[] = calls.map((call) => ({
    approvalId: `appr_${randomToken(18)}`,
    toolUseId: call.id,
    toolName: call.name,
    kind: call.kind,
    input: toJson(call.input),
  }));
  let writer = env.writer;
  if (writer === undefined) {
    const store = env.placement.store;
    if (store === undefined) {
      return finishRun(env, {
        type: "finish",
        subtype: "error_during_execution",
        result: "",
        errors: [
          `Tool call(s) ${calls.map((call) => `"${call.name}" (${call.id})`).join(", ")} need approval, but this run cannot pause: it is an agent tool's run inside another run. Mark the agent tool itself with needsApproval, or decide in beforeToolCall.`,
        ],
      });
    }
    // A run without a session keeps its log in the agent's store from now on, under its
    // sessionId, so that resume() finds it.
    writer = new SessionWriter(store, env.sessionId, 0);
    for (const entry of env.written) writer.push(entry as unknown as SessionEntry);
    env.written.length = 0;
    env.writer = writer;
  }
  appendEntry(env, { v: ENTRY_V1, type: "interrupt", runId: env.runId, approvals });
  env.trace?.({
    type: "approval_requested",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    approvals,
  });
  const failure = await writer.flush();
  if (failure !== undefined) {
    if (env.stepping !== undefined) throw storeFailure(failure, writer, "store the interrupt");
    if (failure instanceof SessionConflictError) throw storeFailure(failure, writer, "pause");
    return finishRun(env, {
      type: "finish",
      subtype: "error_during_execution",
      result: "",
      errors: [storeFailure(failure, writer, "store the interrupt").message],
    });
  }
  return finishRun(env, { type: "interrupted" });
}
