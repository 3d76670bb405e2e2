import type { Prompt, ResumeOptions, SDKMessage } from "@lattice/core";

/** Decisions on a run's pending approvals, by approval id (R15). */
export type ApprovalDecisions = NonNullable<ResumeOptions["decisions"]>;

/** The BullMQ job name of every Lattice step job. Internal. */
export const STEP_JOB_NAME = "lattice-step";

/** What a step job carries: plain JSON. Internal. */
export interface StepJobData {
  readonly v: 1;
  readonly agentName: string;
  readonly sessionId: string;
  readonly runId: string;
  /** The step to take; absent for a resume with decisions (taken whatever the log is at). */
  readonly step?: number;
  /** The new run's prompt, on its first step. */
  readonly prompt?: Prompt;
  /** Decisions on the run's pending approvals (R15), on a resume. */
  readonly decisions?: ApprovalDecisions;
  /** For a run working on a handoff: the agents that led to it (D8). */
  readonly chain?: readonly string[];
}

/**
 * A record of a run's event stream: a message of the run, or a control record the queue and
 * workers write (`resumed` when `queue.resume()` continues the run, `aborted`, `failed`).
 * Internal.
 */
export type StreamRecord =
  | { readonly kind: "message"; readonly message: SDKMessage }
  | ControlRecord;

/** A record the queue or a worker writes about a run. Internal. */
export interface ControlRecord {
  readonly kind: "resumed" | "aborted" | "failed";
  readonly code?: string;
  readonly message?: string;
}

/** The stream field of a record. Internal. */
export const RECORD_FIELD = "r";

/** A record as a stream field value. Internal. */
export function encodeRecord(record: StreamRecord): string {
  return JSON.stringify(record);
}

/** A stream field value as a record, or `undefined` for a foreign entry. Internal. */
export function decodeRecord(fields: readonly string[]): StreamRecord | undefined {
  for (let index = 0; index + 1 < fields.length; index += 2) {
    if (fields[index] === RECORD_FIELD) return JSON.parse(fields[index + 1]!) as StreamRecord;
  }
  return undefined;
}
