import {
  type SessionAppendOptions,
  type SessionCheckpoint,
  SessionConflictError,
  type SessionEntry,
  SessionFencedError,
  type SessionLoadOptions,
  type SessionSnapshot,
  type SessionStore,
} from "./session-store.js";
import {
  checkAppendOptions,
  checkExpectedVersion,
  checkLoadOptions,
  checkSessionId,
  serializeCheckpoint,
  serializeSessionEntries,
} from "./session-store-arguments.js";

const PREFIX = "memorySessionStore";

/** A session's checkpoint as the store keeps it: its version and its state as JSON text. */
interface KeptCheckpoint {
  readonly version: number;
  readonly text: string;
}

/**
 * A {@link SessionStore} kept in this process's memory: the default store (R11). Sessions
 * last as long as the store object; share one store between agents to share sessions.
 *
 * Entries are kept as JSON text, so the store never shares an object with its callers:
 * changing an entry after `append`, or an entry returned by `load`, changes nothing stored.
 * `append` is atomic and compare-and-append on the session's version (R8), fenced when given
 * a `fence` (H28).
 *
 * It keeps checkpoints (C8, `checkpoints: true`): `saveCheckpoint` keeps the latest one per
 * session (its state as JSON text too, so a checkpoint is a copy both ways), and
 * `load(sessionId, { fromCheckpoint: true })` returns it with only the entries after it.
 * `delete` forgets the checkpoint with the session.
 *
 * @returns A new, empty store. Its methods reject with `InvalidOptionError` (code
 *   `"invalid_option"`) on an empty `sessionId`, an `expectedVersion` that is not a
 *   non-negative integer, an empty `entries` array, or an entry that is not a plain JSON
 *   object, or a `fence` that is not a non-negative integer, a checkpoint whose `version` is
 *   not an integer ≥ 1 or whose `state` is not JSON, or a `fromCheckpoint` that is not a
 *   boolean (`UnknownOptionError` on an unknown load or append option); and `append` rejects
 *   with `SessionFencedError` when its fence is lower than the session's, and with
 *   {@link SessionConflictError} when the session's version is not `expectedVersion`.
 */
export function memorySessionStore(): SessionStore {
  const sessions = new Map<string, string[]>();
  /** The highest fence each session's appends carried (H28). */
  const fences = new Map<string, number>();
  /** The latest checkpoint of each session (C8); never beyond the session's entries. */
  const checkpoints = new Map<string, KeptCheckpoint>();
  return {
    name: "memorySessionStore()",
    fencedAppends: true,
    checkpoints: true,
    async load(sessionId: string, options?: SessionLoadOptions): Promise<SessionSnapshot> {
      const prefix = `${PREFIX} load():`;
      checkSessionId(prefix, sessionId);
      const fromCheckpoint = checkLoadOptions(prefix, options);
      const texts = sessions.get(sessionId);
      if (texts === undefined) return { entries: [], version: 0 };
      const kept = fromCheckpoint ? checkpoints.get(sessionId) : undefined;
      const start = kept?.version ?? 0;
      const entries = new Array<SessionEntry>(texts.length - start);
      for (let index = start; index < texts.length; index++) {
        entries[index - start] = JSON.parse(texts[index]!) as SessionEntry;
      }
      if (kept === undefined) return { entries, version: texts.length };
      const checkpoint: SessionCheckpoint = {
        version: kept.version,
        state: JSON.parse(kept.text) as SessionCheckpoint["state"],
      };
      return { entries, version: texts.length, checkpoint };
    },

    async saveCheckpoint(sessionId: string, checkpoint: SessionCheckpoint) {
      const prefix = `${PREFIX} saveCheckpoint():`;
      checkSessionId(prefix, sessionId);
      const kept = serializeCheckpoint(prefix, checkpoint);
      const version = sessions.get(sessionId)?.length ?? 0;
      if (kept.version > version) return false;
      const current = checkpoints.get(sessionId);
      if (current !== undefined && current.version >= kept.version) return false;
      checkpoints.set(sessionId, kept);
      return true;
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
      checkpoints.delete(sessionId);
      return sessions.delete(sessionId);
    },
  };
}
