import type { AnyToolDefinition } from "@lattice/tools";
import type { ToolAnnotations } from "@modelcontextprotocol/server";

/**
 * Whether a tool's `isConcurrencySafe` is constant true, the condition for announcing it as
 * `readOnlyHint: true` over MCP (M11).
 *
 * The rule: the function declares no parameter (`isConcurrencySafe: () => true`, the form the
 * built-in Read, LS, Glob and Grep use) and returns `true` when called. A function that takes
 * the input (`(input) => input.path.startsWith("/tmp")`) decides per call and gives no hint,
 * because an MCP annotation describes the tool, not one call; nor does a function that throws.
 * Probing such a function with sample inputs could not prove it constant, so none is tried.
 *
 * @param definition - A Lattice tool.
 */
export function isConstantlyConcurrencySafe(definition: AnyToolDefinition): boolean {
  const rule = definition.isConcurrencySafe;
  if (typeof rule !== "function" || rule.length !== 0) return false;
  try {
    return (rule as () => unknown).call(definition) === true;
  } catch {
    return false;
  }
}

/**
 * The MCP annotations of a served tool: `readOnlyHint: true` when its `isConcurrencySafe` is
 * constant true, then the host's own annotations for it, which win.
 *
 * @param definition - A Lattice tool.
 * @param overrides - The host's annotations for this tool, from `ServeMcpDefinition.annotations`.
 * @returns The annotations, or `undefined` when there are none.
 */
export function toolAnnotations(
  definition: AnyToolDefinition,
  overrides: ToolAnnotations | undefined,
): ToolAnnotations | undefined {
  const derived: ToolAnnotations = isConstantlyConcurrencySafe(definition)
    ? { readOnlyHint: true }
    : {};
  const merged = { ...derived, ...overrides };
  return Object.keys(merged).length === 0 ? undefined : merged;
}
