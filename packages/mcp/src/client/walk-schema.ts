/** A schema object: a JSON Schema that is not a boolean. */
export type SchemaObject = Record<string, unknown>;

/** Keywords whose value is one subschema (`items` too in 2020-12, where it is no list). */
const SUBSCHEMA_KEYWORDS: readonly string[] = [
  "not",
  "if",
  "then",
  "else",
  "contains",
  "propertyNames",
  "additionalProperties",
  "unevaluatedProperties",
  "additionalItems",
  "unevaluatedItems",
  "items",
];

/** Keywords whose value is a list of subschemas (`items` too in draft-07 and 2019-09). */
const SUBSCHEMA_LIST_KEYWORDS: readonly string[] = [
  "allOf",
  "anyOf",
  "oneOf",
  "prefixItems",
  "items",
];

/**
 * Keywords whose value maps names to subschemas (`dependencies` of draft-07 maps some names to
 * lists of property names, which are no schemas).
 */
const SUBSCHEMA_MAP_KEYWORDS: readonly string[] = [
  "properties",
  "patternProperties",
  "$defs",
  "definitions",
  "dependentSchemas",
  "dependencies",
];

/**
 * The subschemas of one schema object that are objects (a boolean subschema holds nothing),
 * keyword by keyword: a value under `enum`, `const`, `default` or an unknown keyword is data,
 * never a schema, and is not among them.
 *
 * @param node - A schema object.
 */
export function childSchemas(node: SchemaObject): Array<[keyword: string, child: SchemaObject]> {
  const children: Array<[string, SchemaObject]> = [];
  const add = (keyword: string, value: unknown) => {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      children.push([keyword, value as SchemaObject]);
    }
  };
  for (const keyword of SUBSCHEMA_KEYWORDS) add(keyword, node[keyword]);
  for (const keyword of SUBSCHEMA_LIST_KEYWORDS) {
    const list = node[keyword];
    if (Array.isArray(list)) for (const item of list) add(keyword, item);
  }
  for (const keyword of SUBSCHEMA_MAP_KEYWORDS) {
    const map = node[keyword];
    if (map !== null && typeof map === "object" && !Array.isArray(map)) {
      for (const value of Object.values(map)) add(keyword, value);
    }
  }
  return children;
}

/** What {@link walkSchema} calls for each schema object. */
export interface SchemaVisitor {
  /**
   * Called before the node's subschemas; may change the node (they are read afterwards).
   *
   * @returns Whether to walk the node's subschemas.
   */
  readonly enter: (node: SchemaObject) => boolean;
  /** Called after all of the node's subschemas were walked (left), when they were. */
  readonly leave?: (node: SchemaObject) => void;
}

/**
 * Walks every schema object of a JSON Schema, parents before their subschemas, without
 * recursion: a schema nested thousands deep cannot overflow the stack. The one walker of the
 * client's schema code (its patterns, and what an unchecked pattern relaxes).
 *
 * @param root - The schema.
 * @param visitor - What to do at each schema object.
 */
export function walkSchema(root: SchemaObject, visitor: SchemaVisitor): void {
  const stack: Array<{ readonly node: SchemaObject; readonly leaving: boolean }> = [
    { node: root, leaving: false },
  ];
  const seen = new Set<SchemaObject>();
  while (stack.length > 0) {
    const { node, leaving } = stack.pop() as { node: SchemaObject; leaving: boolean };
    if (leaving) {
      visitor.leave?.(node);
      continue;
    }
    // A schema parsed from JSON is a tree; one built in code may share a subschema.
    if (seen.has(node)) continue;
    seen.add(node);
    if (!visitor.enter(node)) continue;
    stack.push({ node, leaving: true });
    const children = childSchemas(node);
    for (let index = children.length - 1; index >= 0; index--) {
      stack.push({ node: (children[index] as [string, SchemaObject])[1], leaving: false });
    }
  }
}
