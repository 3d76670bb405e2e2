import {
  type AnyToolDefinition,
  runTool,
  type ToolProgress,
  type ToolResult,
  toolResultText,
} from "@lattice/tools";

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

/**
 * Test helper: runs one call as an agent's run does, with a trace: the result's text and the
 * progress reports that reached the trace.
 *
 * @param runId - The run the call belongs to; none when omitted (a call outside a run).
 */
export async function callTraced(
  tools: readonly AnyToolDefinition[],
  name: string,
  input: unknown,
  runId?: string,
): Promise<{ readonly text: string; readonly reports: readonly ToolProgress[] }> {
  const reports: ToolProgress[] = [];
  const result = await runTool(toolNamed(tools, name), input, {
    signal: new AbortController().signal,
    toolUseId: `toolu_${name}`,
    toolName: name,
    ...(runId !== undefined
      ? { run: { runId, sessionId: runId, agentName: "agent", depth: 0 } }
      : {}),
    reportProgress: (progress) => reports.push(progress),
  });
  return { text: toolResultText(result), reports };
}
