import { InvalidOptionError } from "@lattice/tools";
import type { AgentOptions } from "./agent-options.js";
import { validateAgentOptions } from "./validate-agent-options.js";

const DEFINITION: unique symbol = Symbol.for("lattice.agentDefinition");

/**
 * A validated, frozen agent definition: what `defineAgent` returns. `createAgent(definition)`
 * runs it; `agentTool`, `delegateTool` and teams use it to make members.
 */
export type AgentDefinition = Readonly<AgentOptions> & {
  /** The agent's name (required in a definition). */
  readonly name: string;
  readonly [DEFINITION]: true;
};

/**
 * Validates agent options once and freezes them, so one definition can be run by
 * `createAgent(definition)`, offered as a tool by `agentTool(definition)`, or joined to a
 * team. `model` and credentials may be left out: an agent tool then uses its parent's.
 *
 * @param options - {@link AgentOptions} with a `name`.
 * @returns A frozen {@link AgentDefinition}.
 * @throws `UnknownOptionError` for an unknown key (T31), with the `AgentOptions:` prefix.
 * @throws `InvalidOptionError` for a bad value, or a missing `name`.
 */
export function defineAgent(options: AgentOptions & { readonly name: string }): AgentDefinition {
  const validated = validateAgentOptions(options);
  if (validated.options.name === undefined) {
    throw new InvalidOptionError(
      "AgentOptions:",
      "name",
      'is required by defineAgent(): it names the agent\'s tool and its mailbox. Add name: "researcher" (letters, digits, _ or -).',
    );
  }
  const tools = Object.freeze([...validated.tools]);
  return Object.freeze({
    ...options,
    ...(options.tools !== undefined ? { tools } : {}),
    [DEFINITION]: true as const,
  }) as AgentDefinition;
}

/**
 * Whether a value was made by {@link defineAgent}.
 *
 * @param value - Any value.
 */
export function isAgentDefinition(value: unknown): value is AgentDefinition {
  return (
    typeof value === "object" &&
    value !== null &&
    (value as { [DEFINITION]?: unknown })[DEFINITION] === true
  );
}
