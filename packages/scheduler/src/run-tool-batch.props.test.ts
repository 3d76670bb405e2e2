/**
 * Property tests of the scheduler's invariants over random batches (T14–T27).
 *
 * Time is virtual and exact: every handler step, async policy and async hook waits on a
 * deferred that the driver releases one at a time, in an order fast-check chooses; between
 * two releases the driver lets every microtask run (`setImmediate`), so each check sees a
 * quiescent system. Nothing depends on real timers. Runs per property: LATTICE_PROPS_RUNS
 * (default 1 000; `pnpm --filter @lattice/scheduler test:props` runs 100 000).
 */
import { type AnyToolDefinition, tool } from "@lattice/tools";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { z } from "zod/v4";
import type { ToolConcurrencyMode } from "./resolve-tool-concurrency.js";
import { runToolBatch, type ToolBatchResult } from "./run-tool-batch.js";
import type { ToolBatchEvent } from "./tool-batch-event.js";
import type { ToolBatchDecision } from "./tool-batch-policy.js";

const RUNS = Number(process.env.LATTICE_PROPS_RUNS ?? 1_000);
/** Generous: about 3 ms a run, plus start-up. */
const TIMEOUT = 30_000 + RUNS * 3;

type Rule = "none" | "true" | "false" | "throws" | "flag";
type PolicyKind =
  | "none"
  | "allow"
  | "allowAsync"
  | "refuse"
  | "refuseAsync"
  | "throw"
  | "rejectAsync"
  | "invalid";
type HookAction = "pass" | "deny" | "throw" | "passAsync";
type Abort =
  | { readonly kind: "never" }
  | { readonly kind: "before" }
  | { readonly kind: "step"; readonly step: number }
  | { readonly kind: "inHandler"; readonly call: number };

interface CallSpec {
  readonly tool: number; // 0..3 known tools, 4 = unknown
  readonly valid: boolean;
  readonly flag: boolean;
  readonly steps: number; // 0 = synchronous handler
  readonly fail: "none" | "throw" | "isError";
  readonly endTurn: boolean;
  readonly hook: HookAction;
}

