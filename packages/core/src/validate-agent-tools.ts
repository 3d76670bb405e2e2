import {
  type AnyToolDefinition,
  InvalidOptionError,
  isToolSource,
  type ToolSource,
} from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import { AGENT_OPTIONS_PREFIX } from "./agent-options.js";

/**
 * Throws when two tools share a name: the model could not tell them apart.
 *
 * @param tools - The tools in the order they will be offered.
 */
export function assertUniqueToolNames(tools: readonly AnyToolDefinition[]): void {
  const seen = new Set<string>();
  for (const definition of tools) {
    if (seen.has(definition.name)) {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        "tools",
        `holds two tools named "${definition.name}". Tool names must be unique; rename one of them.`,
      );
    }
    seen.add(definition.name);
  }
}

/**
 * Checks the `tools` option: an array of tool definitions and tool sources, each source listed
 * once, no two definitions with one name.
 *
 * @returns The definitions and the sources, each in the order given.
 * @throws {@link InvalidOptionError} for another value, an entry that is neither, a repeated source or name.
 */
export function validateAgentTools(tools: unknown): {
  readonly definitions: readonly AnyToolDefinition[];
  readonly sources: readonly ToolSource[];
} {
  if (tools === undefined) return { definitions: [], sources: [] };
  if (!Array.isArray(tools)) {
    throw new InvalidOptionError(
      AGENT_OPTIONS_PREFIX,
      "tools",
      `must be an array of tools made with tool() and tool sources such as mcpServer(...), received ${describeValue(tools)}.`,
    );
  }
  const definitions: AnyToolDefinition[] = [];
  const sources: ToolSource[] = [];
  tools.forEach((entry: unknown, index) => {
    if (isToolSource(entry)) {
      if (sources.includes(entry)) {
        throw new InvalidOptionError(
          AGENT_OPTIONS_PREFIX,
          `tools[${index}]`,
          `is the tool source "${entry.name}" a second time. List each source once.`,
        );
      }
      sources.push(entry);
      return;
    }
    const d = entry as Partial<AnyToolDefinition> | null;
    if (
      d === null ||
      typeof d !== "object" ||
      typeof d.name !== "string" ||
      typeof d.handler !== "function" ||
      typeof d.inputSchema !== "object"
    ) {
      throw new InvalidOptionError(
        AGENT_OPTIONS_PREFIX,
        `tools[${index}]`,
        `is not a tool definition or a tool source (received ${describeValue(entry)}). Make tools with tool(name, description, schema, handler).`,
      );
    }
    definitions.push(entry as AnyToolDefinition);
  });
  assertUniqueToolNames(definitions);
  return { definitions, sources };
}
