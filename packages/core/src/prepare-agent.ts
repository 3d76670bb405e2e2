import { statSync } from "node:fs";
import type {
  AnthropicContextManagement,
  ModelProviderV1,
  ModelRequest,
  ModelToolSpec,
} from "@lattice/providers";
import {
  type AnyToolDefinition,
  BUILTIN_TOOL_NAMES,
  type BuiltinToolName,
  InvalidOptionError,
  LatticeError,
  type ToolSource,
} from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { AgentOptions } from "./agent-options.js";
import type { AgentRuntime } from "./agent-runtime.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { resolveContext } from "./resolve-context.js";
import { resolveProvider } from "./resolve-provider.js";
import { OUTPUT_TOOL_NAME, toolMapOf } from "./run-output.js";
import { type OutputSettings, resolveSteering } from "./run-steering.js";
import { buildSystemPrompt, hasConcurrentTools } from "./system-prompt.js";
import { type ValidatedAgentOptions, validateAgentOptions } from "./validate-agent-options.js";
import { assertUniqueToolNames } from "./validate-agent-tools.js";

/** Which factory assembles an agent: `createAgent` or `createBareAgent`. Internal. */
export type Flavor = "standard" | "bare";

/** Agent options checked once: validated values and the built-in tools to load. Internal. */
export interface CheckedAgentOptions {
  readonly validated: ValidatedAgentOptions;
  readonly builtinNames: readonly BuiltinToolName[];
}

/**
 * Checks agent options (or a definition) for a flavor: strict keys, values, built-in names
 * and their `cwd`. Internal: shared by the agent factories and agent tools.
 *
 * @throws `UnknownOptionError` or `InvalidOptionError`, as `createAgent` documents.
 */
export function checkAgentOptions(
  options: AgentOptions | AgentDefinition,
  flavor: Flavor,
): CheckedAgentOptions {
  const validated = validateAgentOptions(isAgentDefinition(options) ? { ...options } : options);
  const builtinNames = validateBuiltinNames(validated.options, flavor);
  if (builtinNames.length > 0) {
    assertUniqueToolNames([
      ...validated.tools,
      ...builtinNames.map((name) => ({ name }) as AnyToolDefinition),
    ]);
  }
  return { validated, builtinNames };
}

/** The provider and model an agent tool's member falls back to: its parent run's. Internal. */
export interface InheritedModel {
  readonly provider: ModelProviderV1;
  readonly model: string | undefined;
}

/** An agent's options resolved into a runtime factory. Internal. */
export interface PreparedAgent {
  readonly name: string | undefined;
  readonly model: string;
  readonly provider: ModelProviderV1;
  /** The runtime; a promise the first time when built-in tools must be loaded. */
  readonly getRuntime: () => AgentRuntime | Promise<AgentRuntime>;
  /** The agent's tool sources, which `close()` releases. */
  readonly sources: readonly ToolSource[];
  /** How a query's own `outputSchema` is asked for (L2). */
  readonly outputSettings: OutputSettings;
}

/**
 * Whether options name their own endpoint (`provider`, `apiKey` or `baseURL`) instead of
 * inheriting one. Internal.
 */
export function hasOwnProvider(options: AgentOptions): boolean {
  return (
    options.provider !== undefined || options.apiKey !== undefined || options.baseURL !== undefined
  );
}

/**
 * Builds the runtime factory of checked options. With `inherited`, a missing `model` and a
 * missing endpoint (no `provider`, `apiKey` or `baseURL`) are taken from it. Internal.
 *
 * @throws `InvalidOptionError` when no model is known.
 */
