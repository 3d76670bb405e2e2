// Ids for runs, sessions, mailbox messages and approvals.
//
// Two costs are kept out of the agent's way here:
// - `node:crypto` is loaded when the first id is made, not when `@lattice/core` is imported
//   (its internals are compiled on first load: several milliseconds of a cold start that a
//   process which never runs an agent need not pay).
// - `crypto.randomUUID()` builds its string by concatenation, which V8 keeps as a tree of
//   ~20 pieces (~480 bytes on the heap instead of ~60). An id lives as long as its run, and
//   thousands of runs may wait on a model at once, so each id is flattened once when made.
//   `toLowerCase()` does that without changing it (a UUID is lower-case already).

import type * as NodeCrypto from "node:crypto";

let crypto: typeof NodeCrypto | undefined;

function nodeCrypto(): typeof NodeCrypto {
  crypto ??= process.getBuiltinModule("node:crypto");
  return crypto;
}

/** A random UUID (v4) as one flat string. */
export function randomId(): string {
  return nodeCrypto().randomUUID().toLowerCase();
}

/** `prefix` and a random UUID, as one flat string (`prefix` must be lower-case). */
export function prefixedRandomId(prefix: string): string {
  return `${prefix}${nodeCrypto().randomUUID()}`.toLowerCase();
}

/** `byteCount` random bytes in base64url (for ids that are also secrets, such as approvals). */
export function randomToken(byteCount: number): string {
  return nodeCrypto().randomBytes(byteCount).toString("base64url");
}
