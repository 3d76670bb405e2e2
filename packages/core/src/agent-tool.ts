import {
  createToolDefinition,
  InvalidOptionError,
  type NeedsApproval,
  type ToolContext,
  type ToolDefinition,
  type ToolHandlerResult,
} from "@lattice/tools";
import { assertKnownOptions, describeValue } from "@lattice/tools/internal";
import { agentToolInput, choiceField, textField, validateToolOptions } from "./agent-tool-input.js";
import { callAgent, nextLink } from "./call-agent.js";
import { parentRunOf } from "./child-runs.js";
import { type AgentDefinition, isAgentDefinition } from "./define-agent.js";
import { assertMailbox, type Mailbox, type MailboxMessage } from "./mailbox.js";
import { createMemberRuntime } from "./member-runtime.js";
import { HandoffError } from "./multi-agent-errors.js";
import { prefixedRandomId } from "./random-id.js";

/**
 * How an agent tool hands a task to its member: `"call"` runs the member to completion inside
 * the tool call and answers with its result; `"handoff"` posts the task to the member's
 * mailbox and answers at once with a receipt.
 */
export type AgentToolMode = "call" | "handoff";

/** What the model sends to a tool made by {@link agentTool}. */
export interface AgentToolInput {
  /** The task for the member, written as a complete request. */
  readonly task: string;
  /** `"call"` (the default when offered) or `"handoff"`. */
  readonly mode?: AgentToolMode | undefined;
}

/**
 * The options of {@link agentTool}. Checked strictly (T31): an unknown key throws with the
 * prefix `agentTool("<name>"):`.
 */
export interface AgentToolOptions {
  /** The tool's name. Default: the definition's name. */
  readonly name?: string;
  /** The tool's description for the model. Default: the definition's description, plus how the modes work. */
  readonly description?: string;
  /**
   * The modes the model may choose. Default `["call", "handoff"]`. With one mode, the input
   * has no `mode` field. The default mode is `"call"` when offered.
   */
  readonly modes?: readonly AgentToolMode[];
  /**
   * Where handoffs go. Default: the mailbox of the team the run belongs to. A handoff with
   * neither answers `is_error`.
   */
  readonly mailbox?: Mailbox;
  /** The deepest chain of agents this tool may extend. Default: the team's, else {@link @lattice/core!DEFAULT_MAX_DEPTH}. */
  readonly maxDepth?: number;
  /** Host-owned annotations, passed through unchanged to `ToolDefinition.metadata` (T30). */
  readonly metadata?: Record<string, unknown>;
  /**
   * Calls need a person's decision before the agent runs (R13): `true`, or a function of the
   * call's input. The run pauses instead, as for any tool with `needsApproval`.
   */
  readonly needsApproval?: NeedsApproval<AgentToolInput>;
  /**
   * The call's time limit in milliseconds (R20, R21): at the deadline the child run is
   * aborted and the call gets an `is_error` "timed out" result. Default: the agent's
   * `toolTimeoutMs`.
   */
  readonly timeoutMs?: number;
}

const AGENT_TOOL_OPTION_KEYS: ReadonlySet<string> = new Set([
  "name",
  "description",
  "modes",
  "mailbox",
  "maxDepth",
  "metadata",
  "needsApproval",
  "timeoutMs",
]);
const ALL_MODES: readonly AgentToolMode[] = ["call", "handoff"];

/**
 * Makes a tool of kind `"agent_tool"` that hands a task to another agent (T23, T30–T32).
 *
 * Input `{ task, mode? }`:
 * - `"call"` runs the member to completion inside the call, with the parent's provider and
 *   credentials unless its definition sets its own, the parent's AbortSignal (aborting the
 *   parent aborts it) and its own `maxTurns`. The tool_result is the member's result text
 *   (`is_error` when its run failed); its messages reach the parent's stream with
 *   `parentToolUseId` set to this call; its usage is added to the parent's result.
 * - `"handoff"` posts `{ id, kind: "task", from, to, task, createdAt, chain }` to the member's
 *   mailbox and answers at once with a receipt. In a team, the member then runs the task and
 *   its result comes back to the sender as a reply. A batch the policy refuses runs no
 *   handler, so it posts nothing (T25).
 *
 * Both modes refuse (with an `is_error` result) a chain of agents deeper than `maxDepth`.
 * Handoff calls may overlap other calls of a batch; call-mode calls run alone.
 *
 * @example
 * ```ts
 * const researcher = defineAgent({ name: "researcher", description: "Finds sources", tools: [search] });
 * const lead = createAgent({ model: "claude-sonnet-4-6", tools: [agentTool(researcher, { modes: ["call"] })] });
 * ```
 *
 * @param definition - The member, from `defineAgent`.
 * @param options - {@link AgentToolOptions}.
 * @returns A frozen tool definition named after the member unless `name` is given; `metadata` only when given.
 * @throws `UnknownOptionError` for an unknown option (`agentTool("<name>"): unknown option ...`).
 * @throws `InvalidOptionError` for a bad option value or a value that is not a definition.
 */
