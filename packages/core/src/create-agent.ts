import type { Agent, Prompt, QueryOptions, ResumeOptions, StepOptions } from "./agent.js";
import type { AgentOptions } from "./agent-options.js";
import { type CompactOptions, compactSession } from "./compact-session.js";
import type { AgentDefinition } from "./define-agent.js";
import { memorySessionStore } from "./memory-session-store.js";
import type { Flavor } from "./prepare-agent.js";
import { checkAgentOptions, prepareAgent } from "./prepare-agent.js";
import { startPromptQuery, startResumeQuery } from "./start-query.js";
import { takeAgentStep } from "./take-step.js";

/**
 * Creates the standard agent: the loop, plus the SDK's system-prompt guidance (the note on
 * parallel calls, T17, when some tools can run concurrently) and the built-in tools named in
 * `builtinTools`, confined to `cwd`.
 *
 * With no `provider`, talks the Anthropic Messages API at `baseURL` (default Anthropic;
 * `https://api.deepseek.com/anthropic` for DeepSeek) with `apiKey` or the environment's key
 * (T34).
 *
 * @example
 * ```ts
 * const agent = createAgent({ model: "claude-sonnet-4-6", tools: [search] });
 * const result = await agent.run("Find the release notes");
 * ```
 *
 * @param options - {@link AgentOptions}, or a definition from `defineAgent`.
 * @throws `UnknownOptionError` for an unknown key (T31, T32).
 * @throws `InvalidOptionError` for a bad value, a missing `model`, or duplicate tool names.
 */
export function createAgent<TContext = unknown, TOutput = unknown>(
  options: AgentOptions<TOutput> | AgentDefinition,
): Agent<TContext, TOutput> {
  return assemble<TContext, TOutput>(options, "standard");
}

/**
 * Creates an agent that runs the same loop with nothing added: your system prompt as given,
 * your tools only, no built-in tools.
 *
 * @param options - {@link AgentOptions} (without `builtinTools`), or a definition.
 * @throws `UnknownOptionError` for an unknown key (T31, T32).
 * @throws `InvalidOptionError` for a bad value, a missing `model`, or `builtinTools`.
 */
export function createBareAgent<TContext = unknown, TOutput = unknown>(
  options: AgentOptions<TOutput> | AgentDefinition,
): Agent<TContext, TOutput> {
  return assemble<TContext, TOutput>(options, "bare");
}

function assemble<TContext, TOutput>(
  options: AgentOptions<TOutput> | AgentDefinition,
  flavor: Flavor,
): Agent<TContext, TOutput> {
  const checked = checkAgentOptions(options, flavor);
  const prepared = prepareAgent(checked, flavor, undefined);
  const store = checked.validated.options.sessionStore ?? memorySessionStore();
  // The query methods are overloaded on a query's own outputSchema; one implementation serves.
  const agent = {
    name: prepared.name,
    model: prepared.model,
    provider: prepared.provider,
    sessionStore: store,
    query(prompt: Prompt, queryOptions?: QueryOptions<TContext>) {
      return startPromptQuery(prepared, store, prompt, queryOptions);
    },
    resume(sessionId: string, resumeOptions?: ResumeOptions<TContext>) {
      return startResumeQuery(prepared, store, sessionId, resumeOptions);
    },
    run(prompt: Prompt, queryOptions?: QueryOptions<TContext>) {
      return agent.query(prompt, queryOptions).finalResult();
    },
    step(sessionId: string, stepOptions?: StepOptions<TContext>) {
      return takeAgentStep(prepared, store, sessionId, stepOptions);
    },
    compact(sessionId: string, compactOptions?: CompactOptions) {
      return compactSession(prepared, store, sessionId, compactOptions);
    },
    async close() {
      await Promise.all(prepared.sources.map((source) => source.close()));
    },
    [Symbol.asyncDispose]() {
      return agent.close();
    },
  } as Agent<TContext, TOutput>;
  return Object.freeze(agent);
}
