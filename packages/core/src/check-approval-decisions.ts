import { MAX_TOOL_INPUT_DEPTH, MAX_TOOL_INPUT_LENGTH } from "@lattice/providers";
import { InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { describeObject, isPlainObject, plainJsonProblem } from "./plain-json-problem.js";
import type { LoggedDecision } from "./run-log-entry.js";
import type { JsonValue } from "./session-store.js";

/**
 * Checks the decisions a caller brings to an interrupted run (`agent.resume(sessionId,
 * { decisions })`, `agent.step(sessionId, { decisions })`, and a job queue's resume) and
 * returns them as the run log keeps them. Each is `{ approved: true }`, `{ approved: true,
 * input }` or `{ approved: false, reason?: string }`. An edited `input` is checked as a
 * model's tool input is (H6, H26): a plain JSON object (strings, finite numbers, booleans,
 * null, arrays and plain objects; no `toJSON`, `BigInt`, `Date`, `Map` or cycle), nested at
 * most `MAX_TOOL_INPUT_DEPTH` (100) levels and at most `MAX_TOOL_INPUT_LENGTH` (4 Mi)
 * characters of JSON; the returned decision holds a copy of it, as JSON gives it back. A
 * hostile input of any depth or size costs little and never overflows the stack. Whether the
 * ids are pending is checked later, against the session's log.
 *
 * @param prefix - Who checks, printed first (`ResumeOptions:`, `StepOptions:`).
 * @param decisions - The decisions as the caller gave them; `undefined` for none.
 * @returns The decisions to log, or `undefined` when none were given.
 * @throws `InvalidOptionError` (option `decisions`) naming the approval and what is wrong: a
 *   decision of another shape, or an edited input that is not a plain JSON object or passes a
 *   bound (named with its value). Nothing is stored then.
 */
export function checkApprovalDecisions(
  prefix: string,
  decisions: unknown,
): { readonly [approvalId: string]: LoggedDecision } | undefined {
  if (decisions === undefined) return undefined;
  const fail = (text: string): never => {
    throw new InvalidOptionError(prefix, "decisions", text);
  };
  try {
    return checkShapes(decisions, fail);
  } catch (error) {
    if (error instanceof InvalidOptionError) throw error;
    // A getter or a proxy trap that throws: the value cannot be read as data.
    return fail(
      `could not be read as plain data (${error instanceof Error ? error.message : String(error)}). Pass decisions as plain objects, for example parsed from JSON.`,
    );
  }
}

/** The checks of {@link checkApprovalDecisions}, which reports any other error as a failure. */
function checkShapes(
  decisions: unknown,
  fail: (text: string) => never,
): { readonly [approvalId: string]: LoggedDecision } {
  if (!isPlainObject(decisions)) {
    fail(
      `must be an object of decisions by approval id, { [approvalId]: { approved: true } | { approved: false, reason } }, received ${describeValue(decisions)}.`,
    );
  }
  const checked: [string, LoggedDecision][] = [];
  for (const id of Object.keys(decisions as object)) {
    const decision = (decisions as Record<string, unknown>)[id];
    const d = decision as { approved?: unknown; input?: unknown; reason?: unknown } | null;
    const keys = d !== null && typeof d === "object" ? Object.keys(d) : [];
    const valid =
      d !== null &&
      typeof d === "object" &&
      (d.approved === true
        ? keys.every((key) => key === "approved" || key === "input")
        : d.approved === false &&
          keys.every((key) => key === "approved" || key === "reason") &&
          (d.reason === undefined || typeof d.reason === "string"));
    if (!valid) {
      fail(
        `has ${describeValue(decision)} for ${describeValue(id)}; a decision is { approved: true }, { approved: true, input } or { approved: false, reason?: string }.`,
      );
    }
    if (d!.approved === false) {
      checked.push([
        id,
        d!.reason !== undefined
          ? { approved: false, reason: d!.reason as string }
          : { approved: false },
      ]);
    } else if (d!.input === undefined) {
      checked.push([id, { approved: true }]);
    } else {
      let input: JsonValue;
      try {
        input = editedInput(d!.input, id, fail);
      } catch (error) {
        if (error instanceof InvalidOptionError) throw error;
        // A getter or a proxy trap that throws as the input is read.
        return fail(
          `has the edited input for ${describeValue(id)}, which could not be read as plain data (${error instanceof Error ? error.message : String(error)}). Nothing was stored; the run still waits for this decision.`,
        );
      }
      checked.push([id, { approved: true, input }]);
    }
  }
  // fromEntries defines own properties, so an id such as "__proto__" stays a decision.
  return Object.fromEntries(checked);
}

/** The edited input as the log keeps it, or a failure naming the approval and the problem. */
function editedInput(input: unknown, id: string, fail: (text: string) => never): JsonValue {
  const which = `the edited input for ${describeValue(id)}`;
  const still = "Nothing was stored; the run still waits for this decision.";
  if (!isPlainObject(input)) {
    const what =
      input !== null && typeof input === "object" ? describeObject(input) : describeValue(input);
    return fail(
      `has ${which}, ${what}, which is not a JSON object: a tool's input is a plain object of JSON values, as a model sends it. ${still}`,
    );
  }
  const bounds = `at most ${MAX_TOOL_INPUT_DEPTH} levels of nesting and ${MAX_TOOL_INPUT_LENGTH} characters of JSON`;
  const problem = plainJsonProblem(input, "input", MAX_TOOL_INPUT_DEPTH);
  if (problem !== undefined) {
    return fail(
      problem.tooDeep
        ? `has ${which} past the bounds of a tool input, the same as a model's (${bounds}): ${problem.message}. ${still}`
        : `has ${which}, which is not plain JSON: ${problem.message}. A tool's input holds strings, finite numbers, booleans, null, arrays and plain objects only. ${still}`,
    );
  }
  let text: string;
  try {
    text = JSON.stringify(input);
  } catch (error) {
    // A getter that throws, or answers differently the second time it is read.
    return fail(
      `has ${which}, which could not be read as JSON (${error instanceof Error ? error.message : String(error)}). ${still}`,
    );
  }
  if (text.length > MAX_TOOL_INPUT_LENGTH) {
    return fail(
      `has ${which} past the bounds of a tool input, the same as a model's (${bounds}): it is longer than the ${MAX_TOOL_INPUT_LENGTH} characters of JSON allowed. ${still}`,
    );
  }
  const copy = JSON.parse(text) as JsonValue;
  // What JSON.stringify read is what is kept: checked again, for getters that answer anew.
  const again = plainJsonProblem(copy, "input", MAX_TOOL_INPUT_DEPTH);
  if (again !== undefined) {
    return fail(
      `has ${which} past the bounds of a tool input (${bounds}): ${again.message}. ${still}`,
    );
  }
  return copy;
}
