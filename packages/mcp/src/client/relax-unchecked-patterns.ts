import { childSchemas, type SchemaObject, walkSchema } from "./walk-schema.js";

/** Keywords that lead elsewhere in the schema, where an unchecked pattern may be. */
const REFERENCE_KEYWORDS: readonly string[] = ["$ref", "$dynamicRef", "$recursiveRef"];

/**
 * A copy of a schema that refuses nothing its unchecked patterns would let through (H19):
 * what such a pattern accepts is never refused, also where the pattern counts against the
 * input. Each rewrite makes the schema accept more, never less:
 * - a `pattern` left unchecked is dropped;
 * - a `patternProperties` key left unchecked is dropped, and the key `""` (every name) added
 *   with the subschema `true`, so that `additionalProperties` refuses no name it might match;
 * - a `not` whose subschema holds one is dropped (accepting more there would refuse more);
 * - a `oneOf` with one in a branch becomes an `anyOf` (two branches may now both match);
 * - an `if` that holds one is dropped with its `then` and `else`, which become an `anyOf` when
 *   both are given (either may be the one that applied);
 * - a `contains` that holds one loses its `maxContains` (more items may now match).
 *
 * A reference (`$ref`, `$dynamicRef`, `$recursiveRef`) counts as holding one, as it may lead to
 * one. The schema's other keywords are kept, and checked. Nothing recurses: a schema nested
 * thousands deep is walked in a loop.
 *
 * @param schema - The schema as the server listed it; not changed.
 * @param unchecked - The patterns left unchecked (values of `pattern`, `patternProperties` keys).
 */
export function relaxUncheckedPatterns(
  schema: SchemaObject,
  unchecked: ReadonlySet<string>,
): SchemaObject {
  const copy = structuredClone(schema);
  // The schema objects holding an unchecked pattern or a reference, themselves or below them.
  const risky = new Set<SchemaObject>();
  walkSchema(copy, {
    enter: () => true,
    leave: (node) => {
      if (holdsRisk(node, unchecked) || childSchemas(node).some(([, child]) => risky.has(child))) {
        risky.add(node);
      }
    },
  });
  walkSchema(copy, {
    enter: (node) => {
      if (!risky.has(node)) return false;
      relaxNode(node, unchecked, risky);
      return true;
    },
  });
  return copy;
}

function holdsRisk(node: SchemaObject, unchecked: ReadonlySet<string>): boolean {
  if (typeof node.pattern === "string" && unchecked.has(node.pattern)) return true;
  if (REFERENCE_KEYWORDS.some((keyword) => typeof node[keyword] === "string")) return true;
  const keyed = node.patternProperties;
  return isObject(keyed) && Object.keys(keyed).some((key) => unchecked.has(key));
}

/** Rewrites one schema object that holds a risk, as {@link relaxUncheckedPatterns} says. */
function relaxNode(node: SchemaObject, unchecked: ReadonlySet<string>, risky: Set<SchemaObject>) {
  const isRisky = (value: unknown) => isObject(value) && risky.has(value);
  if (typeof node.pattern === "string" && unchecked.has(node.pattern)) delete node.pattern;
  const keyed = node.patternProperties;
  if (isObject(keyed)) {
    const dropped = Object.keys(keyed).filter((key) => unchecked.has(key));
    for (const key of dropped) delete keyed[key];
    if (dropped.length > 0 && !Object.hasOwn(keyed, "")) keyed[""] = true;
  }
  if (isRisky(node.not)) delete node.not;
  const alternatives: SchemaObject[] = [];
  if (Array.isArray(node.oneOf) && node.oneOf.some(isRisky)) {
    alternatives.push({ anyOf: node.oneOf });
    delete node.oneOf;
  }
  if (isRisky(node.if)) {
    if (node.then !== undefined && node.else !== undefined) {
      alternatives.push({ anyOf: [node.then, node.else] });
    }
    delete node.if;
    delete node.then;
    delete node.else;
  }
  if (isRisky(node.contains)) delete node.maxContains;
  if (alternatives.length > 0) {
    // Walked next, as the subschemas of this node: their branches are relaxed in turn.
    for (const alternative of alternatives) risky.add(alternative);
    node.allOf = [...(Array.isArray(node.allOf) ? node.allOf : []), ...alternatives];
  }
}

function isObject(value: unknown): value is SchemaObject {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