interface Scenario {
  readonly rules: readonly Rule[];
  readonly calls: readonly CallSpec[];
  readonly mode: ToolConcurrencyMode;
  readonly maxConcurrency: number;
  readonly policy: PolicyKind;
  readonly useHook: boolean;
  readonly abort: Abort;
  readonly choices: readonly number[];
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = fc.record({
  // Weighted towards safe rules and allowed batches, so that overlap is common.
  rules: fc.array(
    fc.constantFrom<Rule>("true", "true", "true", "flag", "flag", "none", "false", "throws"),
    {
      minLength: 4,
      maxLength: 4,
    },
  ),
  calls: fc.array(
    fc.record({
      tool: fc.oneof(
        { weight: 9, arbitrary: fc.nat({ max: 3 }) },
        { weight: 1, arbitrary: fc.constant(4) },
      ),
      valid: fc.oneof(
        { weight: 9, arbitrary: fc.constant(true) },
        { weight: 1, arbitrary: fc.constant(false) },
      ),
      flag: fc.boolean(),
      steps: fc.nat({ max: 3 }),
      fail: fc.constantFrom<CallSpec["fail"]>("none", "none", "throw", "isError"),
      endTurn: fc.oneof(
        { weight: 5, arbitrary: fc.constant(false) },
        { weight: 1, arbitrary: fc.constant(true) },
      ),
      hook: fc.constantFrom<HookAction>(
        "pass",
        "pass",
        "pass",
        "pass",
        "pass",
        "passAsync",
        "deny",
        "throw",
      ),
    }),
    { maxLength: 14, size: "medium" },
  ),
  mode: fc.constantFrom<ToolConcurrencyMode>("safe", "safe", "all", "sequential"),
  maxConcurrency: fc.integer({ min: 1, max: 6 }),
  policy: fc.constantFrom<PolicyKind>(
    ...Array.from({ length: 10 }, () => "none" as const),
    "allow",
    "allow",
    "allowAsync",
    "allowAsync",
    "refuse",
    "refuseAsync",
    "throw",
    "rejectAsync",
    "invalid",
  ),
  useHook: fc.boolean(),
  abort: fc.oneof(
    { weight: 4, arbitrary: fc.constant<Abort>({ kind: "never" }) },
    { weight: 1, arbitrary: fc.constant<Abort>({ kind: "before" }) },
    {
      weight: 4,
      arbitrary: fc.record({ kind: fc.constant("step" as const), step: fc.nat({ max: 25 }) }),
    },
    {
      weight: 1,
      arbitrary: fc.record({ kind: fc.constant("inHandler" as const), call: fc.nat({ max: 13 }) }),
    },
  ),
  choices: fc.array(fc.nat(), { minLength: 1, maxLength: 40 }),
});

type LogEntry =
  | { readonly type: "start"; readonly call: number; readonly inFlight: number }
  | { readonly type: "end"; readonly call: number }
  | { readonly type: "abort" }
  | { readonly type: "settled" };

interface Simulation {
  readonly scenario: Scenario;
  readonly log: readonly LogEntry[];
  readonly result: ToolBatchResult;
  readonly events: readonly ToolBatchEvent[];
  /** The policy returned (for async policies: once their wait was released). */
  readonly policyCalled: boolean;
  /** The abort came before the policy returned: an async policy was still pending. */
  readonly abortedBeforeDecision: boolean;
  readonly wrongSignal: boolean;
  /** Quiescent points where the pool held fewer handlers than it could (no abort yet). */
  readonly idleSlots: readonly string[];
}

/** Releases deferreds one at a time, in the order the scenario's choices dictate. */
class VirtualTime {
  private readonly waiting: Array<() => void> = [];
  wait(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  get size(): number {
    return this.waiting.length;
  }
  release(choice: number): void {
    const [resolve] = this.waiting.splice(choice % this.waiting.length, 1);
    resolve!();
  }
}

const quiesce = () => new Promise<void>((resolve) => setImmediate(resolve));

/** What the scenario's oracle says about call `index`. */
function runnable(scenario: Scenario, index: number): boolean {
  const call = scenario.calls[index]!;
  if (call.tool === 4 || !call.valid) return false;
  return !scenario.useHook || call.hook === "pass" || call.hook === "passAsync";
}

function safe(scenario: Scenario, index: number): boolean {
  if (!runnable(scenario, index)) return false;
  const call = scenario.calls[index]!;
  const rule = scenario.rules[call.tool]!;
  return rule === "true" || (rule === "flag" && call.flag);
}

/** The plan the spec asks for (T15, T18), computed independently of the planner. */
function expectedRuns(scenario: Scenario): number[][] {
  const count = scenario.calls.length;
  const indices = Array.from({ length: count }, (_, index) => index);
  if (count === 0) return [];
  if (scenario.mode === "all") return [indices];
  if (scenario.mode === "sequential") return indices.map((index) => [index]);
  const runs: number[][] = [];
  for (const index of indices) {
    const last = runs.at(-1);
    if (safe(scenario, index) && last !== undefined && safe(scenario, last[0]!)) last.push(index);
    else runs.push([index]);
  }
  return runs;
}

const policyAllows = (kind: PolicyKind) =>
  kind === "none" || kind === "allow" || kind === "allowAsync";

async function simulate(scenario: Scenario): Promise<Simulation> {
  const time = new VirtualTime();
  const controller = new AbortController();
  const log: LogEntry[] = [];
  const events: ToolBatchEvent[] = [];
  const idleSlots: string[] = [];
  let inFlight = 0;
  let wrongSignal = false;
  let policyCalled = false;
  let abortedBeforeDecision = false;
  const ended = new Set<number>();
  const abort = () => {
    if (controller.signal.aborted) return;
    log.push({ type: "abort" });
    if (!policyCalled) abortedBeforeDecision = true;
    controller.abort();
  };

  const schema = z.object({ call: z.number().int(), flag: z.boolean() });
  const tools = new Map<string, AnyToolDefinition>();
  scenario.rules.forEach((rule, toolIndex) => {
    const options =
      rule === "none"
        ? undefined
        : {
            isConcurrencySafe: (input: z.output<typeof schema>) => {
              if (rule === "throws") throw new Error("rule failed");
              return rule === "true" || (rule === "flag" && input.flag);
            },
          };
    const definition = tool(
      `t${toolIndex}`,
      "A test tool",
      schema,
      (input, context) => {
        const spec = scenario.calls[input.call]!;
        inFlight++;
        log.push({ type: "start", call: input.call, inFlight });
        if (context.signal !== controller.signal) wrongSignal = true;
        if (scenario.abort.kind === "inHandler" && scenario.abort.call === input.call) abort();
        const finish = () => {
          inFlight--;
          ended.add(input.call);
          log.push({ type: "end", call: input.call });
          if (spec.fail === "throw") throw new Error(`call ${input.call} failed`);
          return {
            content: `ok ${input.call}`,
            isError: spec.fail === "isError",
            endTurn: spec.endTurn,
          };
        };
        if (spec.steps === 0) return finish();
        return (async () => {
          for (let step = 0; step < spec.steps; step++) await time.wait();
          return finish();
        })();
      },
      options,
    );
    tools.set(definition.name, definition);
  });

  const calls = scenario.calls.map((spec, index) => ({
    id: `call_${index}`,
    name: spec.tool === 4 ? "missing" : `t${spec.tool}`,
    input: spec.valid ? { call: index, flag: spec.flag } : { call: String(index), flag: spec.flag },
  }));

  const refusal: ToolBatchDecision = {
    allowed: false,
    code: "refused_by_test",
    message: "The test refuses.",
    conflictingToolCallIds: calls.slice(0, 2).map((call) => call.id),
    suggestedNextStep: "Try again.",
  };
  const decide = (): ToolBatchDecision => {
    policyCalled = true;
    switch (scenario.policy) {
      case "refuse":
      case "refuseAsync":
        return refusal;
      case "throw":
      case "rejectAsync":
        throw new Error("policy failed");
      case "invalid":
        return { allowed: "maybe" } as unknown as ToolBatchDecision;
      default:
        return { allowed: true };
    }
  };
  const policy =
    scenario.policy === "none"
      ? undefined
      : scenario.policy.endsWith("Async")
        ? {
            validate: async () => {
              await time.wait();
              return decide();
            },
          }
        : { validate: decide };

  if (scenario.abort.kind === "before") abort();
  let settled = false;
  const pending = runToolBatch({
    calls,
    tools,
    concurrency: { mode: scenario.mode, maxConcurrency: scenario.maxConcurrency },
    signal: controller.signal,
    ...(policy !== undefined ? { policy } : {}),
    ...(scenario.useHook
      ? {
          beforeCall: (call: { input: unknown }) => {
            const index = (call.input as { call: number }).call;
            const action = scenario.calls[index]!.hook;
            if (action === "deny") return { deny: "denied by test" };
            if (action === "throw") throw new Error("hook failed");
            if (action === "passAsync") return time.wait().then(() => undefined);
            return undefined;
          },
        }
      : {}),
    onEvent: (event) => events.push(event),
    now: (() => {
      let tick = 0;
      return () => ++tick;
    })(),
  }).then((result) => {
    settled = true;
    log.push({ type: "settled" });
    return result;
  });

  const runs = expectedRuns(scenario);
  for (let step = 0; ; step++) {
    await quiesce();
    if (settled) break;
    if (scenario.abort.kind === "step" && scenario.abort.step === step) {
      abort();
      await quiesce();
      if (settled) break;
    }
    if (!controller.signal.aborted && log.some((entry) => entry.type === "start")) {
      // Work conservation: the current run's pool holds as many handlers as it can.
      const current = runs.find((run) =>
        run.some((index) => runnable(scenario, index) && !ended.has(index)),
      );
      if (current !== undefined) {
        const waiting = current.filter((index) => runnable(scenario, index) && !ended.has(index));
        const limit =
          scenario.mode === "sequential" ||
          (scenario.mode === "safe" && !safe(scenario, current[0]!))
            ? 1
            : Math.min(scenario.maxConcurrency, current.length);
        const expected = Math.min(limit, waiting.length);
        if (inFlight !== expected)
          idleSlots.push(`step ${step}: ${inFlight} in flight, expected ${expected}`);
      }
    }
    if (time.size === 0) throw new Error("deadlock: the batch waits on nothing the test controls");
    time.release(scenario.choices[step % scenario.choices.length]!);
  }
  const result = await pending;
  // Let late waiters (a pending abort step, nothing else) drain.
  return {
    scenario,
    log,
    result,
    events,
    policyCalled,
    abortedBeforeDecision,
    wrongSignal,
    idleSlots,
  };
}

function starts(simulation: Simulation) {
  return simulation.log.flatMap((entry, position) =>
    entry.type === "start" ? [{ call: entry.call, position }] : [],
  );
}

function interval(simulation: Simulation, call: number): [number, number] | undefined {
  const start = simulation.log.findIndex((entry) => entry.type === "start" && entry.call === call);
  if (start < 0) return undefined;
  const end = simulation.log.findIndex((entry) => entry.type === "end" && entry.call === call);
  return [start, end < 0 ? Number.POSITIVE_INFINITY : end];
}

function check(name: string, property: (simulation: Simulation) => void) {
  it(
    name,
    async () => {
      await fc.assert(
        fc.asyncProperty(scenarioArbitrary, async (scenario) => {
          property(await simulate(scenario));
        }),
        { numRuns: RUNS },
      );
    },
    TIMEOUT,
  );
}

describe(`runToolBatch properties (${RUNS} runs each)`, () => {
  check(
    "T20, T21: exactly one result per call, in tool_use order, with a consistent status",
    (simulation) => {
      const { scenario, result, events } = simulation;
      // Collected, then asserted once: thousands of `expect` calls per run are slow.
      const problems: string[] = [];
      const fail = (problem: string) => problems.push(problem);
      if (result.results.length !== scenario.calls.length) fail("not one result per call");
      const started = new Set(starts(simulation).map((entry) => entry.call));
      result.results.forEach((outcome, index) => {
        const spec = scenario.calls[index]!;
        if (outcome.id !== `call_${index}`) fail(`result ${index} is ${outcome.id}`);
        if (started.has(index)) {
          const failed = spec.fail !== "none";
          if (outcome.status !== (failed ? "failed" : "completed"))
            fail(`${index}: ${outcome.status}`);
          if (outcome.result.isError !== failed)
            fail(`${index}: isError ${outcome.result.isError}`);
          if (
            !(outcome.queuedAt <= outcome.startedAt! && outcome.startedAt! <= outcome.finishedAt)
          ) {
            fail(`${index}: timestamps out of order`);
          }
        } else {
          if (outcome.startedAt !== undefined) fail(`${index}: startedAt without a start`);
          if (!outcome.result.isError) fail(`${index}: not started yet not an error`);
          if (outcome.status === "cancelled" && !result.aborted)
            fail(`${index}: cancelled, no abort`);
          if (policyAllows(scenario.policy) && !result.aborted && runnable(scenario, index)) {
            fail(`${index}: runnable but never started`);
          }
        }
      });
      const counts = scenario.calls.map(() => ({ queued: 0, started: 0, finished: 0 }));
      for (const event of events) {
        if (event.type === "tool_call_queued") counts[event.index]!.queued++;
        else if (event.type === "tool_call_started") counts[event.index]!.started++;
        else if (event.type === "tool_call_finished") counts[event.index]!.finished++;
      }
      counts.forEach(({ queued, started: startedCount, finished }, index) => {
        if (queued !== 1 || finished !== 1 || startedCount !== (started.has(index) ? 1 : 0)) {
          fail(`${index}: events queued ${queued}, started ${startedCount}, finished ${finished}`);
        }
      });
      for (let position = 1; position < events.length; position++) {
        if (events[position]!.time < events[position - 1]!.time) fail("event times go back");
      }
      const firstEndTurn = result.results.findIndex((outcome) => outcome.result.endTurn);
      if (result.endTurn?.index !== (firstEndTurn < 0 ? undefined : firstEndTurn)) {
        fail("endTurn is not the first in tool_use order");
      }
      expect(problems).toEqual([]);
    },
  );

  check("T14, T17: never more than maxConcurrency handlers in flight", (simulation) => {
    const limit =
      simulation.scenario.mode === "sequential" ? 1 : simulation.scenario.maxConcurrency;
    for (const entry of simulation.log) {
      if (entry.type === "start") expect(entry.inFlight).toBeLessThanOrEqual(limit);
    }
  });

  check("T15, T18: an unsafe call never overlaps any other call", (simulation) => {
    const { scenario } = simulation;
    if (scenario.mode === "all") return;
    const intervals = scenario.calls.map((_, index) => interval(simulation, index));
    intervals.forEach((mine, index) => {
      if (mine === undefined) return;
      if (scenario.mode === "safe" && safe(scenario, index)) return;
      intervals.forEach((other, otherIndex) => {
        if (other === undefined || otherIndex === index) return;
        expect(other[1] < mine[0] || other[0] > mine[1]).toBe(true);
      });
    });
  });

  check("T15, T18: the plan is the spec's, and runs never overlap each other", (simulation) => {
    const { scenario, result } = simulation;
    const planned = result.plan.runs.map((run) => [...run.indices]);
    if (planned.length > 0 || (policyAllows(scenario.policy) && !result.aborted)) {
      expect(planned).toEqual(expectedRuns(scenario));
    }
    for (let runIndex = 1; runIndex < planned.length; runIndex++) {
      const before = planned[runIndex - 1]!.map((index) => interval(simulation, index));
      const after = planned[runIndex]!.map((index) => interval(simulation, index));
      const lastEnd = Math.max(-1, ...before.map((span) => span?.[1] ?? -1));
      const firstStart = Math.min(
        Number.POSITIVE_INFINITY,
        ...after.map((span) => span?.[0] ?? Number.POSITIVE_INFINITY),
      );
      expect(lastEnd).toBeLessThan(firstStart);
    }
  });

  check(
    "T22: nothing starts after abort, and every started handler settles before the batch",
    (simulation) => {
      const { log, result, wrongSignal } = simulation;
      const abortAt = log.findIndex((entry) => entry.type === "abort");
      const settledAt = log.findIndex((entry) => entry.type === "settled");
      expect(settledAt).toBe(log.length - 1);
      const started = starts(simulation);
      if (abortAt >= 0) {
        for (const entry of started) {
          const inHandler =
            simulation.scenario.abort.kind === "inHandler" &&
            simulation.scenario.abort.call === entry.call;
          expect(entry.position < abortAt || (inHandler && entry.position === abortAt - 1)).toBe(
            true,
          );
        }
      }
      expect(log.filter((entry) => entry.type === "end")).toHaveLength(started.length);
      expect(result.aborted).toBe(abortAt >= 0 && abortAt < settledAt);
      expect(wrongSignal).toBe(false);
      for (const outcome of result.results) {
        if (outcome.status === "cancelled") expect(outcome.startedAt).toBeUndefined();
      }
    },
  );

  check(
    "T25, T26, T27: a refused or failing policy runs nothing and answers every call",
    (simulation) => {
      const { scenario, result, log, policyCalled, abortedBeforeDecision } = simulation;
      if (policyAllows(scenario.policy)) return;
      if (scenario.abort.kind === "before") {
        expect(policyCalled).toBe(false);
        return;
      }
      expect(log.some((entry) => entry.type === "start")).toBe(false);
      expect(result.plan.runs).toEqual([]);
      if (abortedBeforeDecision) {
        // T22: the batch does not wait for a policy still pending at the abort.
        expect(result.aborted).toBe(true);
        expect(result.decision).toBeUndefined();
        expect(result.policyError).toBeUndefined();
        for (const outcome of result.results) expect(outcome.status).toBe("cancelled");
        return;
      }
      const status = scenario.policy.startsWith("refuse") ? "refused" : "policy_error";
      for (const outcome of result.results) {
        expect(outcome.status).toBe(status);
        expect(outcome.result.isError).toBe(true);
        const text = outcome.result.content.map((block) =>
          block.type === "text" ? block.text : "",
        );
        expect(text.join("")).toContain(
          status === "refused" ? "refused_by_test" : "tool_batch_policy_error",
        );
      }
      expect(result.plan.runs).toEqual([]);
    },
  );

  check("makespan: a run's pool never leaves a slot idle while its calls wait", (simulation) => {
    expect(simulation.idleSlots).toEqual([]);
  });
});
