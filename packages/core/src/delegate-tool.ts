import {
  createToolDefinition,
  InvalidOptionError,
  type NeedsApproval,
  type ToolContext,
  type ToolDefinition,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { agentToolInput, choiceField, textField, validateToolOptions } from "./agent-tool-input.js";
import { callAgent } from "./call-agent.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { createMemberRuntime, type MemberRuntime } from "./member-runtime.js";

/** What the model sends to a tool made by {@link delegateTool}. */
export interface DelegateToolInput {
  /** The name of the agent to run: one of the tool's agents. */
  readonly agent: string;
  /** The task for it, written as a complete request. */
  readonly task: string;
}

/**
 * The options of {@link delegateTool}. Checked strictly (T31): an unknown key throws with the
 * prefix `delegateTool("<name>"):`.
 */
export interface DelegateToolOptions {
  /** The tool's name, for example `"delegate"`. */
  readonly name: string;
  /** The tool's description for the model. Default: a list of the agents and what they do. */
  readonly description?: string;
  /** The agents the model may choose from, from `defineAgent`; names must be unique. */
  readonly agents: readonly AgentDefinition[];
  /** Host-owned annotations, passed through unchanged to `ToolDefinition.metadata` (T30). */
  readonly metadata?: Record<string, unknown>;
  /**
   * Calls need a person's decision before the agent runs (R13): `true`, or a function of the
   * call's input. The run pauses instead, as for any tool with `needsApproval`.
   */
  readonly needsApproval?: NeedsApproval<DelegateToolInput>;
  /**
   * The call's time limit in milliseconds (R20, R21): at the deadline the child run is
   * aborted and the call gets an `is_error` "timed out" result. Default: the agent's
   * `toolTimeoutMs`.
   */
  readonly timeoutMs?: number;
}

const DELEGATE_TOOL_OPTION_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "agents",
  "metadata",
  "needsApproval",
  "timeoutMs",
]);

/**
 * Makes one tool of kind `"agent_tool"` that runs the agent the model chooses. Its input is
 * `{ agent, task }`, with `agent` an enum of the definitions' names; the chosen agent runs in
 * "call" mode, exactly as {@link agentTool} runs it (parent's provider and signal, messages
 * marked with `parentToolUseId`, usage added to the parent, `maxDepth` guard).
 *
 * @example
 * ```ts
 * const delegate = delegateTool({ name: "delegate", agents: [researcher, writer] });
 * ```
 *
 * @param options - {@link DelegateToolOptions}.
 * @returns A frozen tool definition; `metadata` only when given.
 * @throws `UnknownOptionError` for an unknown option (`delegateTool("<name>"): unknown option ...`).
 * @throws `InvalidOptionError` for no agents, a value that is not a definition, or two agents with one name.
 */
export function delegateTool(options: DelegateToolOptions): ToolDefinition<DelegateToolInput> {
  const prefix = `delegateTool(${JSON.stringify(String((options as { name?: unknown } | undefined)?.name))}):`;
  if (options === null || typeof options !== "object" || Array.isArray(options)) {
    throw new InvalidOptionError(
      prefix,
      "options",
      `must be an object { name, agents, description?, metadata? }, received ${describeValue(options)}.`,
    );
  }
  assertKnownOptions(options, DELEGATE_TOOL_OPTION_KEYS, prefix);
  if (typeof options.name !== "string") {
    throw new InvalidOptionError(
      prefix,
      "name",
      `is required: name the tool, for example name: "delegate"; received ${describeValue(options.name)}.`,
    );
  }
  if (options.description !== undefined && typeof options.description !== "string") {
    throw new InvalidOptionError(
      prefix,
      "description",
      `must be a string, received ${describeValue(options.description)}.`,
    );
  }
  validateToolOptions(prefix, options);
  const agents: unknown = options.agents;
  if (!Array.isArray(agents) || agents.length === 0) {
    throw new InvalidOptionError(
      prefix,
      "agents",
      `must be a non-empty array of definitions from defineAgent(), received ${describeValue(agents)}.`,
    );
  }
  const members = new Map<string, MemberRuntime>();
  agents.forEach((definition: unknown, index) => {
    if (!isAgentDefinition(definition)) {
      throw new InvalidOptionError(
        prefix,
        `agents[${index}]`,
        `is not an agent definition (received ${describeValue(definition)}). Make agents with defineAgent({ name, ... }).`,
      );
    }
    if (members.has(definition.name)) {
      throw new InvalidOptionError(
        prefix,
        "agents",
        `holds two agents named "${definition.name}". Agent names must be unique; rename one of them.`,
      );
    }
    members.set(definition.name, createMemberRuntime(definition));
  });
  const { schema, inputSchema } = agentToolInput<DelegateToolInput>({
    agent: choiceField([...members.keys()], "Which agent runs the task."),
    task: textField(
      "The task for the agent: a complete request, with everything it needs to know.",
    ),
  });
  const description =
    options.description ??
    `Runs one of these agents on a task and returns its answer:\n${[...members.values()]
      .map(
        ({ definition }) => `- ${definition.name}: ${definition.description ?? "(no description)"}`,
      )
      .join("\n")}`;

  return createToolDefinition({
    name: options.name,
    description,
    schema,
    inputSchema,
    handler: (input, context: ToolContext) =>
      callAgent(members.get(input.agent) as MemberRuntime, input.task, context, prefix, undefined),
    kind: "agent_tool",
    ...(options.needsApproval !== undefined ? { needsApproval: options.needsApproval } : {}),
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.metadata !== undefined ? { metadata: options.metadata } : {}),
  });
}
