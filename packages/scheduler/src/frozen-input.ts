/**
 * Freezes a value and everything reachable from it (plain objects and arrays), in place, so
 * that a callback handed the value cannot change it (H2). Iterative, so depth costs no stack.
 * Class instances other than arrays and plain objects are frozen too, but not walked into.
 *
 * @returns The same value.
 */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== "object" || Object.isFrozen(value)) return value;
  const pending: object[] = [value as object];
  while (pending.length > 0) {
    const next = pending.pop()!;
    Object.freeze(next);
    if (!Array.isArray(next) && Object.getPrototypeOf(next) !== Object.prototype) {
      if (Object.getPrototypeOf(next) !== null) continue;
    }
    for (const key of Object.keys(next)) {
      const child = (next as Record<string, unknown>)[key];
      if (child !== null && typeof child === "object" && !Object.isFrozen(child)) {
        pending.push(child);
      }
    }
  }
  return value;
}

/**
 * A deep-frozen copy of a validated input, for a hook to look at (H2): whatever the hook does
 * to it, the value the handler receives is unchanged. `undefined` when the value cannot be
 * copied (a schema transform produced a function or another value `structuredClone` refuses);
 * the caller then validates the raw input again after the hook.
 */
export function frozenCopy(value: unknown): { readonly value: unknown } | undefined {
  if (value === null || typeof value !== "object") return { value };
  try {
    return { value: deepFreeze(structuredClone(value)) };
  } catch {
    return undefined;
  }
}
