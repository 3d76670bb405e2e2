import {
  type SessionAppendOptions,
  SessionConflictError,
  type SessionEntry,
  SessionFencedError,
  type SessionStore,
} from "./session-store.js";
import {
  checkAppendOptions,
  checkExpectedVersion,
  checkSessionId,
  serializeSessionEntries,
} from "./session-store-arguments.js";

const PREFIX = "memorySessionStore";

/**
 * A {@link SessionStore} kept in this process's memory: the default store (R11). Sessions
 * last as long as the store object; share one store between agents to share sessions.
 *
 * Entries are kept as JSON text, so the store never shares an object with its callers:
 * changing an entry after `append`, or an entry returned by `load`, changes nothing stored.
 * `append` is atomic and compare-and-append on the session's version (R8), fenced when given
 * a `fence` (H28).
 *
 * @returns A new, empty store. Its methods reject with `InvalidOptionError` (code
 *   `"invalid_option"`) on an empty `sessionId`, an `expectedVersion` that is not a
 *   non-negative integer, an empty `entries` array, or an entry that is not a plain JSON
 *   object, or a `fence` that is not a non-negative integer; and `append` rejects with
 *   `SessionFencedError` when its fence is lower than the session's, and with
 *   {@link SessionConflictError} when the session's version is not `expectedVersion`.
 */
export function memorySessionStore(): SessionStore {
  const sessions = new Map<string, string[]>();
  /** The highest fence each session's appends carried (H28). */
  const fences = new Map<string, number>();
  return {
    name: "memorySessionStore()",
    fencedAppends: true,
    async load(sessionId: string) {
      checkSessionId(`${PREFIX} load():`, sessionId);
      const texts = sessions.get(sessionId);
      if (texts === undefined) return { entries: [], version: 0 };
      const entries = new Array<SessionEntry>(texts.length);
      for (let index = 0; index < texts.length; index++) {
        entries[index] = JSON.parse(texts[index]!) as SessionEntry;
      }
      return { entries, version: texts.length };
    },

    async append(
      sessionId: string,
      expectedVersion: number,
      entries: readonly SessionEntry[],
      options?: SessionAppendOptions,
    ) {
      const prefix = `${PREFIX} append():`;
      checkSessionId(prefix, sessionId);
      checkExpectedVersion(prefix, expectedVersion);
      const fence = checkAppendOptions(prefix, options);
      const texts = serializeSessionEntries(prefix, entries, fence);
      const highest = fence === undefined ? undefined : fences.get(sessionId);
      if (fence !== undefined && highest !== undefined && fence < highest) {
        throw new SessionFencedError(sessionId, fence, highest);
      }
      const current = sessions.get(sessionId);
      const version = current?.length ?? 0;
      if (version !== expectedVersion) {
        throw new SessionConflictError(sessionId, expectedVersion, version);
      }
      if (fence !== undefined && (highest === undefined || fence > highest)) {
        fences.set(sessionId, fence);
      }
      if (texts.length === 0) return version;
      if (current === undefined) sessions.set(sessionId, texts);
      else for (const text of texts) current.push(text);
      return version + texts.length;
    },

    async list() {
      return [...sessions.keys()].sort();
    },

    async delete(sessionId: string) {
      checkSessionId(`${PREFIX} delete():`, sessionId);
      fences.delete(sessionId);
      return sessions.delete(sessionId);
    },
  };
}
