import type { TraceEvent } from "@lattice/core";
import { InvalidOptionError } from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import {
  type Attributes,
  type Context,
  context,
  type Link,
  type SpanContext,
  SpanKind,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import {
  ATTR_GEN_AI_AGENT_NAME,
  ATTR_GEN_AI_CONVERSATION_ID,
  ATTR_GEN_AI_OPERATION_NAME,
  ATTR_GEN_AI_PROVIDER_NAME,
  ATTR_GEN_AI_REQUEST_MODEL,
  ATTR_LATTICE_RUN_ID,
  ATTR_LATTICE_RUN_PARENT_TOOL_CALL_ID,
  ATTR_LATTICE_RUN_RESUMED,
  ATTR_LATTICE_RUN_SUBTYPE,
  GEN_AI_OPERATION_INVOKE_AGENT,
} from "./attribute-names.js";
import { epochMillis } from "./epoch-millis.js";
import { inferProviderName } from "./infer-provider-name.js";
import { OTEL_PACKAGE_VERSION } from "./package-version.js";
import { RunSpans } from "./run-spans.js";
import { SpanEnds } from "./span-ends.js";
import type { ToolSpan } from "./tool-span.js";

/** Options of {@link otelObserver}. */
export interface OtelObserverOptions {
  /**
   * The tracer to make spans with. Default: `trace.getTracer("@lattice/otel", version)` from
   * the global tracer provider, looked up at each run's start (so a provider registered after
   * the observer was made is used).
   */
  readonly tracer?: Tracer;
  /**
   * Record content: tool call arguments on approval requests (`gen_ai.tool.call.arguments`)
   * and tools' progress messages. Default `false`: spans carry names, ids, counts, timings and
   * statuses only. API keys and credential headers are never recorded, in either mode.
   */
  readonly recordContent?: boolean;
  /**
   * The agent's name (`gen_ai.agent.name`, and the span name `invoke_agent {name}`) for runs
   * that are not an agent tool's child run. Default: none (the span is named `invoke_agent`).
   * A child run is named after the agent tool that started it.
   */
  readonly agentName?: string;
  /**
   * `gen_ai.provider.name` (`"anthropic"`, `"openai"`, `"deepseek"`, ...). Default: inferred
   * from the model's name (`claude-*` is `"anthropic"`, `gpt-*` is `"openai"`, ...), and left
   * out when the name says nothing.
   */
  readonly providerName?: string;
  /**
   * `gen_ai.request.max_tokens` for trace events that do not carry it (traces written by a
   * Lattice older than this release). Newer traces carry each request's `maxTokens`.
   */
  readonly maxTokens?: number;
  /**
   * How many ended runs' span contexts to remember, so that a resumed run links to the run it
   * continues. Default `1000`; the oldest are forgotten first.
   */
  readonly maxRememberedRuns?: number;
}

/** What {@link otelObserver} returns: plug `onTrace` into an agent. */
export interface OtelObserver {
  /**
   * The trace listener: pass it as the agent's `onTrace` option, or call it from your own
   * listener. Never throws for a well-formed event; events of a run it did not see start are
   * ignored.
   */
  readonly onTrace: (event: TraceEvent) => void;
  /**
   * Ends every span still open (runs cut by a crash of the agent's code, or still running),
   * marked `lattice.run.subtype: "unfinished"`, so that a process about to exit can flush
   * them. Runs that go on afterwards are no longer traced.
   */
  endOpenSpans(): void;
}

const PREFIX = "otelObserver:";
const OPTION_KEYS: ReadonlySet<string> = new Set([
  "tracer",
  "recordContent",
  "agentName",
  "providerName",
  "maxTokens",
  "maxRememberedRuns",
]);

/**
 * Turns an agent's trace events into OpenTelemetry spans following the GenAI semantic
 * conventions (O1–O5): an `invoke_agent` span per run (INTERNAL), a `chat {model}` span per
 * model call (CLIENT) and an `execute_tool {tool}` span per tool call (INTERNAL), both
 * children of the run's span; an agent tool's child run is a child of its `execute_tool` span;
 * a resumed run links to the span of the run it continues (when this observer saw it end).
 *
 * Spans go through `@opentelemetry/api` only: with no tracer provider registered they are
 * never recording, and each run costs one no-op span. A root run's span is a child of the
 * context active when the run starts (wrap `agent.run()` in your own span to nest it).
 *
 * @example
 * ```ts
 * const observer = otelObserver({ agentName: "support" });
 * const agent = createAgent({ model, tools, onTrace: observer.onTrace });
 * ```
 * @throws `InvalidOptionError` (code `"invalid_option"`) for an option of the wrong type, and
 *   `UnknownOptionError` for an option this function does not have.
 */
export function otelObserver(options: OtelObserverOptions = {}): OtelObserver {
  assertKnownOptions(options, OPTION_KEYS, PREFIX);
  checkOptions(options);
  const recordContent = options.recordContent === true;
  const maxRemembered = options.maxRememberedRuns ?? 1000;
  const ends = new SpanEnds();
  const runs = new Map<string, RunSpans>();
  /**
   * Open spans of agent tools' calls by tool_use id, across runs: where a child run finds its
   * parent (a call of another kind is looked up in the open runs, see `parentCall`).
   */
  const openTools = new Map<string, ToolSpan>();
  /** Runs not traced (their span was not recording), by run id, with their session. */
  const skippedRuns = new Map<string, string>();
  const skippedSessions = new Map<string, number>();
  /** Ended runs' span contexts, for the link of a resumed run. */
  const ended = new Map<string, SpanContext>();
  /** `approval_decided` comes before the resumed run's `run_started`. */
  const decided = new Map<string, Extract<TraceEvent, { type: "approval_decided" }>>();
  /** The run of the last event, and its id: a cache in front of `runs`. */
  let lastRunId: string | undefined;
  let lastRun: RunSpans | undefined;
  const toolOpened = (id: string, tool: ToolSpan): void => {
    openTools.set(id, tool);
  };
  const toolClosed = (id: string, tool: ToolSpan): void => {
    if (openTools.get(id) === tool) openTools.delete(id);
  };
  /** The open call a child run names as its parent, in whichever run it is. */
  const parentCall = (id: string): ToolSpan | undefined => {
    const shared = openTools.get(id);
    if (shared !== undefined) return shared;
    for (const run of runs.values()) {
      const tool = run.openTool(id);
      if (tool !== undefined) return tool;
    }
    return undefined;
  };

  const tracer = (): Tracer =>
    options.tracer ?? trace.getTracer("@lattice/otel", OTEL_PACKAGE_VERSION);

  const skip = (runId: string, sessionId: string): void => {
    skippedRuns.set(runId, sessionId);
    skippedSessions.set(sessionId, (skippedSessions.get(sessionId) ?? 0) + 1);
  };
  const unskip = (runId: string): void => {
    const sessionId = skippedRuns.get(runId);
    if (sessionId === undefined) return;
    skippedRuns.delete(runId);
    const count = (skippedSessions.get(sessionId) ?? 1) - 1;
    if (count <= 0) skippedSessions.delete(sessionId);
    else skippedSessions.set(sessionId, count);
  };
  const remember = (runId: string, spanContext: SpanContext): void => {
    ended.delete(runId);
    ended.set(runId, spanContext);
    if (ended.size > maxRemembered) {
      const oldest = ended.keys().next();
      if (oldest.done !== true) ended.delete(oldest.value);
    }
  };

  const startRun = (event: Extract<TraceEvent, { type: "run_started" }>): void => {
    const { runId, sessionId, parentToolUseId } = event;
    lastRun = undefined;
    const waiting = decided.get(runId);
    decided.delete(runId);
    // A run already open under this id (a resume of a run whose end this observer missed).
    const stale = runs.get(runId);
    if (stale !== undefined) {
      runs.delete(runId);
      stale.endOpen(event.time, "unfinished");
      stale.span.setAttribute(ATTR_LATTICE_RUN_SUBTYPE, "unfinished");
      stale.end(event.time);
      remember(runId, stale.span.spanContext());
    }
    unskip(runId);
    const parentTool = parentToolUseId !== null ? parentCall(parentToolUseId) : undefined;
    // The child of a run that is not traced is not traced either.
    if (parentToolUseId !== null && parentTool === undefined && skippedSessions.has(sessionId)) {
      skip(runId, sessionId);
      return;
    }
    // A child run is named after its agent tool; the top run after the `agentName` option.
    const agentName = parentTool !== undefined ? parentTool.name : options.agentName;
    const providerName = options.providerName ?? inferProviderName(event.model) ?? event.provider;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_INVOKE_AGENT,
      [ATTR_GEN_AI_CONVERSATION_ID]: sessionId,
      [ATTR_GEN_AI_REQUEST_MODEL]: event.model,
      [ATTR_LATTICE_RUN_ID]: runId,
    };
    if (agentName !== undefined) attributes[ATTR_GEN_AI_AGENT_NAME] = agentName;
    if (providerName !== undefined) attributes[ATTR_GEN_AI_PROVIDER_NAME] = providerName;
    if (parentToolUseId !== null)
      attributes[ATTR_LATTICE_RUN_PARENT_TOOL_CALL_ID] = parentToolUseId;
    if (event.resumed === true) attributes[ATTR_LATTICE_RUN_RESUMED] = true;
    const links: Link[] = [];
    const previous = event.resumed === true ? ended.get(runId) : undefined;
    if (previous !== undefined) {
      links.push({ context: previous, attributes: { "lattice.link.type": "resumes" } });
    }
    const parent: Context =
      parentTool !== undefined
        ? trace.setSpan(parentTool.parent, parentTool.span)
        : context.active();
    const span = tracer().startSpan(
      agentName !== undefined
        ? `${GEN_AI_OPERATION_INVOKE_AGENT} ${agentName}`
        : GEN_AI_OPERATION_INVOKE_AGENT,
      { kind: SpanKind.INTERNAL, startTime: epochMillis(event.time), attributes, links },
      parent,
    );
    if (!span.isRecording()) {
      // No tracer provider (or the sampler dropped the run): nothing more to do for this run.
      span.end();
      skip(runId, sessionId);
      return;
    }
    const run = new RunSpans(span, parent, {
      tracer: options.tracer ?? tracer(),
      recordContent,
      model: event.model,
      providerName,
      maxTokens: parentToolUseId === null ? options.maxTokens : undefined,
      sessionId,
      ends,
      toolOpened,
      toolClosed,
    });
    runs.set(runId, run);
    if (waiting !== undefined) run.approvalDecided(waiting);
  };

  return {
    onTrace(event) {
      if (event.type === "run_started") {
        startRun(event);
        return;
      }
      // A run's events come in a row (a child run's interleave with its parent's): the last
      // run looked up saves most of the map lookups.
      const runId = event.runId;
      let run: RunSpans | undefined;
      if (runId === lastRunId && lastRun !== undefined) run = lastRun;
      else {
        run = runs.get(runId);
        lastRunId = runId;
        lastRun = run;
      }
      // A run's span ends with the run, or with the step when the run goes on in another step.
      const ends =
        event.type === "run_finished" ||
        event.type === "run_aborted" ||
        event.type === "run_step_finished";
      if (run === undefined) {
        if (event.type === "approval_decided") decided.set(event.runId, event);
        else if (ends) unskip(event.runId);
        return;
      }
      if (!ends) {
        run.handle(event);
        return;
      }
      // The run is forgotten first, so that a processor that throws as its span ends leaves
      // no run open behind it.
      runs.delete(runId);
      lastRun = undefined;
      try {
        run.handle(event);
      } finally {
        remember(runId, run.span.spanContext());
      }
    },
    endOpenSpans() {
      ends.flush();
      const now = performance.now();
      for (const [runId, run] of runs) {
        run.endOpen(now, "unfinished");
        run.span.setAttribute(ATTR_LATTICE_RUN_SUBTYPE, "unfinished");
        run.end(now);
        remember(runId, run.span.spanContext());
      }
      runs.clear();
      lastRun = undefined;
      openTools.clear();
    },
  };
}

