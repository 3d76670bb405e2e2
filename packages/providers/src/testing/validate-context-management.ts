/** The beta that unlocks `context_management` in the `anthropic-beta` header. */
export const CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27";

const EDIT_KEYS: Readonly<Record<string, ReadonlySet<string>>> = {
  clear_tool_uses_20250919: new Set([
    "type",
    "trigger",
    "keep",
    "clear_at_least",
    "clear_tool_inputs",
    "exclude_tools",
  ]),
  clear_thinking_20251015: new Set(["type", "keep"]),
};
const EDIT_TYPES = Object.keys(EDIT_KEYS)
  .map((type) => `'${type}'`)
  .join(", ");

/**
 * Checks a Messages API `context_management` value the way the API does (the SDK's
 * `BetaContextManagementConfig`): an object with an optional `edits` list (and nothing else),
 * each edit a `clear_tool_uses_20250919` (`trigger`: `{ type: "input_tokens" | "tool_uses",
 * value }`, `keep`: `{ type: "tool_uses", value }`, `clear_at_least`: `{ type: "input_tokens",
 * value }` or null, `clear_tool_inputs`: a boolean, a list of tool names or null,
 * `exclude_tools`: a list of tool names or null) or a `clear_thinking_20251015` (`keep`:
 * `"all"`, `{ type: "all" }` or `{ type: "thinking_turns", value }`), with no other field; every
 * `value` an integer ≥ 0. The `anthropic-beta` header must name
 * `context-management-2025-06-27`. `null` is accepted, as the SDK types allow it.
 *
 * @param value - The body's `context_management`, present.
 * @param betas - The request's `anthropic-beta` header, if any.
 * @returns The API-style error message, or `undefined` when valid.
 */
export function validateContextManagement(
  value: unknown,
  betas: string | undefined,
): string | undefined {
  if (value === null) return undefined;
  if (!hasBeta(betas, CONTEXT_MANAGEMENT_BETA)) {
    return `context_management: Extra inputs are not permitted. Context management is in beta: send the header anthropic-beta: ${CONTEXT_MANAGEMENT_BETA}.`;
  }
  if (!isRecord(value)) return "context_management: Input should be a valid dictionary";
  for (const key of Object.keys(value)) {
    if (key !== "edits") return `context_management.${key}: Extra inputs are not permitted`;
  }
  const edits = value.edits;
  if (edits === undefined) return undefined;
  if (!Array.isArray(edits)) return "context_management.edits: Input should be a valid list";
  for (let index = 0; index < edits.length; index++) {
    const path = `context_management.edits.${index}`;
    const edit: unknown = edits[index];
    if (!isRecord(edit)) return `${path}: Input should be a valid dictionary`;
    const type = edit.type;
    const keys = typeof type === "string" ? EDIT_KEYS[type] : undefined;
    if (keys === undefined) {
      return `${path}: Input tag '${String(type)}' found using 'type' does not match any of the expected tags: ${EDIT_TYPES}`;
    }
    for (const key of Object.keys(edit)) {
      if (!keys.has(key)) return `${path}.${type}.${key}: Extra inputs are not permitted`;
    }
    const error =
      type === "clear_tool_uses_20250919"
        ? clearToolUsesError(edit, `${path}.${type}`)
        : clearThinkingError(edit, `${path}.${type}`);
    if (error !== undefined) return error;
  }
  return undefined;
}

function clearToolUsesError(edit: Record<string, unknown>, path: string): string | undefined {
  if (edit.trigger !== undefined) {
    const error = countError(edit.trigger, `${path}.trigger`, ["input_tokens", "tool_uses"]);
    if (error !== undefined) return error;
  }
  if (edit.keep !== undefined) {
    const error = countError(edit.keep, `${path}.keep`, ["tool_uses"]);
    if (error !== undefined) return error;
  }
  if (edit.clear_at_least !== undefined && edit.clear_at_least !== null) {
    const error = countError(edit.clear_at_least, `${path}.clear_at_least`, ["input_tokens"]);
    if (error !== undefined) return error;
  }
  const inputs = edit.clear_tool_inputs;
  if (inputs !== undefined && inputs !== null && typeof inputs !== "boolean") {
    if (!isStringList(inputs)) {
      return `${path}.clear_tool_inputs: Input should be a valid boolean or a list of strings`;
    }
  }
  const excluded = edit.exclude_tools;
  if (excluded !== undefined && excluded !== null && !isStringList(excluded)) {
    return `${path}.exclude_tools: Input should be a valid list of strings`;
  }
  return undefined;
}

function clearThinkingError(edit: Record<string, unknown>, path: string): string | undefined {
  const keep = edit.keep;
  if (keep === undefined || keep === "all") return undefined;
  if (isRecord(keep) && keep.type === "all") {
    for (const key of Object.keys(keep)) {
      if (key !== "type") return `${path}.keep.all.${key}: Extra inputs are not permitted`;
    }
    return undefined;
  }
  if (isRecord(keep) && keep.type === "thinking_turns") {
    return countError(keep, `${path}.keep`, ["thinking_turns"]);
  }
  return `${path}.keep: Input should be 'all', {"type": "all"} or {"type": "thinking_turns", "value": …}`;
}

/** Checks a `{ type, value }` count whose type is one of `types`. */
function countError(value: unknown, path: string, types: readonly string[]): string | undefined {
  if (!isRecord(value)) return `${path}: Input should be a valid dictionary`;
  if (typeof value.type !== "string" || !types.includes(value.type)) {
    return `${path}: Input tag '${String(value.type)}' found using 'type' does not match any of the expected tags: ${types.map((type) => `'${type}'`).join(", ")}`;
  }
  for (const key of Object.keys(value)) {
    if (key !== "type" && key !== "value") {
      return `${path}.${value.type}.${key}: Extra inputs are not permitted`;
    }
  }
  const count = value.value;
  if (count === undefined) return `${path}.${value.type}.value: Field required`;
  if (typeof count !== "number" || !Number.isInteger(count) || count < 0) {
    return `${path}.${value.type}.value: Input should be a valid integer greater than or equal to 0`;
  }
  return undefined;
}

/**
 * Whether a comma-separated `anthropic-beta` header names `beta`.
 *
 * @param header - The header's value, if any.
 * @param beta - The beta to look for.
 */
export function hasBeta(header: string | undefined, beta: string): boolean {
  if (header === undefined) return false;
  for (const item of header.split(",")) if (item.trim() === beta) return true;
  return false;
}

function isStringList(value: unknown): boolean {
  return Array.isArray(value) && value.every((item) => typeof item === "string");
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
