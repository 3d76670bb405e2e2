import { type AnyToolDefinition, runTool, type ToolResult, toolResultText } from "@lattice/tools";

/** Test helper: the definition named `name` among `tools`; throws when there is none. */
export function toolNamed(tools: readonly AnyToolDefinition[], name: string): AnyToolDefinition {
  const found = tools.find((tool) => tool.name === name);
  if (found === undefined) {
    throw new Error(`no tool "${name}" among ${tools.map((tool) => tool.name).join(", ")}`);
  }
  return found;
}

/** Test helper: validates and runs one call the way the scheduler does (`runTool`). */
export async function call(
  tools: readonly AnyToolDefinition[],
  name: string,
  input: unknown,
  signal: AbortSignal = new AbortController().signal,
): Promise<ToolResult & { readonly text: string }> {
  const definition = toolNamed(tools, name);
  const result = await runTool(definition, input, {
    signal,
    toolUseId: `toolu_${name}`,
    toolName: name,
  });
  return { ...result, text: toolResultText(result) };
}