export function prepareAgent(
  checked: CheckedAgentOptions,
  flavor: Flavor,
  inherited: InheritedModel | undefined,
): PreparedAgent {
  const { validated, builtinNames } = checked;
  const o = validated.options;
  const model = o.model !== undefined && o.model !== "" ? o.model : inherited?.model;
  if (model === undefined || model === "") {
    throw new InvalidOptionError(
      "AgentOptions:",
      "model",
      'is required: name the model to talk to, for example model: "claude-sonnet-4-6" or model: "deepseek-v4-flash".',
    );
  }
  const provider =
    inherited !== undefined && !hasOwnProvider(o) ? inherited.provider : resolveProvider(o);
  const { steering, output: outputSettings } = resolveSteering(o, model, provider);
  const {
    context,
    window: contextWindow,
    serverEditing,
  } = resolveContext(o.contextManagement, model, provider);
  const outputTool = steering?.output?.tool;
  if (outputTool !== undefined) {
    const taken = [...validated.tools.map((definition) => definition.name), ...builtinNames];
    if (taken.includes(OUTPUT_TOOL_NAME)) {
      throw new InvalidOptionError(
        "AgentOptions:",
        "outputSchema",
        `needs the tool name "${OUTPUT_TOOL_NAME}" for the typed answer, but one of the agent's tools has it. Rename that tool.`,
      );
    }
  }
  const userTools = validated.tools;
  let runtime: AgentRuntime | undefined;
  let pending: Promise<AgentRuntime> | undefined;

  const approvalRules = o.needsApproval;
  const sources = validated.sources;
  // With tool sources, names are known only when a run resolves them.
  if (approvalRules !== undefined && sources.length === 0) {
    const known = new Set<string>([
      ...userTools.map((definition) => definition.name),
      ...builtinNames,
    ]);
    for (const name of Object.keys(approvalRules)) {
      if (!known.has(name)) {
        throw new InvalidOptionError(
          "AgentOptions:",
          "needsApproval",
          `names ${JSON.stringify(name)}, which is none of the agent's tools (${[...known].join(", ") || "it has none"}). Check the spelling, or enable the built-in tool in builtinTools.`,
        );
      }
    }
  }
  /** A tool with the agent's `needsApproval` rule for its name, unless it has its own. */
  const withApproval = (definition: AnyToolDefinition): AnyToolDefinition => {
    const rule = approvalRules?.[definition.name];
    if (rule === undefined || definition.needsApproval !== undefined) return definition;
    return Object.freeze({ ...definition, needsApproval: rule });
  };
  const makeRuntime = (given: readonly AnyToolDefinition[]): AgentRuntime => {
    const tools = approvalRules === undefined ? given : given.map(withApproval);
    return makeRuntimeOf(tools);
  };
  const system = (tools: readonly AnyToolDefinition[]): string | undefined =>
    flavor === "standard"
      ? buildSystemPrompt(o.systemPrompt, hasConcurrentTools(tools, validated.concurrency))
      : o.systemPrompt;
  const makeRuntimeOf = (tools: readonly AnyToolDefinition[]): AgentRuntime => ({
    model,
    provider,
    system: system(tools),
    tools,
    toolMap: toolMapOf(tools, outputTool),
    concurrency: validated.concurrency,
    policy: validated.policy,
    hooks: validated.hooks,
    maxTurns: validated.maxTurns,
    maxTokens: validated.maxTokens,
    abortGraceMs: validated.abortGraceMs,
    toolTimeoutMs: o.toolTimeoutMs,
    canPause: tools.some((definition) => definition.needsApproval !== undefined),
    request: requestOf(o, model, system(tools), tools, validated.maxTokens, serverEditing),
    temperature: o.temperature,
    stream: o.stream !== false,
    includePartialMessages: o.includePartialMessages === true,
    onTrace: o.onTrace,
    steering,
    outputSettings,
    pricing: o.pricing,
    context,
    contextWindow,
  });
  /**
   * The runtime over `fixed` tools, and, with tool sources, a `withSources` that resolves them
   * (before every model call) into a runtime over all tools, rebuilt only when a source's
   * list changed.
   */
  const runtimeOver = (fixed: readonly AnyToolDefinition[]): AgentRuntime => {
    if (sources.length === 0) return makeRuntime(fixed);
    let last:
      | { lists: readonly (readonly AnyToolDefinition[])[]; runtime: AgentRuntime }
      | undefined;
    const withSources = async (signal: AbortSignal): Promise<AgentRuntime> => {
      const lists = await Promise.all(sources.map((source) => resolveSource(source, signal)));
      if (last !== undefined && lists.every((list, index) => list === last!.lists[index])) {
        return last.runtime;
      }
      const all = [...fixed, ...lists.flat()];
      assertUniqueAcrossSources(fixed, sources, lists);
      const resolved: AgentRuntime = { ...makeRuntime(all), withSources };
      last = { lists, runtime: resolved };
      return resolved;
    };
    return { ...makeRuntime(fixed), withSources };
  };
  if (builtinNames.length === 0) runtime = runtimeOver(userTools);

  // Built-in tools load on first use, so agents without them never import node:fs code.
  const getRuntime = (): AgentRuntime | Promise<AgentRuntime> => {
    if (runtime !== undefined) return runtime;
    pending ??= import("@lattice/tools/builtin").then(({ builtinTools }) => {
      const builtins = builtinTools({
        tools: builtinNames,
        cwd: o.cwd ?? process.cwd(),
        ...(o.additionalDirectories !== undefined
          ? { additionalDirectories: o.additionalDirectories }
          : {}),
        ...(o.allowHardLinks !== undefined ? { allowHardLinks: o.allowHardLinks } : {}),
      });
      runtime = runtimeOver([...userTools, ...builtins]);
      return runtime;
    });
    return pending;
  };
  return { name: o.name, model, provider, getRuntime, sources, outputSettings };
}

