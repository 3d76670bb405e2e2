import type { ContentBlock, ModelMessage } from "@lattice/providers";
import type { LoggedDecision } from "./run-log-entry.js";
import type { RunOutput } from "./run-output.js";
import type { SessionStore } from "./session-store.js";
import type { StepLease } from "./step-lease.js";

/** What a run starts from, and its own typed output (`outputSchema` of the query). Internal. */
export type RunStart = RunStartKind & { readonly output?: RunOutput | undefined };

/** The ways a run starts. Internal. */
export type RunStartKind =
  | {
      /** A new run on a prompt: one-off (with an optional caller-kept history) or on a session. */
      readonly kind: "prompt";
      readonly prompt: string | readonly ContentBlock[];
      /** A checked conversation to continue (R4): sent before the prompt. */
      readonly history?: readonly ModelMessage[] | undefined;
      /** The stored conversation to continue and append to (R6). */
      readonly session?: { readonly store: SessionStore; readonly sessionId: string } | undefined;
    }
  | {
      /** The unfinished run of a stored session, taken up again (R18). */
      readonly kind: "resume";
      readonly store: SessionStore;
      readonly sessionId: string;
      /** Decisions on the pending approvals of an interrupted run, by approval id (R15). */
      readonly decisions?: { readonly [approvalId: string]: LoggedDecision } | undefined;
    }
  | {
      /**
       * One step of a stored session's run (`agent.step()`): a new run's first step on
       * `prompt`, or the next step of the latest run; the run returns a {@link StepYield}
       * before its second step.
       */
      readonly kind: "step";
      readonly store: SessionStore;
      readonly sessionId: string;
      /** Starts a new run on this prompt, unless the latest run already has `runId`. */
      readonly prompt?: string | readonly ContentBlock[] | undefined;
      /** The new run's id, or the id the latest run must have. */
      readonly runId?: string | undefined;
      /** Take the step only when the log is at this step; otherwise yield it as stale. */
      readonly expectedStep?: number | undefined;
      /** Decisions on the pending approvals of an interrupted run, by approval id (R15). */
      readonly decisions?: { readonly [approvalId: string]: LoggedDecision } | undefined;
      /** Called as the step starts, once any decisions are stored. */
      readonly onStepStart?: ((step: number) => void) | undefined;
      /**
       * The lease the step runs under (H28), and the controller that stops the step (its
       * signal is part of the run's) once the lease no longer holds.
       */
      readonly fencing?: { readonly lease: StepLease; readonly stop: AbortController } | undefined;
    };

/**
 * How a run taken one step at a time stops before its next step: everything the step appended
 * is stored. `stale` when the log was not at the expected step, so nothing ran. Internal.
 */
export interface StepYield {
  readonly type: "step_yield";
  readonly sessionId: string;
  readonly runId: string;
  /** The step taken, or `undefined` when stale. */
  readonly step: number | undefined;
  /** The step the log is at now. */
  readonly nextStep: number;
  readonly stale: boolean;
}
