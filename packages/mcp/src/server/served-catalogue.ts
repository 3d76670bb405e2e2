import type { Agent } from "@lattice/core";
import { type AnyToolDefinition, InvalidOptionError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { Tool, ToolAnnotations } from "@modelcontextprotocol/server";
import type { ServeMcpDefinition } from "./serve-mcp-options.js";
import { servedAgentTool } from "./served-agent-tool.js";
import { toolAnnotations } from "./tool-annotations.js";

/** One MCP tool of a served catalogue: the Lattice tool that runs it and its `tools/list` entry. */
export interface ServedTool {
  /** The Lattice tool (an agent's is the tool that runs it). */
  readonly definition: AnyToolDefinition;
  /** What `tools/list` says about it. */
  readonly listing: Tool;
}

/** Everything a `serveMcp` server serves, prepared once and shared by every connection. */
export interface ServedCatalogue {
  /** `serverInfo.name`. */
  readonly name: string;
  /** `serverInfo.version`. */
  readonly version: string;
  /** MCP `instructions`, when given. */
  readonly instructions: string | undefined;
  /** The tools by name, tools first, then agents, in the order given. */
  readonly tools: ReadonlyMap<string, ServedTool>;
  /** Agents made here from definitions: released when the server closes. */
  readonly ownedAgents: readonly Agent[];
}

const PREFIX = "serveMcp(definition):";

/**
 * Prepares what a server serves: each tool's JSON Schema and annotations, each agent's tool.
 * Expects a definition `checkServeMcpArguments` accepted.
 *
 * @param definition - The server's definition.
 * @throws `InvalidOptionError` for a `tools` entry that is not a Lattice tool, a bad agent
 *   (see `servedAgentTool`), two tools or agents with one name, or `annotations` for a tool
 *   that is not served.
 */
export function servedCatalogue(definition: ServeMcpDefinition): ServedCatalogue {
  const entries: AnyToolDefinition[] = [];
  (definition.tools ?? []).forEach((tool, index) => {
    if (!isToolDefinition(tool)) {
      throw new InvalidOptionError(
        PREFIX,
        `tools[${index}]`,
        `must be a Lattice tool (from tool() or createToolDefinition()), received ${describeValue(tool)}. Serve agents through "agents".`,
      );
    }
    entries.push(tool);
  });
  const ownedAgents: Agent[] = [];
  (definition.agents ?? []).forEach((entry, index) => {
    const served = servedAgentTool(entry, index);
    if (served.owned) ownedAgents.push(served.agent);
    entries.push(served.tool);
  });

  const annotations = definition.annotations ?? {};
  const tools = new Map<string, ServedTool>();
  for (const tool of entries) {
    if (tools.has(tool.name)) {
      throw new InvalidOptionError(
        PREFIX,
        "tools",
        `holds two tools or agents named "${tool.name}"; MCP tool names must be unique. Rename one of them.`,
      );
    }
    tools.set(tool.name, { definition: tool, listing: listing(tool, annotations[tool.name]) });
  }
  for (const name of Object.keys(annotations)) {
    if (!tools.has(name)) {
      throw new InvalidOptionError(
        PREFIX,
        `annotations.${name}`,
        `names no served tool. Served: ${[...tools.keys()].map((known) => `"${known}"`).join(", ") || "none"}.`,
      );
    }
  }
  return {
    name: definition.name,
    version: definition.version,
    instructions: definition.instructions,
    tools,
    ownedAgents,
  };
}

/** Whether a value is a Lattice tool definition. */
export function isToolDefinition(value: unknown): value is AnyToolDefinition {
  if (value === null || typeof value !== "object") return false;
  const tool = value as Partial<Record<keyof AnyToolDefinition, unknown>>;
  return (
    typeof tool.name === "string" &&
    typeof tool.description === "string" &&
    typeof tool.handler === "function" &&
    tool.inputSchema !== null &&
    typeof tool.inputSchema === "object" &&
    tool.schema !== null &&
    typeof tool.schema === "object" &&
    "~standard" in tool.schema
  );
}

function listing(tool: AnyToolDefinition, overrides: ToolAnnotations | undefined): Tool {
  const annotations = toolAnnotations(tool, overrides);
  return {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputSchema as Tool["inputSchema"],
    ...(annotations !== undefined ? { annotations } : {}),
  };
}
