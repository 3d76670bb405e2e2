import { describeValue, formatPath } from "@lattice/tools/internal";
import { printableText } from "./printable-text.js";
import { TIMELINE_CALL_STATUSES } from "./timeline-call-status.js";
import { shorten } from "./timeline-text.js";

/**
 * The largest time, in absolute value, a trace event may carry: 1e15 ms (about 31,700 years).
 * `performance.now()` and `Date.now()` are far inside it, and the span between any two times
 * stays a finite number, so the page's scale and axis always end.
 */
export const MAX_TRACE_TIME_MS = 1e15;

/** What is wrong with an event: the field (a path such as `plan.runs[0].indices[1]`) and why. */
export interface TraceEventProblem {
  /** The event's `type` when it has a string one, for messages: at most 60 characters, controls escaped. */
  readonly type: string | undefined;
  /** The path of the wrong field; `""` when the value is not an event at all. */
  readonly field: string;
  /** The problem as a sentence fragment: `"turn" must be ..., received ...`. */
  readonly message: string;
}

/** A check of one value: `undefined` when it is fine, else what it should have been. */
type Check = (value: unknown, path: readonly PropertyKey[]) => Mismatch | undefined;

interface Mismatch {
  readonly path: readonly PropertyKey[];
  readonly expected: string;
  readonly value: unknown;
}

const is =
  (test: (value: unknown) => boolean, expected: string): Check =>
  (value, path) =>
    test(value) ? undefined : { path, expected, value };

const string = is((value) => typeof value === "string", "a string");
const boolean = is((value) => typeof value === "boolean", "true or false");
const finite = is(
  (value) => typeof value === "number" && Number.isFinite(value),
  "a finite number",
);
const count = (what: string): Check =>
  is(
    (value) => typeof value === "number" && Number.isSafeInteger(value) && value >= 0,
    `an integer ≥ 0 (${what})`,
  );
const time = is(
  (value) => typeof value === "number" && Math.abs(value) <= MAX_TRACE_TIME_MS,
  "a finite number of milliseconds within ±1e15 (the trace's clock, performance.now())",
);
const oneOf = (values: readonly string[]): Check => {
  const known = new Set(values);
  return is(
    (value) => typeof value === "string" && known.has(value),
    `one of ${values.map((value) => `"${value}"`).join(", ")}`,
  );
};
const optional =
  (check: Check): Check =>
  (value, path) =>
    value === undefined ? undefined : check(value, path);
const nullable =
  (check: Check): Check =>
  (value, path) =>
    value === null ? undefined : check(value, path);
const arrayOf =
  (item: Check, expected: string): Check =>
  (value, path) => {
    if (!Array.isArray(value)) return { path, expected, value };
    for (let index = 0; index < value.length; index++) {
      const mismatch = item(value[index], [...path, index]);
      if (mismatch !== undefined) return mismatch;
    }
    return undefined;
  };
const object =
  (fields: Readonly<Record<string, Check>>, expected: string): Check =>
  (value, path) => {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { path, expected, value };
    }
    const record = value as Record<string, unknown>;
    for (const key in fields) {
      const mismatch = fields[key]!(record[key], [...path, key]);
      if (mismatch !== undefined) return mismatch;
    }
    return undefined;
  };

const turn = count("the turn number");
const base = { time, runId: string, sessionId: optional(string) };
const usage = object(
  { inputTokens: finite, outputTokens: finite },
  "an object with numeric inputTokens and outputTokens",
);
const plan = object(
  {
    mode: string,
    maxConcurrency: finite,
    runs: arrayOf(
      object(
        {
          concurrent: boolean,
          indices: arrayOf(count("a call's index"), "an array of call indices"),
        },
        "a plan run: an object with concurrent and indices",
      ),
      "an array of plan runs",
    ),
  },
  "a plan: an object with mode, maxConcurrency and runs",
);

/**
 * The fields the viewer reads from each event type it draws, and what they must be. Other
 * fields are left alone; events of other types need only a string `type` and a `time`.
 */
