/** The longest tool name Anthropic and OpenAI accept. */
const MAX_TOOL_NAME_LENGTH = 64;

/**
 * The name the model sees for an MCP tool (M4): the prefix, then the server's tool name,
 * with every character outside `[a-zA-Z0-9_-]` replaced by `_`, cut to 64 characters.
 *
 * @param prefix - The resolved prefix (`"fs__"`, `""` for none).
 * @param toolName - The tool's name on the server.
 */
export function latticeToolName(prefix: string, toolName: string): string {
  const sanitized = `${prefix}${toolName}`.replace(/[^a-zA-Z0-9_-]/g, "_");
  const name = sanitized.slice(0, MAX_TOOL_NAME_LENGTH);
  return name === "" ? "_" : name;
}

/**
 * The first pair of server tools that end with one Lattice name, or `undefined`.
 *
 * @param names - `[serverName, latticeName]` pairs in list order.
 */
export function findNameCollision(
  names: readonly (readonly [serverName: string, latticeName: string])[],
): { readonly first: string; readonly second: string; readonly latticeName: string } | undefined {
  const seen = new Map<string, string>();
  for (const [serverName, latticeName] of names) {
    const first = seen.get(latticeName);
    if (first !== undefined) return { first, second: serverName, latticeName };
    seen.set(latticeName, serverName);
  }
  return undefined;
}
