import type { FuncKeywordDefinition } from "ajv";

/**
 * The `uniqueItems` keyword, checked in time linear in the array's size (H19): each item's
 * canonical JSON (object keys sorted) goes into a set. Ajv's own check compares every pair of
 * items, so 20,000 items held the event loop for seconds. Equality is JSON Schema's, as Ajv's:
 * same type and value, arrays item by item, objects key by key in any order.
 */
export const uniqueItemsKeyword: FuncKeywordDefinition = {
  keyword: "uniqueItems",
  type: "array",
  schemaType: "boolean",
  errors: true,
  validate: function uniqueItems(unique: boolean, items: readonly unknown[]): boolean {
    const validate = uniqueItems as typeof uniqueItems & { errors?: unknown[] };
    validate.errors = [];
    if (!unique) return true;
    const seen = new Map<string, number>();
    for (let index = 0; index < items.length; index++) {
      const key = canonicalJson(items[index]);
      const first = seen.get(key);
      if (first !== undefined) {
        // Ajv's own wording and parameters.
        validate.errors = [
          {
            keyword: "uniqueItems",
            message: `must NOT have duplicate items (items ## ${index} and ${first} are identical)`,
            params: { i: index, j: first },
          },
        ];
        return false;
      }
      seen.set(key, index);
    }
    return true;
  },
};

/** JSON with object keys sorted: equal for two values JSON Schema calls equal. */
function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value) ?? "null";
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonicalJson(record[key])}`).join(",")}}`;
}