const EVENT_FIELDS: Readonly<Record<string, Readonly<Record<string, Check>>>> = {
  run_started: {
    ...base,
    model: optional(string),
    parentToolUseId: optional(nullable(string)),
    resumed: optional(boolean),
  },
  model_request_started: { ...base, turn, model: optional(string) },
  model_fallback: { ...base, turn, message: string, toModel: string },
  compaction: {
    ...base,
    turn,
    strategy: string,
    messagesReplaced: count("a number of messages"),
    tokensBefore: finite,
    tokensAfter: finite,
  },
  model_retry: { ...base, turn, attempt: finite, message: string, status: optional(finite) },
  model_request_finished: {
    ...base,
    turn,
    usage,
    stopReason: string,
    toolCalls: count("a number of calls"),
  },
  model_request_failed: { ...base, turn, message: string },
  batch_policy: {
    ...base,
    turn,
    decision: optional(
      object(
        { allowed: boolean, code: optional(string), message: optional(string) },
        "a decision: an object with allowed (and a refusal's code and message)",
      ),
    ),
    error: optional((value, path) =>
      typeof value === "string"
        ? undefined
        : object({ message: optional(string) }, "an error: a string or an object")(value, path),
    ),
  },
  batch_planned: { ...base, turn, plan },
  tool_call_queued: {
    ...base,
    turn,
    index: count("the call's index"),
    id: string,
    name: string,
    kind: string,
  },
  tool_call_started: { ...base, turn, id: string, inFlight: optional(finite) },
  tool_call_finished: {
    ...base,
    turn,
    id: string,
    status: oneOf(TIMELINE_CALL_STATUSES),
    isError: optional(boolean),
  },
  tool_call_settled_late: { ...base, turn, id: string },
  tool_progress: { ...base, toolUseId: string },
  approval_requested: {
    ...base,
    approvals: arrayOf(object({}, "an approval (an object)"), "an array of approvals"),
  },
  approval_decided: {
    ...base,
    decisions: arrayOf(
      object({ approved: boolean }, "a decision: an object with approved"),
      "an array of decisions",
    ),
  },
  run_finished: { ...base, subtype: string },
  run_aborted: base,
  run_step_finished: base,
  hook: base,
};

/** Events of types the viewer does not know: a type and a time are enough. */
const ANY_EVENT: Readonly<Record<string, Check>> = { type: string, time };

/** One type's fields, their checks and their paths, in three lists made once (a plain loop is fastest). */
interface FieldChecks {
  readonly keys: readonly string[];
  readonly checks: readonly Check[];
  readonly paths: readonly (readonly PropertyKey[])[];
}

const fieldChecks = (fields: Readonly<Record<string, Check>>): FieldChecks => {
  const keys = Object.keys(fields);
  return { keys, checks: keys.map((key) => fields[key]!), paths: keys.map((key) => [key]) };
};

/** Each known type's checks, made once: the type and time first. */
const CHECKS_BY_TYPE = new Map<string, FieldChecks>(
  Object.entries(EVENT_FIELDS).map(([type, fields]) => [
    type,
    fieldChecks({ ...ANY_EVENT, ...fields }),
  ]),
);
const ANY_EVENT_CHECKS = fieldChecks(ANY_EVENT);

/**
 * Checks one trace event against what the viewer reads from it: an object with a string
 * `type`, a `time` within ±{@link MAX_TRACE_TIME_MS}, and for each known type the fields the
 * page is drawn from, with their types (a `turn` is an integer, a `status` one of the call
 * statuses, `usage`, `plan` and `approvals` present and well formed).
 *
 * @param value - One parsed event.
 * @returns The first problem found, or `undefined` when the event can be drawn.
 */
export function checkTraceEvent(value: unknown): TraceEventProblem | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return {
      type: undefined,
      field: "",
      message: `is not an event (an object with a string "type" and a numeric "time"): ${printableText(describeValue(value))}`,
    };
  }
  const type = (value as { type?: unknown }).type;
  const { keys, checks, paths } =
    (typeof type === "string" ? CHECKS_BY_TYPE.get(type) : undefined) ?? ANY_EVENT_CHECKS;
  const record = value as Record<string, unknown>;
  for (let index = 0; index < keys.length; index++) {
    const mismatch = checks[index]!(record[keys[index]!], paths[index]!);
    if (mismatch === undefined) continue;
    const field = formatPath(mismatch.path);
    return {
      type: typeof type === "string" ? printableText(shorten(type, 60)) : undefined,
      field,
      message:
        mismatch.value === undefined
          ? `"${field}" is missing: it must be ${mismatch.expected}`
          : `"${field}" must be ${mismatch.expected}, received ${printableText(describeValue(mismatch.value))}`,
    };
  }
  return undefined;
}
