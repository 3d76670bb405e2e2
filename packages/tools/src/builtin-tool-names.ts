/**
 * The names of the built-in tools, in the order the docs list them. Read, LS, Glob and Grep
 * only read and are concurrency-safe; Write, Edit and Bash change things and are not (T16);
 * WebFetch reads the web and is concurrency-safe (T41).
 * The tools themselves live in the Node-only subpath `@lattice/tools/builtin`; the names are
 * here so that agent options can be checked without loading them.
 */
export const BUILTIN_TOOL_NAMES = [
  "Read",
  "LS",
  "Glob",
  "Grep",
  "Write",
  "Edit",
  "Bash",
  "WebFetch",
] as const;

/** The name of one built-in tool: `"Read"`, `"LS"`, `"Glob"`, `"Grep"`, `"Write"`, `"Edit"`, `"Bash"` or `"WebFetch"`. */
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];
