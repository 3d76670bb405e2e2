/** A JSON Schema node, as a plain object. */
type SchemaNode = { [keyword: string]: unknown };

/**
 * Undoes the nullable rewrite of {@link toStrictSchema} on a model's input: a property that was
 * optional in the original schema and arrives as `null` is removed, at every depth (objects and
 * array items). The input is modified in place and returned.
 *
 * @param input - The parsed tool input.
 * @param schema - The tool's original (non-strict) input schema.
 */
export function stripStrictNulls(input: unknown, schema: SchemaNode): unknown {
  if (input === null || typeof input !== "object") return input;
  if (Array.isArray(input)) {
    const items = schema.items;
    if (items !== null && typeof items === "object" && !Array.isArray(items)) {
      for (const item of input) stripStrictNulls(item, items as SchemaNode);
    }
    return input;
  }
  const properties = schema.properties as Record<string, SchemaNode> | undefined;
  if (properties === undefined) return input;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  const record = input as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    const propertySchema = properties[key];
    if (propertySchema === undefined) continue;
    if (record[key] === null && !required.includes(key) && !allowsNull(propertySchema)) {
      delete record[key];
    } else {
      stripStrictNulls(record[key], propertySchema);
    }
  }
  return input;
}

function allowsNull(schema: SchemaNode): boolean {
  const type = schema.type;
  if (type === "null" || (Array.isArray(type) && type.includes("null"))) return true;
  return Array.isArray(schema.anyOf) && (schema.anyOf as SchemaNode[]).some(allowsNull);
}

/**
 * Undoes the nullable rewrite of {@link toStrictSchema} on a native output answer (see
 * `ModelRequest.output`): when `text` is a JSON object or array, the nulls strict mode made the
 * model send for optional properties are removed ({@link stripStrictNulls}) and, if any was,
 * the text is the JSON of what is left (compact). Otherwise, and for text that is not JSON (a
 * refusal, a cut-off answer), the text is returned unchanged.
 *
 * @param text - The answer's text.
 * @param schema - The output's original (non-strict) schema.
 */
export function stripStrictNullsFromText(text: string, schema: SchemaNode): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  if (parsed === null || typeof parsed !== "object") return text;
  const before = JSON.stringify(parsed);
  const after = JSON.stringify(stripStrictNulls(parsed, schema));
  return after === before ? text : after;
}