export function agentTool(
  definition: AgentDefinition,
  options?: AgentToolOptions,
): ToolDefinition<AgentToolInput> {
  const label = JSON.stringify(
    String(
      (options as { name?: unknown } | undefined)?.name ??
        (definition as { name?: unknown } | undefined)?.name,
    ),
  );
  const prefix = `agentTool(${label}):`;
  assertKnownOptions(options, AGENT_TOOL_OPTION_KEYS, prefix);
  if (!isAgentDefinition(definition)) {
    throw new InvalidOptionError(
      prefix,
      "definition",
      `must be an agent definition made with defineAgent({ name, ... }), received ${describeValue(definition)}.`,
    );
  }
  const o = options ?? {};
  const modes = validateModes(o.modes, prefix);
  if (o.mailbox !== undefined) assertMailbox(o.mailbox, prefix);
  const maxDepth = validateMaxDepth(o.maxDepth, prefix);
  if (o.name !== undefined && typeof o.name !== "string") {
    throw new InvalidOptionError(
      prefix,
      "name",
      `must be a string, received ${describeValue(o.name)}.`,
    );
  }
  if (o.description !== undefined && typeof o.description !== "string") {
    throw new InvalidOptionError(
      prefix,
      "description",
      `must be a string, received ${describeValue(o.description)}.`,
    );
  }
  validateToolOptions(prefix, o);
  const member = createMemberRuntime(definition);
  const memberName = definition.name;
  const defaultMode: AgentToolMode = modes.includes("call") ? "call" : "handoff";
  const { schema, inputSchema } = agentToolInput<AgentToolInput>({
    task: textField(
      `The task for ${memberName}: a complete request, with everything it needs to know.`,
    ),
    ...(modes.length > 1
      ? {
          mode: choiceField(
            modes,
            `"call" (default) waits for ${memberName}'s answer; "handoff" gives ${memberName} the task to do on its own and returns at once (its result comes back later as a reply).`,
            true,
          ),
        }
      : {}),
  });

  const handler = async (
    input: AgentToolInput,
    context: ToolContext,
  ): Promise<ToolHandlerResult> => {
    const mode = input.mode ?? defaultMode;
    if (mode === "call") return callAgent(member, input.task, context, prefix, maxDepth);
    return handOff(memberName, input.task, context, prefix, o.mailbox, maxDepth);
  };

  return createToolDefinition({
    name: o.name ?? memberName,
    description: o.description ?? describeAgentTool(definition, modes),
    schema,
    inputSchema,
    handler,
    kind: "agent_tool",
    ...(o.needsApproval !== undefined ? { needsApproval: o.needsApproval } : {}),
    ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
    isConcurrencySafe: (input) => (input.mode ?? defaultMode) === "handoff",
    ...(o.metadata !== undefined ? { metadata: o.metadata } : {}),
  });
}

/**
 * Posts a task to a member's mailbox and returns the receipt. Internal.
 *
 * @throws {@link HandoffError} without a mailbox; {@link AgentDepthError} for a chain too deep.
 */
async function handOff(
  to: string,
  task: string,
  context: ToolContext,
  prefix: string,
  ownMailbox: Mailbox | undefined,
  maxDepth: number | undefined,
): Promise<ToolHandlerResult> {
  const parent = parentRunOf(context);
  const mailbox = ownMailbox ?? parent?.mailbox;
  if (mailbox === undefined) {
    throw new HandoffError(
      "mailbox_unavailable",
      `${prefix} cannot hand off to "${to}": no mailbox is configured. Run the agents in a team (createTeam({ members })), or give the tool a mailbox: agentTool(${to}, { mailbox: createInMemoryMailbox() }). Use mode "call" to get the answer directly.`,
    );
  }
  const link = nextLink(prefix, parent, to, maxDepth);
  const message: MailboxMessage = {
    id: prefixedRandomId("mail_"),
    kind: "task",
    from: parent?.agentName ?? "user",
    to,
    task,
    createdAt: new Date().toISOString(),
    chain: link.chain,
  };
  await mailbox.post(message);
  return {
    content: `Handed off to "${to}" (message ${message.id}). "${to}" works on it separately; when it finishes, its result is sent back to you as a reply. Do not wait for it in this turn.`,
  };
}

function describeAgentTool(definition: AgentDefinition, modes: readonly AgentToolMode[]): string {
  const what = definition.description ?? `Gives a task to the agent "${definition.name}".`;
  if (modes.length > 1) {
    return `${what}\nmode "call" (default) runs ${definition.name} now and returns its answer; mode "handoff" posts the task for ${definition.name} to do on its own and returns at once.`;
  }
  return modes[0] === "call"
    ? `${what}\nRuns ${definition.name} on the task and returns its answer.`
    : `${what}\nPosts the task for ${definition.name} to do on its own and returns at once; its result comes back later as a reply.`;
}

function validateModes(modes: unknown, prefix: string): readonly AgentToolMode[] {
  if (modes === undefined) return ALL_MODES;
  if (
    !Array.isArray(modes) ||
    modes.length === 0 ||
    modes.some((mode) => !ALL_MODES.includes(mode)) ||
    new Set(modes).size !== modes.length
  ) {
    throw new InvalidOptionError(
      prefix,
      "modes",
      `must be a non-empty list of distinct modes from "call", "handoff", received ${describeValue(modes)}.`,
    );
  }
  return ALL_MODES.filter((mode) => modes.includes(mode));
}

/**
 * Checks an optional `maxDepth`. Internal.
 *
 * @throws `InvalidOptionError` unless it is a non-negative integer.
 */
export function validateMaxDepth(value: unknown, prefix: string): number | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "number" || !Number.isInteger(value) || value < 0) {
    throw new InvalidOptionError(
      prefix,
      "maxDepth",
      `must be a non-negative integer (how many agents deep a chain may go), received ${describeValue(value)}.`,
    );
  }
  return value;
}
