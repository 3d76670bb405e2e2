import type { Prompt } from "./agent.js";
import type { RunEnv } from "./run-env.js";
import { type GuardrailOutcome, type RunGuardrails, runGuardrail } from "./run-guardrails.js";
import { ENTRY_V2 } from "./run-log-entry.js";
import { appendEntry } from "./run-log-sink.js";

/** Input guardrails running beside a run's first model call (L7). Internal. */
export interface InputGuarding {
  /** Aborts once a guardrail tripped: the model call stops with it. */
  readonly tripped: AbortSignal;
  /**
   * The outcomes, in the order the guardrails are listed, once every guardrail settled or one
   * tripped (those still running then are stopped and left out: the run ends with the trip).
   */
  readonly settled: Promise<readonly GuardrailOutcome[]>;
}

/**
 * Starts the input guardrails whose outcome the log does not hold yet (a resumed first call
 * runs only the others, L12), concurrently with the call: a passing guardrail adds no latency
 * beyond its own duration. Internal.
 */
export function startInputGuardrails(
  env: RunEnv,
  guardrails: RunGuardrails,
): InputGuarding | undefined {
  const logged = new Set(
    (env.run.guardrails ?? []).filter((entry) => entry.kind === "input").map((entry) => entry.name),
  );
  const pending = guardrails.input.filter((guardrail) => !logged.has(guardrail.name));
  if (pending.length === 0) return undefined;
  const controller = new AbortController();
  const stop = (): void => controller.abort();
  env.signal.addEventListener("abort", stop, { once: true });
  const messages = env.state.messages;
  const prompt = messages[messages.length - 1]!.content as Prompt;
  const outcomes: (GuardrailOutcome | undefined)[] = pending.map(() => undefined);
  let trippedFirst = false;
  const settled = new Promise<readonly GuardrailOutcome[]>((resolve) => {
    let left = pending.length;
    const done = (): void => {
      env.signal.removeEventListener("abort", stop);
      resolve(outcomes.filter((outcome) => outcome !== undefined));
    };
    pending.forEach((guardrail, index) => {
      void runGuardrail(
        guardrail,
        { prompt, messages, context: env.placement.context, signal: controller.signal },
        false,
      ).then((outcome) => {
        if (trippedFirst) return;
        outcomes[index] = outcome;
        if (outcome.tripwire) {
          trippedFirst = true;
          controller.abort();
          done();
          return;
        }
        if (--left === 0) done();
      });
    });
  });
  return { tripped: controller.signal, settled };
}

/** Appends a guardrail's outcome as its `guardrail` entry, and traces it (L9). Internal. */
export function appendGuardrail(
  env: RunEnv,
  kind: "input" | "output",
  turn: number,
  outcome: GuardrailOutcome,
): void {
  appendEntry(env, {
    v: ENTRY_V2,
    type: "guardrail",
    runId: env.runId,
    kind,
    turn,
    ...outcome,
  });
  env.trace?.({
    type: "guardrail",
    time: performance.now(),
    sessionId: env.sessionId,
    runId: env.runId,
    kind,
    name: outcome.name,
    turn,
    tripwire: outcome.tripwire,
    reason: outcome.reason,
    ...(outcome.retry !== undefined ? { retry: true as const } : {}),
    durationMs: outcome.durationMs,
  });
}
