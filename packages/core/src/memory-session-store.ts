import { SessionConflictError, type SessionEntry, type SessionStore } from "./session-store.js";
import {
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
 * `append` is atomic and compare-and-append on the session's version (R8).
 *
 * @returns A new, empty store. Its methods reject with `InvalidOptionError` (code
 *   `"invalid_option"`) on an empty `sessionId`, an `expectedVersion` that is not a
 *   non-negative integer, an empty `entries` array, or an entry that is not a plain JSON
 *   object; and `append` rejects with {@link SessionConflictError} when the session's version
 *   is not `expectedVersion`.
 */
export function memorySessionStore(): SessionStore {
  const sessions = new Map<string, string[]>();
  return {
    name: "memorySessionStore()",
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

    async append(sessionId: string, expectedVersion: number, entries: readonly SessionEntry[]) {
      const prefix = `${PREFIX} append():`;
      checkSessionId(prefix, sessionId);
      checkExpectedVersion(prefix, expectedVersion);
      const texts = serializeSessionEntries(prefix, entries);
      const current = sessions.get(sessionId);
      const version = current?.length ?? 0;
      if (version !== expectedVersion) {
        throw new SessionConflictError(sessionId, expectedVersion, version);
      }
      if (current === undefined) sessions.set(sessionId, texts);
      else for (const text of texts) current.push(text);
      return version + texts.length;
    },

    async list() {
      return [...sessions.keys()].sort();
    },

    async delete(sessionId: string) {
      checkSessionId(`${PREFIX} delete():`, sessionId);
      return sessions.delete(sessionId);
    },
  };
}
