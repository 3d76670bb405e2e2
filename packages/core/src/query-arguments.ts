// The checks of the arguments of agent.query(), resume() and step(), made before anything runs.
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { StepOptions } from "./agent.js";
import { contentBlocksProblem } from "./content-blocks-problem.js";
import { assertMailbox } from "./mailbox.js";
import { checkStepLease } from "./step-lease.js";

/** The keys `QueryOptions` may have (checked strictly, T31). Internal. */
export const QUERY_OPTION_KEYS: ReadonlySet<string> = new Set([
  "signal",
  "messages",
  "sessionId",
  "context",
  "outputSchema",
]);

/** The keys `ResumeOptions` may have. Internal. */
export const RESUME_OPTION_KEYS: ReadonlySet<string> = new Set([
  "signal",
  "context",
  "decisions",
  "outputSchema",
]);

/** The keys `StepOptions` may have. Internal. */
export const STEP_OPTION_KEYS: ReadonlySet<string> = new Set([
  "prompt",
  "runId",
  "expectedStep",
  "decisions",
  "signal",
  "context",
  "onMessage",
  "onStepStart",
  "mailbox",
  "takeMail",
  "chain",
  "lease",
  "outputSchema",
]);

/** Checks `StepOptions.runId`, `expectedStep`, `mailbox`, `lease`, `chain` and the listeners. Internal. */
export function checkStepFields(options: StepOptions<unknown>): void {
  if (options.runId !== undefined && (typeof options.runId !== "string" || options.runId === "")) {
    throw new InvalidOptionError(
      "StepOptions:",
      "runId",
      `must be a non-empty string, received ${describeValue(options.runId)}.`,
    );
  }
  const expected = options.expectedStep;
  if (expected !== undefined && !(Number.isSafeInteger(expected) && expected >= 0)) {
    throw new InvalidOptionError(
      "StepOptions:",
      "expectedStep",
      `must be a step number (an integer >= 0, the nextStep of the step before), received ${describeValue(expected)}.`,
    );
  }
  if (options.mailbox !== undefined) assertMailbox(options.mailbox, "StepOptions:");
  checkStepLease("StepOptions:", options.lease);
  const chain = options.chain;
  if (
    chain !== undefined &&
    (!Array.isArray(chain) ||
      chain.length === 0 ||
      !chain.every((name) => typeof name === "string" && name !== ""))
  ) {
    throw new InvalidOptionError(
      "StepOptions:",
      "chain",
      `must be a non-empty array of agent names (the mail's chain), received ${describeValue(chain)}.`,
    );
  }
  for (const key of ["onMessage", "onStepStart", "takeMail"] as const) {
    if (options[key] !== undefined && typeof options[key] !== "function") {
      throw new InvalidOptionError(
        "StepOptions:",
        key,
        `must be a function, received ${describeValue(options[key])}.`,
      );
    }
  }
}

/** Checks an options object's `signal`: absent, or an `AbortSignal`. Internal. */
export function checkSignal(prefix: string, signal: unknown): void {
  if (signal !== undefined && !(signal instanceof AbortSignal)) {
    throw new InvalidOptionError(
      prefix,
      "signal",
      `must be an AbortSignal, received ${describeValue(signal)}.`,
    );
  }
}

/**
 * Checks a prompt: a non-empty string, or a non-empty array of the blocks a prompt may hold
 * (text, images and opaque blocks, with the fields the providers read: the same check as a
 * stored prompt's, H24), so that a session never stores a prompt its log would refuse.
 * Internal.
 */
export function validatePrompt(prompt: unknown, prefix = "query():"): void {
  if (typeof prompt === "string") {
    if (prompt === "") {
      throw new InvalidOptionError(
        prefix,
        "prompt",
        "is empty. Pass the task for the agent as a non-empty string.",
      );
    }
    return;
  }
  if (!Array.isArray(prompt) || prompt.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "prompt",
      `must be a non-empty string or a non-empty array of content blocks, received ${describeValue(prompt)}.`,
    );
  }
  const problem = contentBlocksProblem(prompt, "prompt");
  if (problem !== undefined) {
    throw new InvalidOptionError(
      prefix,
      "prompt",
      `holds ${problem}. A prompt holds text blocks ({ type: "text", text }) and image blocks ({ type: "image", source }), and opaque blocks for one API ({ type: "opaque", provider, block }).`,
    );
  }
}
