/** A JSON Schema node, as a plain object. */
type SchemaNode = { [keyword: string]: unknown };

/**
 * Constraints the Messages API's structured outputs do not accept, whatever their value.
 * (`minItems` is accepted with 0 or 1 only, see {@link isUnsupported}.)
 */
const UNSUPPORTED_KEYWORDS: ReadonlySet<string> = new Set([
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "maxItems",
]);

/** Keywords whose value is a map of names to subschemas. */
const SCHEMA_MAPS = ["properties", "$defs", "definitions"] as const;
/** Keywords whose value is a list of subschemas. */
const SCHEMA_LISTS = ["anyOf", "allOf", "prefixItems"] as const;

/**
 * Adapts a JSON Schema to the subset the Anthropic Messages API accepts for structured outputs
 * (`output_config.format.schema`): `$schema` is dropped; every object schema gets
 * `additionalProperties: false` (the only value the API takes; an object that allowed other
 * properties, such as a record, then takes none); the constraints the API refuses — `minimum`,
 * `maximum`, `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`, `maxLength`,
 * `maxItems`, and `minItems` other than 0 or 1 — are removed and appended to the node's
 * `description` (for example `"Age (minimum: 0, maximum: 150)"`), so the model still reads
 * them; `oneOf` becomes `anyOf`. Subschemas are adapted at every depth (`properties`, `items`,
 * `prefixItems`, `anyOf`, `allOf`, `$defs`, `definitions`); everything else is kept. The input
 * is not modified.
 *
 * The answer is then only as constrained as the subset: check it against the original schema
 * (Lattice's core does).
 *
 * @param schema - An object schema, for example from Zod's `toJSONSchema()`.
 * @returns A new schema; the input's nodes are never shared with it.
 */
export function toAnthropicOutputSchema(schema: { readonly [keyword: string]: unknown }): {
  [keyword: string]: unknown;
} {
  return subsetNode(schema as SchemaNode);
}

function subsetNode(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  const removed: string[] = [];
  for (const key of Object.keys(node)) {
    if (key === "$schema") continue;
    const value = node[key];
    if (isUnsupported(key, value)) {
      removed.push(`${key}: ${JSON.stringify(value)}`);
      continue;
    }
    out[key] = value;
  }
  for (const keyword of SCHEMA_MAPS) {
    const map = node[keyword];
    if (!isSchema(map)) continue;
    const mapped: SchemaNode = {};
    for (const name of Object.keys(map)) mapped[name] = subsetChild(map[name]);
    out[keyword] = mapped;
  }
  for (const keyword of SCHEMA_LISTS) {
    const list = node[keyword];
    if (Array.isArray(list)) out[keyword] = list.map(subsetChild);
  }
  const items = node.items;
  if (Array.isArray(items)) out.items = items.map(subsetChild);
  else if (isSchema(items)) out.items = subsetNode(items);
  if (Array.isArray(node.oneOf)) {
    const branches = node.oneOf.map(subsetChild);
    delete out.oneOf;
    if (Array.isArray(out.anyOf)) {
      out.allOf = [...(Array.isArray(out.allOf) ? out.allOf : []), { anyOf: branches }];
    } else {
      out.anyOf = branches;
    }
  }
  if (isObjectSchema(node)) out.additionalProperties = false;
  if (removed.length > 0) {
    const note = `(${removed.join(", ")})`;
    out.description =
      typeof out.description === "string" && out.description !== ""
        ? `${out.description} ${note}`
        : note;
  }
  return out;
}

function subsetChild(child: unknown): unknown {
  return isSchema(child) ? subsetNode(child) : child;
}

/** Whether `key: value` on a schema node is a constraint the API refuses. */
function isUnsupported(key: string, value: unknown): boolean {
  if (UNSUPPORTED_KEYWORDS.has(key)) return true;
  return key === "minItems" && value !== 0 && value !== 1;
}

function isSchema(value: unknown): value is SchemaNode {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * Whether a node describes objects: `type` is or includes `"object"`, or it has `properties`
 * and no `type`.
 */
function isObjectSchema(node: SchemaNode): boolean {
  const type = node.type;
  if (type === "object" || (Array.isArray(type) && type.includes("object"))) return true;
  return type === undefined && isSchema(node.properties);
}
