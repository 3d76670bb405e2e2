import type { RunUsage, SDKResultSubtype } from "@lattice/core";
import type { ToolCallStatus } from "@lattice/scheduler";
import type { UIMessage, UIMessageChunk } from "ai";

/**
 * What the assistant message of a Lattice run carries as `metadata`: the session and run it
 * belongs to from the `start` chunk, and how the run ended from the `finish` chunk.
 */
export interface LatticeMessageMetadata {
  /** The conversation (R7): the chat's session, or a one-off run's fresh id. */
  readonly sessionId: string;
  /** The run; also the assistant message's id. */
  readonly runId: string;
  /** How the run ended (`"interrupted"` while calls wait for approval); set by `finish`. */
  readonly subtype?: SDKResultSubtype;
  /** The run's tokens (and cost, when priced); set by `finish`. */
  readonly usage?: RunUsage;
  /** Wall time of the run in milliseconds; set by `finish`. */
  readonly durationMs?: number;
  /** What went wrong, when the run failed; set by `finish`. */
  readonly errors?: readonly string[];
}

/** The plan of one batch of tool calls (`data-lattice-batch`): which calls run side by side. */
export interface LatticeBatchData {
  /** The run the batch belongs to. */
  readonly runId: string;
  /** The turn whose assistant message holds the batch. */
  readonly turn: number;
  /** The concurrency mode the plan was made for. */
  readonly mode: "safe" | "all" | "sequential";
  /**
   * The plan's runs in order, each finished before the next starts; the calls of a run with
   * `concurrent: true` may overlap. Empty when nothing was scheduled (a refused batch).
   */
  readonly runs: readonly {
    readonly concurrent: boolean;
    readonly toolCallIds: readonly string[];
  }[];
}

/** One tool call as the scheduler saw it (`data-lattice-tool-call`, updated in place by id). */
export interface LatticeToolCallData {
  /** The call (the tool part's `toolCallId`). */
  readonly toolCallId: string;
  /** The tool called. */
  readonly toolName: string;
  /** The turn whose batch holds the call. */
  readonly turn: number;
  /** `"queued"`, `"running"`, then how the call ended. */
  readonly status: "queued" | "running" | ToolCallStatus;
  /** The index of the plan run the call ran in, once started. */
  readonly runIndex?: number;
  /** Milliseconds the call waited in the batch before its handler started. */
  readonly waitMs?: number;
  /** Milliseconds its handler ran, once finished (0 when none ran). */
  readonly durationMs?: number;
}

/** The batch policy refused a batch (`data-lattice-refusal`): none of its calls ran (T23). */
export interface LatticeRefusalData {
  /** The turn whose batch was refused. */
  readonly turn: number;
  /** The policy's machine-readable reason, or `"policy_error"` when the policy failed. */
  readonly code: string;
  /** What the policy said (shown to the model too). */
  readonly message: string;
  /** The calls the refusal names; every call of the batch when it names none. */
  readonly toolCallIds: readonly string[];
}

/** The `data-lattice-*` parts a Lattice stream may carry; a UI may ignore them. */
export type LatticeDataParts = {
  "lattice-batch": LatticeBatchData;
  "lattice-tool-call": LatticeToolCallData;
  "lattice-refusal": LatticeRefusalData;
};

/** A `UIMessage` of a Lattice chat, as `useChat<LatticeUIMessage>()` holds it. */
export type LatticeUIMessage = UIMessage<LatticeMessageMetadata, LatticeDataParts>;

/** A chunk of the UI message stream that Lattice writes. */
export type LatticeUIMessageChunk = UIMessageChunk<LatticeMessageMetadata, LatticeDataParts>;
