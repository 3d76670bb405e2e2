import type { JsonValue } from "./session-store.js";

/** An error's message, or the thrown value as text. Internal. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** A value as the run log keeps it: what a JSON round trip gives back. Internal. */
export function toJson(value: unknown): JsonValue {
  const text = JSON.stringify(value);
  return text === undefined ? null : (JSON.parse(text) as JsonValue);
}
