import { describe, expect, it } from "vitest";
import { CallTracker, callKey } from "./call-tracker.js";
import { checkExecutions } from "./check-executions.js";

/** A tracker fed the reports of a run whose worker-1 died with two calls behind it. */
function trackerOf(): CallTracker {
  const tracker = new CallTracker();
  const call = (worker: string, toolName: string, phase: "start" | "end") =>
    tracker.record({
      kind: "call",
      worker,
      phase,
      toolName,
      toolUseId: `id_${toolName}`,
      runId: "r1",
      sessionId: "ticket-1",
    });
  // Cut: the handler never reached its end.
  call("worker-1", "read_ticket", "start");
  // Ended, but worker-1 died before the result reached the run log.
  call("worker-1", "lookup_customer", "start");
  call("worker-1", "lookup_customer", "end");
  // Ran once, logged before the death.
  call("worker-1", "check_service", "start");
  call("worker-1", "check_service", "end");
  for (const toolName of ["read_ticket", "lookup_customer"]) {
    call("worker-2", toolName, "start");
    call("worker-2", toolName, "end");
  }
  return tracker;
}

describe("what start prints about calls that ran again", () => {
  it("D5: each call that ran again says why: cut by the death, or ended but not yet logged when the worker died", () => {
    const logged = new Set([callKey("r1", "id_check_service")]);
    const { ok, lines } = checkExecutions(
      trackerOf(),
      [{ worker: "worker-1", logged }],
      new Set(["ticket-1"]),
    );
    expect(ok).toBe(true);
    expect(lines).toEqual([
      "Tool calls: 3 in all; 1 ran once, 2 ran again because the worker running them died before their result was logged (at-least-once):",
      "  read_ticket of ticket-1: on worker-1 (cut), then worker-2",
      "  lookup_customer of ticket-1: on worker-1 (ended, result not logged before it died), then worker-2",
      "When worker-1 died, 1 calls had their result in the run log: none of them ran again.",
    ]);
  });
});
