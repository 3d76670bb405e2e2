import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { errorMessage, toJson } from "./error-message.js";
import type { JsonValue } from "./session-store.js";
import type {
  GuardrailRetry,
  Guardrails,
  GuardrailVerdict,
  InputGuardrailArgs,
  OutputGuardrailArgs,
} from "./steering-options.js";

/** A guardrail with its name resolved. Internal. */
export interface NamedGuardrail<Args> {
  readonly name: string;
  readonly check: (args: Args) => unknown;
}

/** The agent's guardrails, named and checked. Internal. */
export interface RunGuardrails {
  readonly input: readonly NamedGuardrail<InputGuardrailArgs>[];
  readonly output: readonly NamedGuardrail<OutputGuardrailArgs>[];
}

/**
 * What a guardrail's run came to, as its `guardrail` log entry keeps it (L9). Internal.
 */
export interface GuardrailOutcome {
  readonly name: string;
  readonly tripwire: boolean;
  readonly reason?: string;
  readonly info?: JsonValue;
  /** An output guardrail's feedback for another attempt. */
  readonly retry?: string;
  /** What the guardrail threw, when it did (it then counts as tripped). */
  readonly error?: string;
  readonly durationMs: number;
}

/**
 * Checks `guardrails` strictly and names each one: a function by its own name (or
 * `input[i]` / `output[i]`), an object by its `name`. Names must be unique per kind: the log
 * finds a guardrail's outcome by it. Internal.
 *
 * @throws `InvalidOptionError` for anything else.
 */
export function checkGuardrails(value: unknown, prefix: string): RunGuardrails | undefined {
  if (value === undefined) return undefined;
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidOptionError(
      prefix,
      "guardrails",
      `must be an object { input?: [...], output?: [...] }, received ${describeValue(value)}.`,
    );
  }
  for (const key of Object.keys(value)) {
    if (key !== "input" && key !== "output") {
      throw new InvalidOptionError(
        prefix,
        "guardrails",
        `has an unknown key ${JSON.stringify(key)}; the keys are input and output. Tool guardrails are the hooks beforeToolCall and onToolResult.`,
      );
    }
  }
  const given = value as Guardrails;
  const input = named(given.input, "input", prefix) as NamedGuardrail<InputGuardrailArgs>[];
  const output = named(given.output, "output", prefix) as NamedGuardrail<OutputGuardrailArgs>[];
  return input.length === 0 && output.length === 0 ? undefined : { input, output };
}

function named(list: unknown, kind: string, prefix: string): NamedGuardrail<never>[] {
  if (list === undefined) return [];
  if (!Array.isArray(list)) {
    throw new InvalidOptionError(
      prefix,
      `guardrails.${kind}`,
      `must be an array of guardrails, received ${describeValue(list)}.`,
    );
  }
  const seen = new Set<string>();
  return list.map((guardrail: unknown, index) => {
    let result: NamedGuardrail<never>;
    if (typeof guardrail === "function") {
      const name = guardrail.name !== "" ? guardrail.name : `${kind}[${index}]`;
      result = { name, check: guardrail as (args: never) => unknown };
    } else if (
      guardrail !== null &&
      typeof guardrail === "object" &&
      typeof (guardrail as { check?: unknown }).check === "function" &&
      typeof (guardrail as { name?: unknown }).name === "string" &&
      (guardrail as { name: string }).name !== ""
    ) {
      const { name, check } = guardrail as NamedGuardrail<never>;
      result = { name, check: check.bind(guardrail) };
    } else {
      throw new InvalidOptionError(
        prefix,
        `guardrails.${kind}[${index}]`,
        `must be a function (args) => ({ tripwire, reason? }) or { name, check }, as agentGuardrail() makes; received ${describeValue(guardrail)}.`,
      );
    }
    if (seen.has(result.name)) {
      throw new InvalidOptionError(
        prefix,
        `guardrails.${kind}`,
        `has two guardrails named ${JSON.stringify(result.name)}; the log tells them apart by name. Name them (a named function, or { name, check }).`,
      );
    }
    seen.add(result.name);
    return result;
  });
}

/**
 * Runs one guardrail and never throws (L9): a throw, a rejection or an answer that is no
 * verdict counts as tripped, with what went wrong as its reason. Internal.
 */
export async function runGuardrail<Args>(
  guardrail: NamedGuardrail<Args>,
  args: Args,
  allowRetry: boolean,
): Promise<GuardrailOutcome> {
  const started = performance.now();
  const name = guardrail.name;
  let answer: unknown;
  try {
    // A guardrail that ignores its signal cannot hold an aborted run: the run stops waiting.
    answer = await untilAborted(
      guardrail.check(args),
      (args as { readonly signal?: AbortSignal }).signal,
    );
  } catch (error) {
    const message = errorMessage(error);
    return {
      name,
      tripwire: true,
      reason: `The guardrail "${name}" failed: ${message}`,
      error: message,
      durationMs: performance.now() - started,
    };
  }
  const durationMs = performance.now() - started;
  if (answer !== null && typeof answer === "object") {
    const retry = (answer as Partial<GuardrailRetry>).retry;
    if (allowRetry && typeof retry === "string" && retry !== "") {
      return { name, tripwire: false, retry, durationMs };
    }
    const verdict = answer as Partial<GuardrailVerdict>;
    if (typeof verdict.tripwire === "boolean") {
      return {
        name,
        tripwire: verdict.tripwire,
        ...(typeof verdict.reason === "string" ? { reason: verdict.reason } : {}),
        ...(verdict.info !== undefined ? { info: toJson(verdict.info) } : {}),
        durationMs,
      };
    }
  }
  const expected = allowRetry ? "{ tripwire, reason? } or { retry }" : "{ tripwire, reason? }";
  const error = `it answered ${describeValue(answer)}, not ${expected}`;
  return {
    name,
    tripwire: true,
    reason: `The guardrail "${name}" failed: ${error}.`,
    error,
    durationMs,
  };
}

/** `value`, or a rejection as soon as `signal` aborts, whichever comes first. */
function untilAborted<T>(value: T | Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined || !(value instanceof Promise)) return Promise.resolve(value);
  if (signal.aborted) return Promise.reject(new Error("aborted"));
  return new Promise<T>((resolve, reject) => {
    const stop = (): void => reject(new Error("aborted"));
    signal.addEventListener("abort", stop, { once: true });
    value.then(
      (result) => {
        signal.removeEventListener("abort", stop);
        resolve(result);
      },
      (error: unknown) => {
        signal.removeEventListener("abort", stop);
        reject(error);
      },
    );
  });
}