/** A source's tools, or an error that names the source. */
async function resolveSource(
  source: ToolSource,
  signal: AbortSignal,
): Promise<readonly AnyToolDefinition[]> {
  const tools = await source.tools(signal);
  if (!Array.isArray(tools)) {
    throw new LatticeError(
      "tool_source_failed",
      `The tool source "${source.name}" returned ${describeValue(tools)} from tools(); a source returns an array of tool definitions.`,
    );
  }
  return tools;
}

/** Two tools of one name, across the agent's tools and its sources, cannot be told apart. */
function assertUniqueAcrossSources(
  fixed: readonly AnyToolDefinition[],
  sources: readonly ToolSource[],
  lists: readonly (readonly AnyToolDefinition[])[],
): void {
  const owner = new Map<string, string>();
  for (const definition of fixed) owner.set(definition.name, "the agent's own tools");
  lists.forEach((list, index) => {
    for (const definition of list) {
      const where = `the tool source "${sources[index]!.name}"`;
      const first = owner.get(definition.name);
      if (first !== undefined) {
        throw new LatticeError(
          "tool_name_conflict",
          `Two tools are named "${definition.name}": one from ${first}, one from ${where}. The model could not tell them apart; rename one (an MCP source takes a prefix option).`,
        );
      }
      owner.set(definition.name, where);
    }
  });
}

/** The part of every model request that does not change during a run. */
function requestOf(
  o: AgentOptions,
  model: string,
  system: string | undefined,
  tools: readonly AnyToolDefinition[],
  maxTokens: number,
  serverEditing: AnthropicContextManagement | undefined,
): Omit<ModelRequest, "messages" | "signal"> {
  // Plain data: the provider never sees handlers or schemas, only what the model reads.
  const specs: ModelToolSpec[] = tools.map((definition) =>
    definition.strict !== undefined
      ? {
          name: definition.name,
          description: definition.description,
          inputSchema: definition.inputSchema,
          strict: definition.strict,
        }
      : {
          name: definition.name,
          description: definition.description,
          inputSchema: definition.inputSchema,
        },
  );
  return {
    model,
    ...(system !== undefined ? { system } : {}),
    ...(specs.length > 0 ? { tools: specs } : {}),
    maxTokens,
    ...(o.stream === false ? { stream: false } : {}),
    ...(o.temperature !== undefined ? { temperature: o.temperature } : {}),
    ...(o.toolChoice !== undefined ? { toolChoice: o.toolChoice } : {}),
    ...(o.stopSequences !== undefined ? { stopSequences: [...o.stopSequences] } : {}),
    ...(o.promptCaching !== undefined ? { promptCaching: o.promptCaching } : {}),
    ...(o.thinking !== undefined ? { thinking: { budgetTokens: o.thinking.budgetTokens } } : {}),
    ...(o.reasoningEffort !== undefined ? { reasoningEffort: o.reasoningEffort } : {}),
    ...(serverEditing !== undefined ? { contextManagement: serverEditing } : {}),
  };
}

function validateBuiltinNames(options: AgentOptions, flavor: Flavor): readonly BuiltinToolName[] {
  const names = options.builtinTools;
  if (names === undefined) return [];
  if (flavor === "bare") {
    throw new InvalidOptionError(
      "AgentOptions:",
      "builtinTools",
      "is not available in createBareAgent(), which adds nothing to your tools. Use createAgent(), or pass the tools from @lattice/tools/builtin yourself.",
    );
  }
  const allowed: readonly string[] = BUILTIN_TOOL_NAMES;
  if (!Array.isArray(names) || names.some((name) => !allowed.includes(name))) {
    throw new InvalidOptionError(
      "AgentOptions:",
      "builtinTools",
      `must list built-in tool names from ${allowed.join(", ")}; received ${describeValue(names)}.`,
    );
  }
  const cwd = options.cwd ?? process.cwd();
  let isDirectory = false;
  try {
    isDirectory = statSync(cwd).isDirectory();
  } catch {
    isDirectory = false;
  }
  if (!isDirectory) {
    throw new InvalidOptionError(
      "AgentOptions:",
      "cwd",
      `must be an existing directory for the built-in tools, received ${describeValue(cwd)}. Create it first or pass another cwd.`,
    );
  }
  return names;
}
