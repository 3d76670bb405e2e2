import type { ResolvedToolConcurrency } from "@lattice/scheduler";
import type { AnyToolDefinition } from "@lattice/tools";

/**
 * The guidance `createAgent` adds to the system prompt when some calls can run concurrently
 * (T17). It tells the model how to batch; it grants nothing: `isConcurrencySafe`,
 * `maxConcurrency` and `toolBatchPolicy` still decide what really runs together.
 */
export const PARALLEL_TOOL_CALLS_GUIDANCE =
  "You can call several tools in one reply. When calls do not depend on each other, send them together in a single reply so they can run at the same time. When a call needs the result of an earlier call, wait for that result and make the call in a later reply.";

/**
 * Whether an agent has tools whose calls may overlap: in `"all"` mode any tool, in `"safe"`
 * mode a tool that declares `isConcurrencySafe`, in `"sequential"` mode none.
 *
 * @param tools - The agent's tools.
 * @param concurrency - The agent's resolved concurrency settings.
 */
export function hasConcurrentTools(
  tools: readonly AnyToolDefinition[],
  concurrency: ResolvedToolConcurrency,
): boolean {
  if (concurrency.mode === "sequential" || concurrency.maxConcurrency < 2) return false;
  if (concurrency.mode === "all") return tools.length > 0;
  return tools.some((definition) => typeof definition.isConcurrencySafe === "function");
}

/**
 * The system prompt a standard agent sends: the user's prompt, then the SDK's guidance.
 *
 * @param userPrompt - `AgentOptions.systemPrompt`.
 * @param concurrent - Whether {@link PARALLEL_TOOL_CALLS_GUIDANCE} applies.
 */
export function buildSystemPrompt(
  userPrompt: string | undefined,
  concurrent: boolean,
): string | undefined {
  if (!concurrent) return userPrompt;
  return userPrompt === undefined || userPrompt === ""
    ? PARALLEL_TOOL_CALLS_GUIDANCE
    : `${userPrompt}\n\n${PARALLEL_TOOL_CALLS_GUIDANCE}`;
}