function checkOptions(options: OtelObserverOptions): void {
  const tracer = options.tracer as unknown;
  if (
    tracer !== undefined &&
    (tracer === null ||
      typeof tracer !== "object" ||
      typeof (tracer as { startSpan?: unknown }).startSpan !== "function")
  ) {
    throw new InvalidOptionError(
      PREFIX,
      "tracer",
      `must be an OpenTelemetry Tracer (trace.getTracer(name)), received ${describeValue(tracer)}.`,
    );
  }
  for (const key of ["recordContent"] as const) {
    const value = options[key] as unknown;
    if (value !== undefined && typeof value !== "boolean") {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `must be true or false, received ${describeValue(value)}.`,
      );
    }
  }
  for (const key of ["agentName", "providerName"] as const) {
    const value = options[key] as unknown;
    if (value !== undefined && (typeof value !== "string" || value === "")) {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `must be a non-empty string, received ${describeValue(value)}.`,
      );
    }
  }
  for (const key of ["maxTokens", "maxRememberedRuns"] as const) {
    const value = options[key] as unknown;
    if (value !== undefined && (!Number.isInteger(value) || (value as number) < 0)) {
      throw new InvalidOptionError(
        PREFIX,
        key,
        `must be a whole number of at least 0, received ${describeValue(value)}.`,
      );
    }
  }
}
