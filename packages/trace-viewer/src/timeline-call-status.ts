import type { TraceEvent } from "@lattice/core";

/** How a tool call ended, as the scheduler reports it (`tool_call_finished.status`). */
export type TimelineCallStatus = Extract<TraceEvent, { type: "tool_call_finished" }>["status"];

/**
 * Whether a call that ended so ran its handler. Keyed by every status, once: the compiler
 * refuses a key missing from, or not in, `@lattice/core`'s statuses, so the lists made from
 * it cannot drift apart.
 */
const HANDLER_RAN: Readonly<Record<TimelineCallStatus, boolean>> = {
  completed: true,
  failed: true,
  invalid_input: false,
  unknown_tool: false,
  denied: false,
  refused: false,
  policy_error: false,
  cancelled: false,
  abandoned: true,
  timed_out: true,
};

/** Every way a tool call can end: what `tool_call_finished.status` is checked against. */
export const TIMELINE_CALL_STATUSES = Object.keys(HANDLER_RAN) as readonly TimelineCallStatus[];

/** The statuses of a call whose handler never ran: refused, denied, or stopped before it started. */
export const NO_HANDLER_STATUSES: ReadonlySet<TimelineCallStatus> = new Set(
  TIMELINE_CALL_STATUSES.filter((status) => !HANDLER_RAN[status]),
);
