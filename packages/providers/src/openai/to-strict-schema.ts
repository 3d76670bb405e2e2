/** A JSON Schema node, as a plain object. */
type SchemaNode = { [keyword: string]: unknown };

/**
 * Adjusts a tool's JSON Schema for OpenAI strict function calling: every object gets
 * `additionalProperties: false` and lists all its properties in `required`; a property that was
 * optional becomes nullable (`type` gains `"null"`, or the schema is wrapped in
 * `anyOf: [schema, { type: "null" }]`). `$schema` is dropped. The input is not modified.
 *
 * Nulls the model then sends for optional properties are removed again by
 * {@link stripStrictNulls}, so handlers see the original optional shape.
 *
 * @param schema - The tool's input schema.
 */
export function toStrictSchema(schema: SchemaNode): SchemaNode {
  return strictNode(schema);
}

function strictNode(node: SchemaNode): SchemaNode {
  const out: SchemaNode = {};
  for (const key of Object.keys(node)) {
    if (key === "$schema") continue;
    out[key] = node[key];
  }
  const properties = node.properties as Record<string, SchemaNode> | undefined;
  if (isObjectSchema(node) && properties !== undefined) {
    const required = new Set(Array.isArray(node.required) ? (node.required as string[]) : []);
    const strictProperties: Record<string, SchemaNode> = {};
    for (const key of Object.keys(properties)) {
      const child = strictNode(properties[key]!);
      strictProperties[key] = required.has(key) ? child : nullable(child);
    }
    out.properties = strictProperties;
    out.required = Object.keys(properties);
    out.additionalProperties = false;
  } else if (isObjectSchema(node) && out.additionalProperties === undefined) {
    out.additionalProperties = false;
  }
  if (node.items !== undefined && typeof node.items === "object" && !Array.isArray(node.items)) {
    out.items = strictNode(node.items as SchemaNode);
  }
  for (const keyword of ["anyOf", "oneOf", "allOf"] as const) {
    const list = node[keyword];
    if (Array.isArray(list)) out[keyword] = list.map((item) => strictNode(item as SchemaNode));
  }
  if (Array.isArray(out.oneOf)) {
    out.anyOf = out.oneOf;
    delete out.oneOf;
  }
  for (const keyword of ["$defs", "definitions"] as const) {
    const defs = node[keyword] as Record<string, SchemaNode> | undefined;
    if (defs !== undefined && typeof defs === "object") {
      const mapped: Record<string, SchemaNode> = {};
      for (const key of Object.keys(defs)) mapped[key] = strictNode(defs[key]!);
      out[keyword] = mapped;
    }
  }
  return out;
}

function isObjectSchema(node: SchemaNode): boolean {
  const type = node.type;
  return type === "object" || (Array.isArray(type) && type.includes("object"));
}

function nullable(node: SchemaNode): SchemaNode {
  const type = node.type;
  if (typeof type === "string" && node.enum === undefined && node.const === undefined) {
    return type === "null" ? node : { ...node, type: [type, "null"] };
  }
  if (Array.isArray(type) && node.enum === undefined && node.const === undefined) {
    return type.includes("null") ? node : { ...node, type: [...type, "null"] };
  }
  if (Array.isArray(node.anyOf)) {
    return (node.anyOf as SchemaNode[]).some((item) => item.type === "null")
      ? node
      : { ...node, anyOf: [...(node.anyOf as SchemaNode[]), { type: "null" }] };
  }
  return { anyOf: [node, { type: "null" }] };
}
