import type { ModelProviderV1, ModelRequest } from "@lattice/providers";
import type { ResolvedToolConcurrency, ToolBatchPolicy } from "@lattice/scheduler";
import type { AnyToolDefinition } from "@lattice/tools";
import type { AgentHooks } from "./agent-hooks.js";
import type { ModelPricing } from "./model-pricing.js";
import type { RunContext } from "./resolve-context.js";
import type { OutputSettings, RunSteering } from "./run-steering.js";
import type { TraceEvent } from "./trace-event.js";

/** Everything one run needs, resolved from an agent's options. Internal. */
export interface AgentRuntime {
  readonly model: string;
  readonly provider: ModelProviderV1;
  readonly system: string | undefined;
  readonly tools: readonly AnyToolDefinition[];
  readonly toolMap: ReadonlyMap<string, AnyToolDefinition>;
  readonly concurrency: ResolvedToolConcurrency;
  readonly policy: ToolBatchPolicy | undefined;
  readonly hooks: AgentHooks;
  readonly maxTurns: number;
  readonly maxTokens: number;
  /** How long an aborted batch waits for handlers that ignore their signal (H5). */
  readonly abortGraceMs: number;
  /** The time limit of handlers whose tool sets none (R20). */
  readonly toolTimeoutMs: number | undefined;
  /** Whether some tool has `needsApproval`: only then may a run pause (R14). */
  readonly canPause: boolean;
  /**
   * With tool sources: resolves them into the runtime over all current tools (the same object
   * while no source's list changed). Called before a run's first step and every model call.
   */
  readonly withSources?: ((signal: AbortSignal) => Promise<AgentRuntime>) | undefined;
  readonly temperature: number | undefined;
  /** Ask the provider for SSE (`true`) or one JSON body (`false`). */
  readonly stream: boolean;
  /**
   * What every model request of a run sends besides its messages and signal: model, system,
   * the tools as plain data, limits and model controls. Built once per agent.
   */
  readonly request: Omit<ModelRequest, "messages" | "signal">;
  readonly includePartialMessages: boolean;
  readonly onTrace: ((event: TraceEvent) => void) | undefined;
  /** The steering options, resolved (L1–L11); undefined when none is set. */
  readonly steering: RunSteering | undefined;
  /** How a query's own `outputSchema` is asked for. */
  readonly outputSettings: OutputSettings;
  /** The agent's `pricing`, over the built-in table. */
  readonly pricing: ModelPricing | undefined;
  /** `contextManagement`'s threshold and strategies (C2); undefined when nothing is watched. */
  readonly context: RunContext | undefined;
  /** The model's context window in tokens, when known (C1). */
  readonly contextWindow: number | undefined;
}
