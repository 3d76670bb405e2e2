import type { ModelProviderV1 } from "@lattice/providers";
import type { ToolContext, ToolRunInfo } from "@lattice/tools";
import type { Mailbox } from "./mailbox.js";
import type { RunEnv } from "./run-env.js";
import type { RunUsage, SDKMessage } from "./sdk-message.js";
import type { TraceEvent } from "./trace-event.js";
import { addUsage, type UsageTotals, zeroUsage } from "./usage-totals.js";

/**
 * What a Lattice run offers the agent runs its tool calls start (agent tools, delegation): the
 * running agent's provider and model, where nested messages and trace events go, the chain of
 * agents, and where a child run's usage is reported. Reached from a tool call's context with
 * {@link parentRunOf}; a tool sees only the public `ctx.run` ({@link ToolRunInfo}). Internal.
 */
export interface ParentRun extends ToolRunInfo {
  readonly provider: ModelProviderV1;
  readonly model: string;
  readonly emit: (message: SDKMessage) => void;
  /** The agents from the first one to the running one. */
  readonly chain: readonly string[];
  /** The mailbox handoffs go to when the agent tool has none of its own. */
  readonly mailbox: Mailbox | undefined;
  /** The depth limit set by the team or an enclosing agent tool, if any. */
  readonly maxDepth: number | undefined;
  /** The run's trace sink (its own `onTrace` and its parents'), if any. */
  readonly trace: ((event: TraceEvent) => void) | undefined;
  /** The caller's context (R9), passed on to child runs. */
  readonly context: unknown;
  /** Whether the run may still start something (`RunPlacement.mayStart`), for child runs. */
  readonly mayStart: (() => boolean) | undefined;
  /**
   * Reports the usage of a child run that tool call `toolUseId` started: it is logged with that
   * call's `tool_result` entry, or with the run's end when the call's result is not logged.
   */
  readonly reportUsage: (toolUseId: string, usage: RunUsage) => void;
}

/** The parent runs, by the `ctx.run` object their tool calls see. */
const parents = new WeakMap<ToolRunInfo, ParentRun>();

/** The Lattice run a tool call belongs to, when a Lattice agent made it. Internal. */
export function parentRunOf(context: ToolContext): ParentRun | undefined {
  const run = context.run;
  return run === undefined ? undefined : parents.get(run);
}

/**
 * Makes the `ctx.run` a run's tool calls see, and registers the run as their parent, with the
 * runtime's provider and model as they are now (after tool sources were resolved). Internal.
 */
export function openParentRun(env: RunEnv, agentName: string): ToolRunInfo {
  const { placement, runtime } = env;
  const info: ToolRunInfo = Object.freeze({
    runId: env.runId,
    sessionId: env.sessionId,
    agentName,
    depth: placement.depth,
  });
  const childUsage = env.childUsage;
  parents.set(info, {
    ...info,
    provider: runtime.provider,
    model: runtime.model,
    emit: placement.emit,
    chain: placement.chain ?? [agentName],
    mailbox: placement.mailbox,
    maxDepth: placement.maxDepth,
    trace: env.trace,
    context: placement.context,
    mayStart: env.mayStart,
    reportUsage: (toolUseId, usage) => {
      let totals = childUsage.get(toolUseId);
      if (totals === undefined) {
        totals = zeroUsage();
        childUsage.set(toolUseId, totals);
      }
      addUsage(totals, usage);
    },
  });
  return info;
}

/** The usage child runs of call `toolUseId` reported and no entry holds yet. Internal. */
export function takeChildUsage(env: RunEnv, toolUseId: string): UsageTotals | undefined {
  const childUsage = env.childUsage;
  if (childUsage.size === 0) return undefined;
  const usage = childUsage.get(toolUseId);
  if (usage === undefined) return undefined;
  childUsage.delete(toolUseId);
  return isZero(usage) ? undefined : usage;
}

/** All the usage child runs reported and no entry holds yet (for the run's end). Internal. */
export function takeAllChildUsage(env: RunEnv): UsageTotals | undefined {
  const childUsage = env.childUsage;
  if (childUsage.size === 0) return undefined;
  const total = zeroUsage();
  for (const usage of childUsage.values()) addUsage(total, usage);
  childUsage.clear();
  return isZero(total) ? undefined : total;
}

function isZero(usage: UsageTotals): boolean {
  return (
    usage.inputTokens === 0 &&
    usage.outputTokens === 0 &&
    usage.cacheReadInputTokens === 0 &&
    usage.cacheCreationInputTokens === 0
  );
}
