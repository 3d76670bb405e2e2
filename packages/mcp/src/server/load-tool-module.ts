import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { isAgentDefinition } from "@lattice/core";
import { type AnyToolDefinition, LatticeError } from "@lattice/tools";
import { describeValue } from "@lattice/tools/internal";
import type { ServeMcpAgent } from "./serve-mcp-options.js";
import { isAgent } from "./served-agent-tool.js";
import { isToolDefinition } from "./served-catalogue.js";

/** What `lattice-mcp serve` found in a module. */
export interface LoadedToolModule {
  /** The tools to serve. */
  readonly tools: readonly AnyToolDefinition[];
  /** The agents to serve. */
  readonly agents: readonly ServeMcpAgent[];
}

/**
 * Imports a module and finds what `lattice-mcp serve` serves from it. The contract:
 *
 * - A **default export** decides alone: an array of tools and agents, or a single tool or
 *   agent. Every element must be one.
 * - Without a default export, **every named export that is a tool or an agent** is served
 *   (in name order); other exports (helpers, policies, constants) are left alone.
 *
 * A tool is what `tool()` or `createToolDefinition()` returns; an agent is an `Agent` from
 * `createAgent` (with a `name`) or a `defineAgent` definition that names its model.
 *
 * @param specifier - A path (relative to `cwd`) or a `file:` URL.
 * @param cwd - Where relative paths start. Default: `process.cwd()`.
 * @throws `LatticeError` `mcp_module_invalid` when the module cannot be imported, a default
 *   export holds something else, or nothing servable is exported.
 */
export async function loadToolModule(
  specifier: string,
  cwd: string = process.cwd(),
): Promise<LoadedToolModule> {
  const url = specifier.startsWith("file:")
    ? specifier
    : pathToFileURL(resolve(cwd, specifier)).href;
  let namespace: Record<string, unknown>;
  try {
    namespace = (await import(url)) as Record<string, unknown>;
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const hint = /\.[cm]?tsx?$/.test(specifier)
      ? " To serve a TypeScript module, run the bin through a loader (node --import tsx) or compile the module first."
      : "";
    throw new LatticeError(
      "mcp_module_invalid",
      `lattice-mcp: cannot import "${specifier}": ${reason}.${hint}`,
      { cause: error },
    );
  }
  const found: LoadedToolModule = { tools: [], agents: [] };
  if ("default" in namespace && namespace.default !== undefined) {
    const exported = namespace.default;
    const items = Array.isArray(exported) ? exported : [exported];
    items.forEach((item, index) => {
      if (!add(found, item)) {
        const where = Array.isArray(exported) ? `default export [${index}]` : "default export";
        throw new LatticeError(
          "mcp_module_invalid",
          `lattice-mcp: the ${where} of "${specifier}" is ${describeValue(item)}, not a tool or an agent. A default export must be a tool, an agent, or an array of them.`,
        );
      }
    });
  } else {
    for (const name of Object.keys(namespace).sort()) add(found, namespace[name]);
  }
  if (found.tools.length === 0 && found.agents.length === 0) {
    throw new LatticeError(
      "mcp_module_invalid",
      `lattice-mcp: "${specifier}" exports no tool and no agent. Export tools made with tool() (export const search = tool(...)) or agents, or a default array of them.`,
    );
  }
  return found;
}

function add(found: LoadedToolModule, value: unknown): boolean {
  if (isToolDefinition(value)) {
    (found.tools as AnyToolDefinition[]).push(value);
    return true;
  }
  if (isAgentDefinition(value) || isAgent(value)) {
    (found.agents as ServeMcpAgent[]).push(value as ServeMcpAgent);
    return true;
  }
  return false;
}
